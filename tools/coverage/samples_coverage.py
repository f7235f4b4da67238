#!/usr/bin/env python3
"""How many of NVIDIA's cuda-samples the CUDA runtime stub serves fully, per coverage file.

usage: samples_coverage.py CUDA_SAMPLES COVERAGE.md [COVERAGE.md...] [--json OUT] [--list]
                           [--implicit]

CUDA_SAMPLES is a checkout of github.com/NVIDIA/cuda-samples (its Samples/ and Common/ folders);
each COVERAGE.md is a coverage list like docs/cudart-coverage.md: a markdown table whose rows read
| `NAME` | remote | (or local, or not supported), one row per export of libcudart.so.13. Nothing
is compiled: the samples' sources are read as text. Standard library only.

Method
------
Sample: each directory under Samples/ holding a .cu or .cpp file that defines main() (found after
  comments and string literals are blanked, so GLSL `void main()` in a string does not count). A
  main() in a folder named src counts for the folder above it (the MC_* samples and FDTD3d keep
  their sources in src/ and inc/). A sample's sources are the .cu .cpp .c .cc .cxx .h .hpp .cuh
  .inl files anywhere under its directory. Each is read as code: comments and string literals
  blanked, and the branches of #if/#elif/#else that CUDA 13 on Linux never compiles blanked too
  (#if 0, #if CUDART_VERSION < 5000, #ifdef _WIN32...; a condition naming any other macro keeps
  its branch).
Helper headers: every `#include "X"` or `#include <X>` in a sample's sources that is not a file of
  the sample but is Common/X (or Common/<basename of X>) is read as well, one level deep (what a
  helper header includes in turn is not followed; helper .cpp files that CMake compiles in, such
  as Common/helper_multiprocess.cpp, are not read either).
Kinds of sample, decided on the sample's own sources (comments and strings blanked), not on the
  helper headers (helper_cuda.h calls cuGetErrorName under #ifdef for driver-API users):
  driver   calls the driver API: `\\bcu[A-Z]\\w*\\s*(` (cuModuleLoad, cuCtxCreate...), leaving out the
           cuComplex.h inlines (cuCaddf, cuCmulf, cuCrealf...), cuFile (a library) and
           functions the sample defines itself (cuGet in the cuSolver samples);
  library  calls no driver API but a CUDA library's host API: cublas, cublasLt, cufft, curand
           (curandCreateGenerator...; the header-only device API curand_init/curand_uniform does
           not count), cusparse, cusolver, nvrtc, nvjpeg, npp, nvvm, nvJitLink, cudla, cuFile,
           cutensor, cudnn, nvml, followed by an upper-case letter and then `(`;
  runtime-only  neither. Only these are counted as served or not.
Runtime functions a sample uses: the identifiers `\\bcuda[A-Z]\\w*\\b` in its own sources that are
  names in the coverage table (so types and enumerators such as cudaError_t or cudaMemcpyHostToDevice
  are not counted); in the helper headers only such identifiers followed by `(` (helper_cuda.h
  names many functions in error-string tables and switches). The runtime's C++ wrappers in
  cuda_runtime.h mostly carry the exported function's own name (cudaMallocManaged<T>,
  cudaCreateChannelDesc<T>, cudaLaunchKernel<T>), so counting the identifier is right for them.
  The five wrappers whose names are not exported at all (CUDA 13's cuda_runtime.h) are replaced by
  the exports their inline bodies call: cudaLaunchKernelEx -> cudaLaunchKernelExC, and
  cudaOccupancyMaxPotentialBlockSize[VariableSMem][WithFlags] -> cudaGetDevice,
  cudaDeviceGetAttribute, cudaFuncGetAttributes, cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags.
  Overloads that keep an exported name but call another export (cudaMallocHost(ptr, size, flags)
  -> cudaHostAlloc, cudaMallocAsync(ptr, size, pool, stream) -> cudaMallocFromPoolAsync) are
  counted under the name written.
Fully served: every runtime function the sample uses is remote or local in that coverage file.
--implicit also counts what nvcc's generated code imports without the source naming it, from the
  coverage table's own rows: __cudaRegisterFatBinary, __cudaRegisterFatBinaryEnd,
  __cudaUnregisterFatBinary, __cudaRegisterFunction for any .cu file; __cudaPushCallConfiguration,
  __cudaPopCallConfiguration, __cudaLaunchKernel for a `<<<` launch; __cudaRegisterVar for
  __device__/__constant__ variables; __cudaRegisterManagedVar for __managed__ ones. Off by default.

Not seen: runtime calls made inside headers outside Common/ (Thrust and CUB in radixSortThrust,
  segmentationTreeThrust); Windows-only functions the Linux table lacks (cudaD3D11GetDevice) are
  ignored like any other non-export, so the Windows samples are judged on their other calls; a
  main() in a .c file (most 7_libNVVM samples) or a WinMain (simpleD3D12) makes no sample, so
  a checkout with 199 sample projects (CMakeLists.txt folders) gives 192 samples here.

Output: per coverage file, the counts of samples (all, driver, library, runtime-only), how many
runtime-only samples are fully served, and the 20 functions not remote or local that the most
runtime-only samples use; --json OUT writes the same (plus every missing function and the samples
each one blocks) as JSON; --list prints the names of the fully served samples.
"""

import argparse
import collections
import json
import os
import re
import sys

SOURCE_EXTENSIONS = (".cu", ".cpp", ".c", ".cc", ".cxx", ".h", ".hpp", ".cuh", ".inl")
MAIN_EXTENSIONS = (".cu", ".cpp")
SERVED = ("remote", "local")

# A row's status; "not supported" may carry its reason ("not supported: managed memory").
ROW = re.compile(r"^\|\s*`([^`]+)`\s*\|\s*(remote|local|not supported)(?::[^|]*)?\s*\|\s*$")
INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*(?:"([^"\n]+)"|<([^>\n]+)>)', re.M)
MAIN = re.compile(r"\b(?:int|void)\s+main\s*\(")
RUNTIME_NAME = re.compile(r"\bcuda[A-Z]\w*\b")
RUNTIME_CALL = re.compile(r"\b(cuda[A-Z]\w*)\s*(?:<[^;(){}]*>\s*)?\(")
DRIVER_CALL = re.compile(r"\b(cu[A-Z]\w*)\s*\(")
NOT_DRIVER = re.compile(
    r"cuC(?:real|imag|add|sub|mul|div|abs|onj|fma)f?$|cuComplex\w*$|cuFloatComplex$"
    r"|cuDoubleComplex$|cuFile\w*$"
)
# A function the sample defines itself (cuGet, cuRand in the cuSolver and batchCUBLAS samples).
DEFINITION = re.compile(r"\b(cu[A-Z]\w*)\s*(?:<[^;(){}]*>)?\s*\([^;{()]*\)\s*(?:const\s*)?\{")
LIBRARY_CALL = re.compile(
    r"\b((?:cublasLt|cublasXt|cublas|cufft|curand|cusparseLt|cusparse|cusolver|nvrtc|nvjpeg"
    r"|npp[a-z]?|nvvm|nvJitLink|cudla|cuFile|cutensor|cudnn|nvml)[A-Z]\w*)\s*\("
)
# cuda_runtime.h's inline C++ wrappers whose own names libcudart.so.13 does not export: the
# exports their bodies call.
_POTENTIAL_BLOCK_SIZE = (
    "cudaGetDevice",
    "cudaDeviceGetAttribute",
    "cudaFuncGetAttributes",
    "cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
)
HEADER_WRAPPERS = {
    "cudaLaunchKernelEx": ("cudaLaunchKernelExC",),
    "cudaOccupancyMaxPotentialBlockSize": _POTENTIAL_BLOCK_SIZE,
    "cudaOccupancyMaxPotentialBlockSizeWithFlags": _POTENTIAL_BLOCK_SIZE,
    "cudaOccupancyMaxPotentialBlockSizeVariableSMem": _POTENTIAL_BLOCK_SIZE,
    "cudaOccupancyMaxPotentialBlockSizeVariableSMemWithFlags": _POTENTIAL_BLOCK_SIZE,
}
IMPLICIT_MODULE = (
    "__cudaRegisterFatBinary",
    "__cudaRegisterFatBinaryEnd",
    "__cudaUnregisterFatBinary",
    "__cudaRegisterFunction",
)
IMPLICIT_LAUNCH = ("__cudaPushCallConfiguration", "__cudaPopCallConfiguration", "__cudaLaunchKernel")
DEVICE_VARIABLE = re.compile(r"\b__(?:device|constant)__\b(?![^;{(]*\()")
MANAGED_VARIABLE = re.compile(r"\b__managed__\b")


RAW_STRING = re.compile(r'R"([^ ()\\\t\n]{0,16})\(')


def blank_comments_and_strings(text):
    """The text with comments, string literals and character literals replaced by spaces
    (newlines kept), so that what is left is code."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "/" and text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" ")
            i = j
        elif c == "/" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "R" and text.startswith('R"', i) and not (i and re.match(r"\w", text[i - 1])):
            m = RAW_STRING.match(text, i)
            if not m:
                out.append(c)
                i += 1
                continue
            end = text.find(")" + m.group(1) + '"', m.end())
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append('""' + re.sub(r"[^\n]", " ", text[i:j])[2:])
            i = j
        elif c == '"' or (c == "'" and not (i > 0 and text[i - 1].isalnum())):
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + " " * max(0, j - i - 2) + c)
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


# #if/#elif/#ifdef/#ifndef conditions this reader decides: the toolkit is CUDA 13 on Linux.
KNOWN_MACROS = {"CUDART_VERSION": 13000, "CUDA_VERSION": 13000}
UNDEFINED_MACROS = {"WIN32", "_WIN32", "WIN64", "_WIN64", "_MSC_VER", "__APPLE__", "__MACOSX__",
                    "__QNX__", "__MINGW32__", "__CYGWIN__"}
DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif)\b(.*)$")


def condition_value(expr):
    """True or False for a condition made only of numbers, CUDART_VERSION/CUDA_VERSION and
    defined() of a Windows or macOS macro; None for anything else."""
    expr = re.sub(r"\bdefined\s*\(\s*(\w+)\s*\)|\bdefined\s+(\w+)",
                  lambda m: "0" if (m.group(1) or m.group(2)) in UNDEFINED_MACROS else "?", expr)
    expr = re.sub(r"\b[A-Za-z_]\w*\b", lambda m: str(KNOWN_MACROS.get(m.group(0), "?")), expr)
    expr = re.sub(r"(\d+)[uUlL]+\b", r"\1", expr)
    if "?" in expr or not re.fullmatch(r"[\d\s()<>=!&|+\-*/%]*", expr) or not expr.strip():
        return None
    expr = expr.replace("&&", " and ").replace("||", " or ")
    expr = re.sub(r"!(?!=)", " not ", expr)
    try:
        return bool(eval(expr, {"__builtins__": {}}))
    except Exception:
        return None


def blank_dead_branches(text):
    """The text (comments already blanked) with the lines of branches that CUDA 13 on Linux
    never compiles blanked: #if 0, CUDART_VERSION < 5000, defined(_WIN32)... Branches whose
    condition is not decided that way are all kept."""
    lines = text.split("\n")
    stack = []  # [parent_live, an earlier branch is surely taken]
    live = True
    for i, line in enumerate(lines):
        m = DIRECTIVE.match(line)
        if m:
            word, rest = m.group(1), m.group(2).strip()
            if word in ("if", "ifdef", "ifndef"):
                if word == "if":
                    value = condition_value(rest)
                else:
                    name = rest.split()[0] if rest.split() else ""
                    value = (word == "ifndef") if name in UNDEFINED_MACROS else None
                stack.append([live, value is True])
                live = live and value is not False
            elif stack and word == "elif":
                frame = stack[-1]
                value = False if frame[1] else condition_value(rest)
                frame[1] = frame[1] or value is True
                live = frame[0] and value is not False
            elif stack and word == "else":
                frame = stack[-1]
                live = frame[0] and not frame[1]
                frame[1] = True
            elif stack and word == "endif":
                live = stack.pop()[0]
            continue
        if not live:
            lines[i] = ""
    return "\n".join(lines)


def code_of(text):
    return blank_dead_branches(blank_comments_and_strings(text))


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def parse_coverage(path):
    status = {}
    for line in read(path).splitlines():
        m = ROW.match(line.strip())
        if m:
            status[m.group(1)] = m.group(2)
    if not status:
        sys.exit(f"{path}: no `| `NAME` | status |` rows")
    return status


def find_samples(root):
    """{sample directory relative to Samples/: [source file paths]}."""
    samples_dir = os.path.join(root, "Samples")
    if not os.path.isdir(samples_dir):
        sys.exit(f"{root}: no Samples/ folder (is it a cuda-samples checkout?)")
    roots = set()
    for d, dirs, files in os.walk(samples_dir):
        dirs.sort()
        for name in files:
            if name.endswith(MAIN_EXTENSIONS) and MAIN.search(code_of(read(os.path.join(d, name)))):
                roots.add(os.path.dirname(d) if os.path.basename(d) == "src" else d)
                break
    samples = {}
    for r in sorted(roots):
        files = []
        for d, dirs, names in os.walk(r):
            dirs.sort()
            files += [os.path.join(d, x) for x in sorted(names) if x.endswith(SOURCE_EXTENSIONS)]
        samples[os.path.relpath(r, samples_dir)] = files
    return samples


class Sample:
    def __init__(self, name, files, common):
        self.name = name
        own = set(os.path.abspath(f) for f in files)
        code = []
        helpers = set()
        for f in files:
            text = read(f)
            code.append(code_of(text))
            for m in INCLUDE.finditer(text):
                inc = m.group(1) or m.group(2)
                if m.group(1) and os.path.abspath(os.path.join(os.path.dirname(f), inc)) in own:
                    continue
                for candidate in (os.path.join(common, inc), os.path.join(common, os.path.basename(inc))):
                    if os.path.isfile(candidate):
                        helpers.add(os.path.normpath(candidate))
                        break
        self.code = "\n".join(code)
        self.helpers = sorted(helpers)
        self.helper_code = "\n".join(code_of(read(h)) for h in self.helpers)
        defined = set(DEFINITION.findall(self.code))
        self.driver_calls = sorted(
            {n for n in DRIVER_CALL.findall(self.code)
             if not n.startswith("cuda") and not NOT_DRIVER.match(n) and n not in defined}
        )
        self.library_calls = sorted(set(LIBRARY_CALL.findall(self.code)))
        if self.driver_calls:
            self.kind = "driver"
        elif self.library_calls:
            self.kind = "library"
        else:
            self.kind = "runtime-only"
        self.identifiers = set(RUNTIME_NAME.findall(self.code)) | set(RUNTIME_CALL.findall(self.helper_code))
        self.has_cu = any(f.endswith(".cu") for f in files)
        self.launches = "<<<" in self.code
        self.device_variables = bool(DEVICE_VARIABLE.search(self.code))
        self.managed_variables = bool(MANAGED_VARIABLE.search(self.code))

    def functions(self, status, implicit):
        """The exports of the coverage table STATUS that this sample uses."""
        used = set()
        for ident in self.identifiers:
            if ident in status:
                used.add(ident)
            for callee in HEADER_WRAPPERS.get(ident, ()):
                used.add(callee)
        if implicit:
            if self.has_cu:
                used.update(IMPLICIT_MODULE)
            if self.launches:
                used.update(IMPLICIT_LAUNCH)
            if self.device_variables:
                used.add("__cudaRegisterVar")
            if self.managed_variables:
                used.add("__cudaRegisterManagedVar")
        return {f for f in used if f in status}


def evaluate(samples, coverage_path, implicit):
    status = parse_coverage(coverage_path)
    runtime = [s for s in samples if s.kind == "runtime-only"]
    served, missing = [], collections.defaultdict(list)
    for s in runtime:
        lacking = sorted(f for f in s.functions(status, implicit) if status[f] not in SERVED)
        if lacking:
            for f in lacking:
                missing[f].append(s.name)
        else:
            served.append(s.name)
    ranked = sorted(missing.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    counts = collections.Counter(status.values())
    return {
        "coverage": coverage_path,
        "exports": {"total": len(status), "remote": counts["remote"], "local": counts["local"],
                    "not supported": counts["not supported"]},
        "samples": len(samples),
        "driver_samples": sum(s.kind == "driver" for s in samples),
        "library_samples": sum(s.kind == "library" for s in samples),
        "runtime_only_samples": len(runtime),
        "fully_served": len(served),
        "fully_served_samples": served,
        "top_missing": [{"function": f, "samples": len(names)} for f, names in ranked[:20]],
        "missing": {f: names for f, names in ranked},
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("cuda_samples", help="checkout of NVIDIA/cuda-samples")
    ap.add_argument("coverage", nargs="+", help="coverage file(s) like docs/cudart-coverage.md")
    ap.add_argument("--json", metavar="OUT", help="write the results as JSON to OUT")
    ap.add_argument("--list", action="store_true", help="print the fully served samples' names")
    ap.add_argument("--implicit", action="store_true",
                    help="also count the __cuda* functions nvcc's generated code imports")
    args = ap.parse_args()

    common = os.path.join(args.cuda_samples, "Common")
    samples = [Sample(name, files, common) for name, files in find_samples(args.cuda_samples).items()]
    results = [evaluate(samples, c, args.implicit) for c in args.coverage]

    for r in results:
        e = r["exports"]
        print(f"== {r['coverage']} ({e['total']} exports: {e['remote']} remote, {e['local']} local, "
              f"{e['not supported']} not supported){' [--implicit]' if args.implicit else ''}")
        print(f"| samples | driver API | library | runtime-only | fully served |")
        print(f"| ---: | ---: | ---: | ---: | ---: |")
        print(f"| {r['samples']} | {r['driver_samples']} | {r['library_samples']} | "
              f"{r['runtime_only_samples']} | {r['fully_served']} of {r['runtime_only_samples']} |")
        print()
        print("| missing function | runtime-only samples using it |")
        print("| --- | ---: |")
        for m in r["top_missing"]:
            print(f"| `{m['function']}` | {m['samples']} |")
        print()
        if args.list:
            print("fully served:")
            for name in r["fully_served_samples"]:
                print(f"  {name}")
            print()
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cuda_samples": args.cuda_samples, "implicit": args.implicit,
                       "sample_kinds": {s.name: s.kind for s in samples}, "results": results}, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    main()
