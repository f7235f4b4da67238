#!/usr/bin/env python3
"""Makes a stub library export exactly what the library it stands in for exports. One generator
for every library, driven by the library's descriptor and its real headers.

usage: gen_exports.py DESCRIPTOR OUT_DIR --cxx COMPILER --include DIR [--include DIR...] --nm NM
                      [--reference LIB] [--refresh-target TARGET] [--depfile FILE] OBJECT...

The export list is read when the stub is built: from the reference library LIB (`nm -D
--defined-only`; NVIDIA's libcudart.so.13 for cudart), so a new toolkit never leaves an application
with an undefined symbol, or, for a library of our own with no original, from its headers. What the
stub implements is found in its compiled OBJECTs (`nm`), never listed by hand. cmake/
GvirtusStubExports.cmake runs this between compiling a stub's objects and linking it.

DESCRIPTOR is the library's JSON descriptor (gen_calls.py documents its other fields); this reads
"library", "headers", "status": {"type"} and the "exports" object:
  reference         "library": the exports are those of the library given with --reference;
                    "headers": every extern "C" function that the descriptor's "headers"
                    themselves declare (not what they include), for a library of our own;
                    type_headers must include them (as the default does)
  version_node      the version node every export is put under ("libcudart.so.13"); for
                    "headers", none leaves the exports unversioned as the original's are
                    (NVIDIA's libnvidia-ml.so.1); for "library" it must be the reference's one
                    node if given;
                    a reference whose exports are unversioned (NVIDIA's libcuda.so.1) makes a
                    version script without a node (exports unversioned too)
  vendor            who makes the reference library ("NVIDIA"), for the generated text; required
                    for "library"
  type_headers      the headers whose declarations give each export's return type, wider than
                    "headers" where the library exports more than its API headers declare
                    (default: "headers"). For cudart, crt/host_runtime.h is named twice, as nvcc's
                    generated code includes it: its first inclusion only sets up, the second
                    declares __cudaRegisterVar and its kin
  headers_name      what the generated text calls those headers ("CUDA"; default: "library")
  stand_in_includes headers that type_headers include but that a build machine may lack
                    ("GL/gl.h"); empty files stand in for them: no return type needs them
  struct_types_include
                    a header that defines the structs exports return, declaring no function
                    (their prototypes would clash with the definitions); required only when a
                    missing export returns a struct
  not_supported     {"function", "include", "returns", "value"}: what a missing export calls,
                    `RETURNS FUNCTION(const char* name, std::atomic<bool>& logged)` from the header
                    INCLUDE, which logs NAME once and returns VALUE, the status "not supported";
                    RETURNS must have the status type's size and representation (a C enum's is
                    int's), as a missing export returning the status returns it
  local_calls       optional, relative to the descriptor: the exports that the stub answers
                    itself, one name a line, then why ('#' comments); each must be implemented
  unsupported_reasons
                    optional, relative to the descriptor: why the exports the stub lacks are not
                    supported. "[LABEL] TEXT" starts a reason, shell globs of export names follow
                    it ('#' comments); the coverage list names each not-supported export's first
                    matching reason, and every not-supported export must match one
  coverage_title    the title of the coverage list
  per_thread        optional {"stream": TYPE, "per_thread_stream": VALUE, "synchronize": FUNCTION,
                    "asynchronous": [PREFIX...]}: the per-thread default stream variants of what
                    the stub implements are made from it, not left unsupported. NAME_ptsz calls
                    NAME with each TYPE argument that is null replaced by VALUE (the caller's
                    default stream is its thread's); NAME_ptds (no stream argument) calls NAME's
                    asynchronous form (NAME with "Async" before its _v2, or after it) on VALUE,
                    then FUNCTION(VALUE) to wait, as the legacy form waits, unless NAME starts
                    with one of the PREFIXes (memsets, asynchronous with respect to the host
                    natively)

Each missing function returns its declared type: the status type (also when spelled through a
typedef) returns what not_supported returns; void, a pointer (null), an integer (not_supported's
value cast) and a struct (zeroed) have their rules; any other type stops the generator. A
per-thread-stream variant (NAME_ptds, NAME_ptsz) takes the type of NAME. A reference export that
no header declares is assumed to return the status type, and said so.

Writes into OUT_DIR, for library L (cmake/GvirtusStubExports.cmake names the same files):
  L_not_supported.cpp  a "not supported" definition of every export the objects lack
  L_per_thread.cpp     the per-thread default stream variants made from what they have
                       (per_thread); they count as their base function does
  libL.map             the version script: every export under its node, nothing else
  L-coverage.md        every export as remote / local / not supported, with counts; TARGET is the
                       build target that copies it to the committed copy
and with --depfile, FILE: every file read, for the build to rerun this when one changes.
Files are rewritten only when their content changes, so builds stay incremental.
"""
import fnmatch
import os
import re
import subprocess
import sys

from gen_common import Descriptor, arguments, write_if_changed
from header_signatures import declarations

SCRIPT = "tools/gen/gen_exports.py"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Per-thread-stream variants (cudaMemcpy_ptds, ...) are declared under the plain name and a macro.
PER_THREAD = re.compile(r"_(?:ptds|ptsz)$")
INTEGER_WORDS = {"char", "short", "int", "long", "signed", "unsigned"}


class Exports:
    """The descriptor's "exports" object (see the module's documentation), checked."""

    def __init__(self, d):
        self.path = d.path
        raw = d.exports
        if not isinstance(raw, dict):
            self.fail("exports", 'is missing (an object: {"reference": ..., ...})')
        self.raw = raw
        self.reference = self.text("reference")
        if self.reference not in ("library", "headers"):
            self.fail("exports.reference", f'is "{self.reference}", not "library" or "headers"')
        self.version_node = self.text("version_node", required=False)
        self.vendor = self.text("vendor", required=self.reference == "library")
        self.type_headers = self.texts("type_headers", d.headers)
        self.headers_name = self.text("headers_name", required=False) or d.library
        self.stand_ins = self.texts("stand_in_includes", [])
        self.struct_types_include = self.text("struct_types_include", required=False)
        not_supported = raw.get("not_supported")
        if not isinstance(not_supported, dict):
            self.fail("exports.not_supported",
                      'is missing (an object: {"function", "include", "returns", "value"})')
        self.function, self.include, self.returns, self.value = (
            self.text(key, within=not_supported, prefix="exports.not_supported.")
            for key in ("function", "include", "returns", "value"))
        local = self.text("local_calls", required=False)
        self.local_calls = d.relative(local) if local else None
        reasons = self.text("unsupported_reasons", required=False)
        self.unsupported_reasons = d.relative(reasons) if reasons else None
        self.coverage_title = self.text("coverage_title")
        per_thread = raw.get("per_thread")
        self.per_thread = None
        if per_thread is not None:
            if not isinstance(per_thread, dict):
                self.fail("exports.per_thread", "is not an object")
            self.per_thread = {key: self.text(key, within=per_thread, prefix="exports.per_thread.")
                               for key in ("stream", "per_thread_stream", "synchronize")}
            self.per_thread["asynchronous"] = list(per_thread.get("asynchronous", []))

    def fail(self, field, problem):
        sys.exit(f"{self.path}: {field} {problem}")

    def text(self, key, required=True, within=None, prefix="exports."):
        value = (self.raw if within is None else within).get(key)
        if value is None and not required:
            return None
        if not isinstance(value, str) or not value:
            self.fail(prefix + key, "is missing" if value is None else "must be a string")
        return value

    def texts(self, key, default):
        value = self.raw.get(key, default)
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            self.fail("exports." + key, "must be a list of strings")
        return value


def run(*args):
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def reference_exports(nm, lib):
    """{name: (kind, size)} of LIB's defined dynamic symbols, and their one version node, or None
    when no export is versioned (NVIDIA's libcuda.so.1)."""
    exports, nodes = {}, set()
    for line in run(nm, "-D", "--defined-only", "-S", lib).splitlines():
        fields = line.split()
        kind, symbol = fields[-2], fields[-1]
        if kind == "A":
            continue  # the version node itself, which the version script recreates
        name, _, node = symbol.partition("@@")
        if "@" in name:
            sys.exit(f"{lib}: {symbol} is not a default-versioned export; the map cannot say so")
        nodes.add(node or None)
        size = int(fields[1], 16) if len(fields) == 4 else 0
        exports[name] = ("function" if kind in "TtWwi" else "data", size)
    if len(nodes) != 1:
        sys.exit(f"{lib}: expected its exports all versioned under one node or all unversioned, "
                 f"found {sorted(str(n) for n in nodes)}")
    return exports, nodes.pop()


def declared_exports(functions, headers, path):
    """{name: ("function", 0)} of every C symbol that HEADERS themselves declare."""
    exports = {name: ("function", 0) for name, sig in functions.items()
               if sig.c_symbol and any(sig.file == h or sig.file.endswith("/" + h) for h in headers)}
    if not exports:
        sys.exit(f"{path}: headers {headers} declare no extern \"C\" function to export (are they "
                 "among exports.type_headers?)")
    return exports


def implemented(nm, objects):
    names = set()
    for line in run(nm, "--defined-only", "-g", *objects).splitlines():
        fields = line.split()
        if len(fields) == 3:
            names.add(fields[2])
    return names


def read_local(path):
    names = []
    for line in open(path):
        line = line.split("#", 1)[0].strip()
        if line:
            names.append(line.split()[0])
    return names


def read_reasons(path):
    """[(label, text, [glob...])] in the file's order."""
    reasons = []
    for number, line in enumerate(open(path), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("["):
            label, _, text = line[1:].partition("]")
            if not label or not text.strip():
                sys.exit(f"{path}:{number}: expected \"[LABEL] TEXT\"")
            reasons.append((label, text.strip(), []))
        elif not reasons:
            sys.exit(f"{path}:{number}: a pattern before any \"[LABEL] TEXT\"")
        else:
            reasons[-1][2].append(line)
    return reasons


def reason_of(name, reasons):
    return next((label for label, _, globs in reasons
                 if any(fnmatch.fnmatchcase(name, g) for g in globs)), None)


class Definitions:
    """The "not supported" definitions of missing functions, by their declared return types."""

    def __init__(self, spec, status, typedefs):
        self.spec, self.typedefs = spec, typedefs
        self.status = self.resolved(status)
        self.needs_struct_types = False  # a definition returns a struct

    def resolved(self, ctype):
        """CTYPE with its typedefs followed: "cudaError_t" -> "enum cudaError"."""
        seen = set()
        while ctype in self.typedefs and ctype not in seen:
            seen.add(ctype)
            ctype = self.typedefs[ctype]
        return ctype

    def function(self, name, ret, where):
        """The definition of function NAME, declared in WHERE as returning RET."""
        head = 'extern "C" __attribute__((visibility("default")))'
        call = f'{self.spec.function}("{name}", logged)'
        body = "static std::atomic<bool> logged;"
        real = self.resolved(ret)
        if real == self.status:
            return f"{head} {self.spec.returns} {name}() {{ {body} return {call}; }}"
        if real == "void":
            return f"{head} void {name}() {{ {body} {call}; }}"
        if real.endswith("*"):
            return f"{head} void* {name}() {{ {body} {call}; return nullptr; }}"
        if set(real.split()) <= INTEGER_WORDS:
            # The library's typedef names are not declared here; the type they name is.
            return f"{head} {real} {name}() {{ {body} return static_cast<{real}>({call}); }}"
        if real.startswith(("struct ", "union ")):
            # Returned in memory or registers by its layout, which only its definition gives.
            if not self.spec.struct_types_include:
                self.spec.fail("exports.struct_types_include",
                               f"is missing, and {name} ({where}) returns '{ret}'")
            self.needs_struct_types = True
            return f"{head} {ret} {name}() {{ {body} {call}; return {{}}; }}"
        sys.exit(f"{name} ({where}) returns '{ret}', for which {SCRIPT} has no rule (its rules: "
                 f"status.type of {self.spec.path}, void, pointers, integers, structs)")

    @staticmethod
    def data(name, size):
        # Braces make it a definition; zeroed bytes of the reference's size, as nothing fills them.
        return (f'extern "C" {{ __attribute__((visibility("default"), aligned(16))) '
                f"unsigned char {name}[{max(size, 1)}]; }}")


def not_supported_tu(d, spec, node, exports, missing, decls):
    types = {n: s.returns for n, s in decls.functions.items()}
    types.update({n: types[PER_THREAD.sub("", n)] for n in exports
                  if n not in types and PER_THREAD.sub("", n) in types})
    undeclared = [n for n in missing if exports[n][0] == "function" and n not in types]
    if undeclared:
        print(f"gen_exports: {d.library}: no declaration found, assumed to return {d.status}: "
              + " ".join(undeclared))
    make = Definitions(spec, d.status, decls.typedefs)
    where = {n: s.file for n, s in decls.functions.items()}
    body = [make.data(n, exports[n][1]) if exports[n][0] == "data" else
            make.function(n, types.get(n, d.status),
                          where.get(n) or where.get(PER_THREAD.sub("", n), "undeclared"))
            for n in missing]
    what = (f"{spec.vendor} {node} export" if spec.reference == "library"
            else f"function of {', '.join(d.headers)}")
    out = [f"// Generated by {SCRIPT}. Do not edit.",
           f"// Every {what} the stub's sources do not implement. No",
           f"// prototypes: {d.headers[0]}'s would clash with these parameterless definitions.",
           "#include <atomic>"]
    if make.needs_struct_types:
        # Types only, no function declarations: gives returned structs their exact layout.
        out.append(f"#include <{spec.struct_types_include}>")
    out += ["", f'#include "{spec.include}"']
    if undeclared:
        out += ["", f"// No declaration in the {spec.headers_name} headers, so assumed to return "
                f"{d.status}:"]
        out += [f"//   {n}" for n in undeclared]
    return "\n".join(out + [""] + body) + "\n"


def async_forms(name):
    """The names NAME's asynchronous form may have: cuMemcpyHtoD_v2 -> cuMemcpyHtoDAsync_v2,
    cuMemsetD8_v2 -> cuMemsetD8Async, cudaMemcpy -> cudaMemcpyAsync. An unaligned 2D copy has
    none of its own: it takes the 2D copy's (cuMemcpy2DUnaligned_v2 -> cuMemcpy2DAsync_v2), which
    keeps the driver's limit on pitches that the unaligned form lifts."""
    stem, v2 = (name[:-3], "_v2") if name.endswith("_v2") else (name, "")
    forms = [stem + "Async" + v2, stem + "Async"]
    if "Unaligned" in stem:
        aligned = stem.replace("Unaligned", "")
        forms += [aligned + "Async" + v2, aligned + "Async"]
    return forms


def per_thread_variants(d, spec, decls, missing, have):
    """{export: (base, C++ definition)} of the per-thread default stream variants that can be made
    from what the stub implements (spec.per_thread)."""
    if spec.per_thread is None:
        return {}
    pt = spec.per_thread
    stream, value, sync = pt["stream"], pt["per_thread_stream"], pt["synchronize"]
    made = {}
    for name in missing:
        if not PER_THREAD.search(name):
            continue
        base = PER_THREAD.sub("", name)
        signature = decls.functions.get(base)
        if base not in have or signature is None:
            continue
        params = ", ".join(f"{p.ctype} {p.name}" for p in signature.params)
        head = f'extern "C" __attribute__((visibility("default"))) {signature.returns} {name}({params}) {{'
        if name.endswith("_ptsz"):
            if not any(p.ctype == stream for p in signature.params):
                continue
            args = ", ".join(f"{p.name} == nullptr ? {value} : {p.name}" if p.ctype == stream
                             else p.name for p in signature.params)
            made[name] = (base, f"{head}\n  return {base}({args});\n}}\n")
            continue
        # _ptds: the asynchronous form on the thread's stream, waited for.
        if sync not in have:
            continue
        for async_name in async_forms(base):
            form = decls.functions.get(async_name)
            if async_name not in have or form is None:
                continue
            if [p.ctype for p in form.params] != [p.ctype for p in signature.params] + [stream]:
                continue
            args = ", ".join([p.name for p in signature.params] + [value])
            if any(base.startswith(prefix) for prefix in pt["asynchronous"]):
                body = f"  return {async_name}({args});"
            else:
                body = (f"  const auto result = {async_name}({args});\n"
                        f"  if (result != {d.success}) return result;\n"
                        f"  return {sync}({value});")
            made[name] = (base, f"{head}\n{body}\n}}\n")
            break
    return made


def per_thread_tu(d, made):
    out = [f"// Generated by {SCRIPT}. Do not edit.",
           "// The per-thread default stream variants of what the stub implements (the descriptor's",
           "// exports.per_thread): a null stream is the calling thread's default stream.",
           "// Deprecated functions are served too: the vendor's library still exports them.",
           '#pragma GCC diagnostic ignored "-Wdeprecated-declarations"']
    out += [f"#include <{h}>" for h in d.headers]
    out += [""] + [made[n][1] for n in sorted(made)]
    return "\n".join(out) + "\n"


def coverage(d, spec, node, exports, kinds, refresh_target, reasons=()):
    counts = {k: sum(1 for v in kinds.values() if v == k) for k in ("remote", "local", "not supported")}
    source = (f"{spec.vendor}'s `{node}`" if spec.reference == "library"
              else ", ".join(f"`{h}`" for h in d.headers))
    refresh = f"; refresh with `cmake --build BUILD --target {refresh_target}`" if refresh_target else ""
    local = (f" (`{os.path.relpath(spec.local_calls, ROOT)}`)" if spec.local_calls else "")
    out = [f"# {spec.coverage_title}", "",
           f"Generated by `{SCRIPT}` from {source} and the", f"stub's objects{refresh}.",
           "", "- remote: executed by the backend on the real runtime",
           f"- local: answered by the stub itself{local}",
           f"- not supported: returns `{spec.value}` and logs its name once", "",
           f"{len(exports)} exports: " + ", ".join(f"{n} {k}" for k, n in counts.items()) + ".", "",
           "| export | status |", "| --- | --- |"]
    why = {n: reason_of(n, reasons) for n, k in kinds.items() if k == "not supported"} if reasons else {}
    out += [f"| `{name}` | {kinds[name]}{': ' + why[name] if why.get(name) else ''} |"
            for name in sorted(exports)]
    if reasons:
        out += ["", "## Why not supported", "",
                f"Each not-supported export above names its reason (`{os.path.relpath(spec.unsupported_reasons, ROOT)}`):", "",
                "| reason | exports | why |", "| --- | --- | --- |"]
        out += [f"| {label} | {sum(1 for r in why.values() if r == label)} | {text} |"
                for label, text, _ in reasons]
    return "\n".join(out) + "\n"


def main():
    parser = arguments(__doc__)
    parser.add_argument("--nm", required=True)
    parser.add_argument("--reference")
    parser.add_argument("--refresh-target")
    parser.add_argument("--depfile")
    parser.add_argument("objects", nargs="+")
    args = parser.parse_args()
    d = Descriptor(args.descriptor)
    spec = Exports(d)

    decls = declarations(spec.type_headers, args.include, args.cxx, spec.stand_ins, d.defines)
    if spec.reference == "library":
        if not args.reference:
            sys.exit(f'{d.path}: exports.reference is "library": give the library with --reference')
        exports, node = reference_exports(args.nm, args.reference)
        if spec.version_node not in (None, node):
            spec.fail("exports.version_node",
                      f'is "{spec.version_node}", but {args.reference} exports under "{node}"')
    else:
        if args.reference:
            sys.exit(f'{d.path}: exports.reference is "headers": --reference has no use')
        exports, node = declared_exports(decls.functions, d.headers, d.path), spec.version_node
    have = implemented(args.nm, args.objects) & exports.keys()
    local = read_local(spec.local_calls) if spec.local_calls else []
    if unknown := [n for n in local if n not in have]:
        sys.exit(f"{spec.local_calls}: listed as local but not implemented by the stub: {unknown}")
    missing = sorted(exports.keys() - have)
    made = per_thread_variants(d, spec, decls, missing, have)
    missing = [n for n in missing if n not in made]

    reasons = read_reasons(spec.unsupported_reasons) if spec.unsupported_reasons else []
    if reasons and (unexplained := [n for n in missing if reason_of(n, reasons) is None]):
        sys.exit(f"{spec.unsupported_reasons}: no reason for these exports the stub does not "
                 f"support: {unexplained}")
    kinds = {n: "not supported" for n in missing}
    kinds.update({n: "local" if n in local else "remote" for n in have})
    kinds.update({n: kinds[base] for n, (base, _) in made.items()})
    lib = d.library
    os.makedirs(args.out_dir, exist_ok=True)
    outputs = [os.path.join(args.out_dir, name)
               for name in (f"{lib}_not_supported.cpp", f"lib{lib}.map", f"{lib}-coverage.md",
                            f"{lib}_per_thread.cpp")]
    write_if_changed(outputs[3], per_thread_tu(d, made))
    # What the texts call the reference: its version node, or its file for unversioned exports.
    named = node or (os.path.basename(args.reference) if args.reference else lib)
    write_if_changed(outputs[0], not_supported_tu(d, spec, named, exports, missing, decls))
    names = "".join(f"    {n};\n" for n in sorted(exports))
    # Unversioned exports (a reference without version nodes) get an anonymous version script.
    write_if_changed(outputs[1], f"{node + ' ' if node else ''}{{\n  global:\n{names}  local: *;\n}};\n")
    write_if_changed(outputs[2], coverage(d, spec, named, exports, kinds, args.refresh_target,
                                          reasons))
    if args.depfile:
        read = ([d.path] + ([spec.local_calls] if spec.local_calls else []) +
                ([spec.unsupported_reasons] if spec.unsupported_reasons else []) + decls.files)
        write_if_changed(args.depfile, f"{outputs[0]}: " +
                         " ".join(os.path.abspath(f).replace(" ", "\\ ") for f in read) + "\n")


if __name__ == "__main__":
    main()
