#!/usr/bin/env python3
"""Generates both sides of a library's plugin from its descriptor, its call table and its real
headers. One generator for every library: what is particular to a library is in its descriptor.

usage: gen_calls.py DESCRIPTOR OUT_DIR --cxx COMPILER --include DIR [--include DIR...]

DESCRIPTOR is a JSON file (src/plugins/cudart/common/cudart_descriptor.json is the first,
tests/genlib/gvtest_descriptor.json a whole library generated from it):
  library         the plugin's name ("cudart"); generated files are named after it
  plugin_id       the high 16 bits of its call ids
  namespace       the C++ namespace of both sides ("gvirtus::cudart")
  table           its call table, relative to the descriptor (format: the table's own header)
  headers         the library's headers, whose declarations give every parameter's type
  defines         macros defined before the headers are read ("NVML_NO_UNVERSIONED_FUNC_DEFS",
                  which makes nvml.h declare its legacy functions too); every target that
                  compiles the generated code must define them as well
  status          {"type", "success", "lost", "invalid_value", "invalid_handle",
                  "not_supported"}: the status type every call returns, its success value, what
                  a call returns when the backend is lost, what one returns for an argument the
                  stub refuses itself (an enum out of range, an array over the limit), what a
                  handle the session does not hold gets (needed when the library has handles),
                  and what a call the backend does not serve returns (default: invalid_value)
  export_macro    what marks a function the stub library exports (default: extern "C" with
                  default visibility)
  exports         what the stub library exports: read by gen_exports.py, documented there
  handles         {TYPE: {"name", "destroyable", "predefined", "accepts", "view_of"}}: the
                  library's handle kinds ("accepts": other kinds a parameter of this type may
                  hold; "view_of": KIND makes TYPE a read-only spelling of that kind, vetted as
                  it, e.g. cudaArray_const_t of cudaArray_t).
                  "name" says what one is in messages ("stream"); a "create" parameter adopts
                  one into the session's table when the call succeeds, a use ("in") is vetted
                  against the table, a "destroy" (only of a destroyable kind) takes it out; the
                  "predefined" expressions are handles the library defines itself (null always
                  is), which pass unvetted
  real_extra      functions of real_library that hand-written backend code calls beyond the
                  rows' (resolved into real() too)
  before_call     a function, void NAME(uint32_t client_thread), written by hand, that the
                  generated plugin calls before every call (per-thread library state follows its
                  client thread: backend/services/client_threads.h)
  after_call      a function, void NAME(Fn, WireReader request, STATUS result), written by hand,
                  that the generated plugin calls after every call (what a call did beyond its
                  own handles and memory: a device reset)
  device_reset    a function, void NAME(int device), written by hand: what the plugin forgets
                  when another plugin of the session reset that device
  session_opened  a function, void NAME(const gvirtus::SessionInfo&), written by hand, that the
                  generated plugin calls when a session opens (its shared memory, ...)
  handle_owner    a function, int NAME(), written by hand, that says what the library ties a new
                  handle or allocation to (cudart: current_device), so that resetting it forgets
                  its handles (and, told so, its allocations); without it every handle belongs
                  to 0 and allocations to no context
  device_pointers {"vet": "ledger" | FUNCTION, "structs": {TYPE: FIELD}, "address_types": [TYPE]}:
                  how a "dev" or "free"
                  pointer is vetted - "ledger" (default): it must lie in an allocation the
                  session's "alloc" calls recorded; FUNCTION(pointer) returns a status - and the
                  structs that carry a device pointer in FIELD (cudaPitchedPtr: ptr)
  real_library    the soname the backend runs the calls on ("libcuda.so.1"), opened with dlopen
                  in the worker when a session opens the plugin, so a backend machine without it
                  refuses the plugin naming it (and the daemon never loads it); without it, the
                  plugin links the library. status.not_supported (default: invalid_value) is what
                  a call of a function the library lacks returns
  last_error      {"take": FUNCTION, "peek": FUNCTION}: the library's last-error calls, which
                  report the session's pending refusals (backend/services/rejections.h). A
                  library generated whole without them reports a failure of a call sent ahead
                  as CUDA does: the thread's next waited-for call that succeeds answers with it
  quiet_calls     [FUNCTION]: rows' calls that print nothing themselves - queries of what the
                  library holds on the host, which neither synchronise, copy, launch nor load a
                  module (where the CUDA driver flushes the device's printf) - so that the
                  backend relays before their replies only the output its worker had already
                  taken (backend/output_relay.h), sparing them a system call
  enums           enum types the hand-written code checks too, beyond those the rows use
  context_faults  {"sticky": [STATUS], "unavailable": STATUS, "clearing": [FUNCTION],
                  "context_free": [FUNCTION], "forked_child": {"init": FUNCTION, "status":
                  STATUS, "answered": [FUNCTION]}}: for a library generated whole, how its
                  context's faults show (frontend/context_faults.h), so that calls sent
                  ahead answer as the library would at once; FUNCTIONs are rows' names.
                  forked_child: in a child forked after "init" succeeded, every call but the
                  "answered" ones returns "status" unsent, as the native library refuses
                  them there; the stub's hand-written answers ask forked_child_status()
  allocation_hooks {"allocated": FUNCTION, "freed": FUNCTION, "clock": FUNCTION}: what the stub
                  calls after an "alloc" or "free" row succeeded - FUNCTION(Fn, address, bytes)
                  and FUNCTION(Fn, address, noted_by), written by hand (cudart records device
                  allocations so that cudaMemcpyDefault tells device pointers from host ones);
                  "clock" (uint64_t()) is read before a free is sent, and the free forgets only
                  what was noted by then (an address freed may be handed to another thread's
                  allocation and noted before the free's note comes)
  pool_routing    {"include": HEADER, "device_types": [TYPE]}: routing in a client's pool of
                  backends (frontend/pool.h). Each generated stub call routes, for its length
                  (frontend/route_scope.h), to the backend of its first parameter whose backend
                  is known - a device (an "in" of a device type), a handle ("in", "destroy") or a
                  device address ("dev", "free") - and otherwise goes to the thread's route.
                  A device travels as its ordinal on that backend, a device returned ("out" of a
                  device type) comes back as the pool's, and a handle "create"d or "destroy"ed is
                  noted or forgotten as that backend's. HEADER declares, in the library's
                  namespace, std::optional<uint32_t> pool_backend_of_device(TYPE),
                  pool_backend_of_handle(const char* kind, VALUE), pool_backend_of_address(VALUE),
                  TYPE pool_local_device(TYPE), pool_global_device(TYPE),
                  pool_note_handle(const char* kind, VALUE), pool_forget_handle(kind, VALUE)
  opaque_structs  {TYPE: {"noted": FUNCTION, "vetted": FUNCTION}}: structs whose bytes are the
                  library's own, which a client may only hand back (the driver's CUdevResource,
                  whose private bytes it reads): after a call succeeds, every struct of TYPE it
                  wrote (an "out" value or array) is passed to void NOTED(const TYPE*, size_t
                  count); one a call takes ("inref" or an "in" array) must pass STATUS
                  VETTED(const TYPE*, size_t count) first (both hand-written, in the backend;
                  null pointers are theirs to judge)
  own_calls       [FUNCTION]: custom rows that are gvirtus's own, not the library's (the driver's
                  direct copies between backends): the real library is not asked for them
  stub_include, handlers_includes
                  a library with hand-written code names the headers the generated stub and
                  handlers include (its marshalling and calling helpers: remote_sync, ...).
                  Without them the library is generated whole: the stub's calling code and the
                  backend plugin's class come from here too (L_stub_calls.cpp, L_plugin.cpp)

THE CALL TABLE (one per library; src/plugins/cudart/common/cudart_calls.txt is the largest)
  <id> <kind> <mode> <function>(<params>)           # comments and blank lines are ignored
  id      the function id (low 16 bits of the call id); never reused: retire a row by leaving
          its id unused
  kind    sync   - the stub waits for the reply (the call has outputs or its result matters now)
          async  - sent ahead, without waiting; a failure on the backend is the library's to
                   report later (its last error, or a synchronising call), as a library reports
                   its own asynchronous errors
          either - the hand-written stub of a wrapped or custom row chooses per call (a memset
                   into memory the stub knows is sent ahead, one it cannot vouch for waits): one
                   id, the frame's async flag says which
  mode    auto    - both sides generated from the parameters
          wrapped - both sides generated, but the stub side is an internal sender that a
                    hand-written export calls after translating its arguments:
                    NAMESPACE::remote::NAME waits, NAMESPACE::remote::ahead::NAME sends ahead
          custom  - hand-written on both sides; the id and the table hash still come from here.
                    In a library generated whole, the hand-written stub calls remote_sync() or
                    remote_async() (L_remote_calls.h) and the plugin calls a hand-written
                    `bool run_custom(Fn, WireReader&, WireWriter&, STATUS&)` for these rows. With
                    a real_library, a custom row names one of its functions (real() has them all)
  params  the function's parameters as its header declares them, by name and in order, each with
          an annotation (the type may be spelled out too; it must then be the header's):
    in NAME            a value
    in NAME[LEN]       an input array of LEN elements (LEN: an expression over the parameters;
                       of a void pointer, LEN bytes)
    out NAME           a pointer through which the call writes one value; the caller's value
                       travels too, so an untouched output stays untouched and null stays null
    out NAME[LEN]      an output array (a string out is an out array of char, LEN its capacity);
                       it travels both ways, like an out value
    inref NAME         an input passed by pointer: the pointee travels, null stays null
    string NAME        a NUL-terminated input string
    create NAME        an output handle: adopted into the session's table when the call succeeds
    destroy NAME       a handle the call destroys: taken out of the table, put back if it fails
                       (an input handle of a descriptor kind is vetted against the table)
    dev NAME           a device pointer (or a struct of device_pointers.structs), vetted first
    dev NAME[BYTES]    the same, the whole range of BYTES vetted
    global NAME[BYTES] an output device address (an address type) of BYTES the library placed
                       itself, owned by the row's input handle of a destroyable kind (a module's
                       variable): vetted like an allocation until a "destroy" of its owner
    alloc NAME[BYTES]  an output device pointer to a new allocation of BYTES (an expression over
                       the parameters; outputs are the header's pointers: *pitch), recorded in
                       the session's allocation ledger when the call succeeds, as the current
                       context's (handle_owner), forgotten when the plugin says that context ended
    free NAME          a device pointer the call frees: vetted, and dropped from the ledger
    kernel NAME        cudart's kernels: the stub sends the id it registered
    raw                custom rows only
  Arrays and strings are bounded (common/call_marshal.h): the stub answers a call over the limit
  itself with the descriptor's invalid_value, and the backend takes one from the wire as
  malformed. An async call has no outputs.

and writes into OUT_DIR, for library L:
  L_calls.h          function ids, the table hash, the plugin identity and the status values
                     (both sides)
  L_enums.h          the value ranges of the enum types the calls use, from the headers (both)
  L_stub_calls.cpp   the stub's extern "C" definitions of every "auto" call, and the internal
                     senders of every "wrapped" call (frontend)
  L_remote_calls.h   the declarations of those internal senders
  L_vetting.h        the session's handle kinds, and the vetting, adoption and release of
                     handles and device pointers (backend)
  L_handlers.cpp     the backend's decoding, vetting, real call and reply of every non-custom
                     call, with what it does to the session's handles and allocations
  L_plugin.cpp       for a library generated whole: the backend plugin
  L_real.h, L_real.cpp  with real_library: the library opened in the worker, its functions
  L_remote.txt       the names the stub implements remotely (for the coverage list)
Files are rewritten only when their content changes, so builds stay incremental.
(gen_common.Descriptor reads the descriptor, for both generators.)
"""
import hashlib
import os
import re
import sys

from gen_common import Descriptor, Handle, arguments, write_if_changed
from header_signatures import declarations

ROW = re.compile(r"^(\d+)\s+(sync|async|either)\s+(auto|wrapped|custom)\s+(\w+)\((.*)\)\s*$")
# A parameter: its direction, optionally the header's type spelled out, its name, and for arrays
# and allocations an expression in brackets.
PARAM = re.compile(r"^(inref|in|dev|destroy|create|out|kernel|string|alloc|free|global)\s+"
                   r"(?:(.+?)\s*)?(\b\w+)(?:\s*\[(.+)\])?$")
IDENTIFIER = re.compile(r"(?<![\w.>])([A-Za-z_]\w*)")
KEYWORDS = {"sizeof", "size_t", "uint64_t", "int64_t", "static_cast"}

def generated_by(d):
    return (f"// Generated by tools/gen/gen_calls.py from {os.path.basename(d.table)}. "
            "Do not edit.")


# Directions whose value travels as it is: in, dev (a device pointer the backend vets), destroy
# (a handle the call destroys: taken out of the table first, put back if the call fails), free
# (a device pointer the call frees), kernel.
VALUE_DIRECTIONS = ("in", "dev", "destroy", "free", "kernel")
# Directions of one value written through a pointer: it travels both ways.
OUTPUT_DIRECTIONS = ("out", "create", "alloc", "global")


class Param:
    def __init__(self, direction, ctype, name, expr=None, is_enum=False):
        self.direction, self.ctype, self.name, self.expr = direction, ctype, name, expr
        self.is_enum = is_enum  # a value of one of the headers' enums

    @property
    def pointee(self):
        assert self.ctype.endswith("*"), self.ctype
        return self.ctype[:-1].strip()

    @property
    def element(self):
        """An array's element type, without const: bytes where the header says void (an array
        whose length is its size in bytes, as cudaMemRangeGetAttribute's data)."""
        element = re.sub(r"^const\s+", "", self.pointee)
        return "std::byte" if element == "void" else element

    @property
    def elements(self):
        """The array as the stub passes it on: a pointer to its elements."""
        if re.sub(r"^const\s+", "", self.pointee) != "void":
            return self.name
        const = "const " if self.pointee.startswith("const") else ""
        return f"static_cast<{const}std::byte*>({self.name})"

    @property
    def is_array(self):
        return self.direction in ("in", "out") and self.expr is not None

    @property
    def holder(self):
        """The backend's local that holds what the parameter points to."""
        return f"arg_{self.name}"


class Call:
    def __init__(self, ident, kind, mode, name, params):
        self.id, self.kind, self.mode, self.name, self.params = ident, kind, mode, name, params


def split_params(text):
    """Splits at the commas outside brackets and parentheses."""
    parts, depth, current = [], 0, ""
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += ch
    if current.strip():
        parts.append(current.strip())
    return parts


def check_expression(where, expr, names):
    for word in IDENTIFIER.findall(expr):
        if word not in names and word not in KEYWORDS:
            sys.exit(f"{where}: '{word}' in [{expr}] is not a parameter of the call")


def handle_of(d, param):
    """The handle kind a parameter names or points to, or a kind-less stand-in."""
    return d.handles.get(param.ctype) or d.handles.get(param.pointee) or Handle(param.ctype, {})


def check_param(where, param, d, kind, names):
    """Refuses an annotation that does not fit the parameter's type."""
    handle = d.handles.get(param.ctype)
    pointer_types = ("out", "inref", "create", "alloc", "string", "global")
    if (param.direction in pointer_types or param.is_array) and not param.ctype.endswith("*"):
        sys.exit(f"{where}: '{param.name}' must be a pointer")
    if param.expr is not None:
        if param.direction not in ("in", "out", "alloc", "dev", "global"):
            sys.exit(f"{where}: only in, out, dev, alloc and global parameters take [...]")
        check_expression(where, param.expr, names)
    if param.direction == "global" and (param.expr is None
                                        or param.pointee not in d.address_types):
        sys.exit(f"{where}: global '{param.name}' must point to a device address type and name "
                 "its bytes: global {param.name}[BYTES]")
    if param.direction == "alloc" and param.expr is None:
        sys.exit(f"{where}: alloc '{param.name}' needs its bytes: alloc {param.name}[BYTES]")
    if param.direction == "alloc" and not (param.pointee.endswith("*")
                                           or param.pointee in d.pointer_structs
                                           or param.pointee in d.address_types):
        sys.exit(f"{where}: alloc '{param.name}' must point to a pointer or to a struct of "
                 "device_pointers.structs")
    if param.direction == "destroy" and not (handle and handle.destroyable):
        sys.exit(f"{where}: only a destroyable handle can be destroyed, not '{param.name}'")
    if param.direction in ("create", "destroy") and handle_of(d, param).view_of:
        sys.exit(f"{where}: '{param.name}' is a read-only view of a handle kind: it cannot be "
                 f"{param.direction}d through it")
    if param.direction == "create" and param.pointee not in d.handles:
        sys.exit(f"{where}: create '{param.name}' must point to a handle kind of the descriptor")
    if param.direction == "out" and param.expr is None and param.pointee in d.handles:
        sys.exit(f"{where}: '{param.name}' returns a handle: annotate it create")
    if param.direction == "string" and param.element != "char":
        sys.exit(f"{where}: string '{param.name}' must be a const char*")
    if kind in ("async", "either") and (param.direction in OUTPUT_DIRECTIONS
                            or (param.is_array and param.direction == "out")):
        sys.exit(f"{where}: a call sent ahead (async, either) cannot have outputs")


def parse(path, declarations, descriptor):
    """The table's calls with every parameter's type from the headers' `declarations`."""
    calls, ids, names = [], set(), set()
    for number, line in enumerate(open(path), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = ROW.match(line)
        if not m:
            sys.exit(f"{path}:{number}: cannot parse row: {line}")
        ident, kind, mode, name, plist = int(m[1]), m[2], m[3], m[4], m[5].strip()
        where = f"{path}:{number}"
        if kind == "either" and mode == "auto":
            sys.exit(f"{where}: an auto row is sync or async; 'either' needs the hand-written "
                     "stub of a wrapped or custom row to choose")
        if ident in ids or name in names:
            sys.exit(f"{where}: duplicate id {ident} or name {name}")
        ids.add(ident)
        names.add(name)
        params = []
        if mode != "custom":
            declared = declarations.functions.get(name)
            if declared is None:
                sys.exit(f"{where}: {name} is declared in none of the headers")
            if declared.returns != descriptor.status:
                sys.exit(f"{where}: {name} returns '{declared.returns}', not the "
                         f"library's status type '{descriptor.status}'")
            texts = split_params(plist)
            if len(texts) != len(declared.params):
                sys.exit(f"{where}: {name} takes {len(declared.params)} parameters "
                         f"in its header, the row names {len(texts)}")
            param_names = {t.name for t in declared.params}
            for text, truth in zip(texts, declared.params):
                p = PARAM.match(text)
                if not p:
                    sys.exit(f"{where}: cannot parse parameter '{text}'")
                if p[3] != truth.name:
                    sys.exit(f"{where}: parameter '{p[3]}' of {name} is "
                             f"'{truth.name}' in its header")
                if p[2] is not None and p[2].replace(" *", "*") != truth.ctype:
                    sys.exit(f"{where}: parameter '{p[3]}' of {name} is "
                             f"'{truth.ctype}' in its header, not '{p[2]}'")
                param = Param(p[1], truth.ctype, p[3], p[4],
                              re.sub(r"^const\s+", "", truth.ctype) in declarations.enums)
                check_param(where, param, descriptor, kind, param_names)
                params.append(param)
            rename_reserved(params)
        calls.append(Call(ident, kind, mode, name, params))
    return calls


# Names the generated code gives its own locals (a handler's status, its request and reply, a
# stub's encoder and decoder): a parameter the header names so (cuDevSmResourceSplitByCount's
# `result`) is renamed in both sides' code, its array lengths with it.
RESERVED_LOCALS = {"result", "in", "out", "w", "r", "fn", "call", "request"}


def rename_reserved(params):
    for param in params:
        if param.name not in RESERVED_LOCALS:
            continue
        renamed = f"{param.name}_param"
        for other in params:
            if other.expr:
                other.expr = re.sub(rf"\b{param.name}\b", renamed, other.expr)
        param.name = renamed


def row_text(call):
    """A call as a fully spelled-out row: what the table hash covers, so that a stub and a backend
    built from different headers (a changed type) refuse each other like different tables."""
    target = call.name
    params = "raw" if call.mode == "custom" else ", ".join(
        f"{p.direction} {p.ctype} {p.name}" + (f"[{p.expr}]" if p.expr else "")
        for p in call.params)
    return f"{call.id} {call.kind} {call.mode} {target}({params})"


def table_hash(calls):
    # The resolved rows only: comments, spacing and whether a row spells its types out do not count.
    rows = [row_text(c) for c in calls]
    return int.from_bytes(hashlib.sha256("\n".join(rows).encode()).digest()[:8], "little")


def remote_declarations(calls, d):
    """The stub-side functions of "wrapped" rows, declared for the hand-written exports."""
    lines, ahead = [], []
    for c in calls:
        if c.mode == "wrapped":
            sig = ", ".join(f"{p.ctype} {p.name}" for p in c.params)
            (ahead if c.kind == "async" else lines).append(f"{d.status} {c.name}({sig});")
            if c.kind == "either":
                ahead.append(f"{d.status} {c.name}({sig});")
    text = "// Wait for the reply:\n" + "\n".join(lines)
    if ahead:
        text += ("\n\n// Sent ahead, without waiting (a failure is reported later):\n"
                 "namespace ahead {\n" + "\n".join(ahead) + "\n}  // namespace ahead")
    return text


def hook_declarations(calls, d):
    """A whole library's allocation hooks, written by hand, declared for the generated stub: their
    address parameter has the type the rows allocate and free (one type)."""
    types = ({p.pointee for c in calls for p in c.params if p.direction == "alloc"} |
             {p.ctype for c in calls for p in c.params if p.direction == "free"})
    if not (d.note_allocated or d.note_freed) or not types:
        return ""
    if len(types) != 1:
        sys.exit(f"{d.path}: allocation_hooks need one address type, the rows use {sorted(types)}")
    (address,) = types
    out = "\n// What a successful alloc or free row did, recorded by the stub's own code.\n"
    if d.note_allocated:
        out += f"void {d.note_allocated}(Fn fn, {address} address, uint64_t bytes);\n"
    if d.note_freed:
        out += f"void {d.note_freed}(Fn fn, {address} address, uint64_t noted_by);\n"
        out += f"uint64_t {d.note_clock}();\n"
    return out


def remote_calls_header(calls, d):
    """L_remote_calls.h: the senders of the "wrapped" rows; for a library generated whole, also
    the senders its hand-written custom rows call (they convert every failure to a status)."""
    text = (f"{generated_by(d)}\n"
            "// The stub-side senders of the table's \"wrapped\" rows (see stub_call.h).\n"
            f"#pragma once\n\n#include <{d.headers[0]}>\n\n")
    if d.whole:
        text += (f'#include "frontend/generated_stub.h"\n#include "{d.library}_calls.h"\n\n'
                 f"namespace {d.namespace} {{\n\n"
                 "// A custom row's call: sent and waited for (decode reads the outputs after the "
                 "status),\n// or sent ahead. Every failure comes back as the library's status.\n"
                 f"{d.status} remote_sync(Fn fn, gvirtus::stub::Encoder encode, "
                 "gvirtus::stub::Decoder decode);\n"
                 "// `data`, when given, follows what `encode` wrote, sent from where it lies (a "
                 "copy's\n// bytes from the application's buffer).\n"
                 f"{d.status} remote_async(Fn fn, gvirtus::stub::Encoder encode, "
                 "gvirtus::ByteView data = {});\n"
                 "// A custom row's call begun now and finished later (frontend/generated_stub.h's\n"
                 "// Library::begin and finish): two in flight, as a copy in chunks keeps them. "
                 "`landing`,\n// when given, is where the end of the reply may land directly "
                 "(process_session::Landing).\n"
                 f"using RemotePending = gvirtus::stub::Library<{d.status}>::Pending;\n"
                 "RemotePending remote_begin(Fn fn, gvirtus::stub::Encoder encode, "
                 "gvirtus::ByteView data = {},\n"
                 "                           gvirtus::process_session::Landing* landing = nullptr);\n"
                 f"{d.status} remote_finish(const RemotePending& pending, "
                 "gvirtus::stub::Decoder decode);\n"
                 "// What the stub's own answers return: success, or, in a child forked after "
                 "the\n// library was initialized, what the native library answers there "
                 "(context_faults'\n// forked_child).\n"
                 f"{d.status} forked_child_status();\n"
                 + hook_declarations(calls, d) +
                 f"\n}}  // namespace {d.namespace}\n\n")
    return (text + f"namespace {d.namespace}::remote {{\n\n" + remote_declarations(calls, d) +
            f"\n\n}}  // namespace {d.namespace}::remote\n")


def enum_types(calls, declarations, d):
    """{C++ type: enumerators} of every enum a call passes or returns by value, once per enum."""
    found, seen = {}, set()

    def consider(ctype):
        ctype = re.sub(r"^const\s+", "", ctype)
        enumerators = declarations.enums.get(ctype)
        if enumerators is None or id(enumerators) in seen:
            return
        seen.add(id(enumerators))
        found[ctype] = enumerators

    for c in calls:
        for p in c.params:
            if p.direction in VALUE_DIRECTIONS:
                consider(p.ctype)
            elif p.direction in OUTPUT_DIRECTIONS + ("inref",) and not p.is_array:
                consider(p.pointee)
    for extra in d.extra_enums:
        if extra not in declarations.enums:
            sys.exit(f"descriptor enums: '{extra}' is no enum of the headers")
        consider(extra)
    return found


def enums_header(enums, d):
    out = [generated_by(d),
           "// The range of every enum the calls use, from the library's own header: a new version",
           "// that adds values widens it by itself (common/call_marshal.h).", "#pragma once", ""]
    out += [f"#include <{h}>" for h in d.headers]
    out += ["", "#include <algorithm>", "", '#include "common/call_marshal.h"', "",
            "namespace gvirtus::marshal {", ""]
    for ctype, names in enums.items():
        values = ", ".join(f"static_cast<long long>({n})" for n in names)
        out += ["template <>", f"struct EnumRange<{ctype}> {{",
                f"  static constexpr long long kSmallest = std::min<long long>({{{values}}});",
                f"  static constexpr long long kLargest = std::max<long long>({{{values}}});",
                "};", ""]
    out.append("}  // namespace gvirtus::marshal")
    return "\n".join(out) + "\n"


def header(calls, digest, d):
    enum = "\n".join(f"  {c.name} = {c.id}," for c in calls)
    names = "\n".join(f'    case Fn::{c.name}: return "{c.name}";' for c in calls)
    roles = "".join(f"    case Fn::{name}: return gvirtus::LastErrorRole::k{role.title()};\n"
                    for role, name in sorted(d.last_error.items()))
    quiet = "".join(f"    case Fn::{name}:\n" for name in d.quiet_calls)
    quiet_body = (f"  switch (fn) {{\n{quiet}      return true;\n    default:\n      return false;\n  }}"
                  if d.quiet_calls else "  static_cast<void>(fn);\n  return false;")
    includes = "".join(f"#include <{h}>\n" for h in d.headers)
    return f"""{generated_by(d)}
#pragma once

#include <cstdint>
#include <string_view>

{includes}
#include "common/frame.h"
#include "protocol/call_table.h"

namespace {d.namespace} {{

// The status every call returns: its success, what a call returns when the backend is lost, and
// what the stub answers for an argument it refuses itself.
inline constexpr {d.status} kSuccess = {d.success};
inline constexpr {d.status} kBackendLost = {d.lost};
inline constexpr {d.status} kInvalidValue = {d.invalid_value};
inline constexpr {d.status} kNotSupported = {d.not_supported};

inline constexpr uint16_t kPluginId = {d.plugin_id};
inline constexpr uint64_t kTableHash = 0x{digest:016x}ull;
inline constexpr PluginIdentity kIdentity{{kPluginId, "{d.library}", kTableHash}};

enum class Fn : uint16_t {{
{enum}
}};

constexpr uint32_t call_id(Fn fn) {{ return make_call_id(kPluginId, static_cast<uint16_t>(fn)); }}

constexpr std::string_view name_of(Fn fn) {{
  switch (fn) {{
{names}
  }}
  return "unknown {d.library} call";
}}

// Which calls report the library's last error (protocol/call_table.h).
constexpr gvirtus::LastErrorRole last_error_role(Fn fn) {{
  switch (fn) {{
{roles}    default:
      return gvirtus::LastErrorRole::kNone;
  }}
}}

// Whether a call prints nothing itself (the descriptor's quiet_calls; backend/plugin.h).
constexpr bool is_quiet(Fn fn) {{
{quiet_body}
}}

}}  // namespace {d.namespace}
"""


def context_faults(d, calls):
    """The ContextFaults of a library generated whole (descriptor: context_faults), as C++."""
    faults = d.context_faults
    if not faults:
        return "", ""
    rows = {c.name for c in calls}
    forked = faults.get("forked_child")
    named = {"clearing": faults.get("clearing", []), "context_free": faults.get("context_free", [])}
    if forked:
        named["forked_child.init"] = [forked["init"]]
        named["forked_child.answered"] = forked.get("answered", [])
    for key, names in named.items():
        for name in names:
            if name not in rows:
                sys.exit(f"{d.path}: context_faults.{key} names {name}, which no row defines")
    def functions(names):
        return ", ".join(f"static_cast<uint16_t>(Fn::{n})" for n in names)
    sticky = ", ".join(str(int(v)) for v in faults["sticky"])
    forked_table, forked_arg = "", ""
    if forked:
        answered = functions(forked.get("answered", []))
        forked_table = f"""constexpr uint16_t kAnsweredInForkedChild[] = {{{answered}}};
constexpr gvirtus::stub::ForkedChild kForkedChild{{static_cast<uint16_t>(Fn::{forked["init"]}),
                                                  {int(forked["status"])}, kAnsweredInForkedChild}};
"""
        forked_arg = ", &kForkedChild"
    table = f"""// How this library's context faults show (the descriptor's context_faults).
constexpr int32_t kStickyStatuses[] = {{{sticky}}};
constexpr uint16_t kClearingCalls[] = {{{functions(named["clearing"])}}};
constexpr uint16_t kContextFreeCalls[] = {{{functions(named["context_free"])}}};
{forked_table}const gvirtus::stub::ContextFaults kContextFaults{{kStickyStatuses, {int(faults["unavailable"])},
                                                 kClearingCalls, kContextFreeCalls{forked_arg}}};

"""
    return table, ",\n    &kContextFaults"


def stub_support(d, calls):
    """The calling code of a library generated whole (a hand-written one names stub_include)."""
    faults_table, faults_arg = context_faults(d, calls)
    if not d.pool_include:
        # Its calls name nothing the pool routes by: they keep to the first backend in a pool.
        soname = d.real_library or d.library  # the stub's soname is the real library's
        faults_arg = (faults_arg or ",\n    nullptr") + f', "{soname}"'
    return f"""#include <string>

#include "common/error.h"
#include "frontend/generated_stub.h"
#include "{d.library}_calls.h"
#include "{d.library}_enums.h"
#include "{d.library}_remote_calls.h"

namespace {d.namespace} {{
namespace {{

{faults_table}// Joins the process's session when the stub is loaded (or at its first connection).
const gvirtus::stub::Library<{d.status}> library(
    kIdentity, [](uint16_t f) {{ return name_of(Fn(f)).data(); }},
    {{kSuccess, kBackendLost, kInvalidValue, kNotSupported}}{faults_arg});

}}  // namespace

{d.status} remote_sync(Fn fn, gvirtus::stub::Encoder encode, gvirtus::stub::Decoder decode) {{
  return library.call(call_id(fn), encode, decode);
}}

{d.status} remote_async(Fn fn, gvirtus::stub::Encoder encode, gvirtus::ByteView data) {{
  return library.send(call_id(fn), encode, data);
}}

RemotePending remote_begin(Fn fn, gvirtus::stub::Encoder encode, gvirtus::ByteView data,
                           gvirtus::process_session::Landing* landing) {{
  return library.begin(call_id(fn), encode, data, landing);
}}

{d.status} remote_finish(const RemotePending& pending, gvirtus::stub::Decoder decode) {{
  return library.finish(pending, decode);
}}

{d.status} forked_child_status() {{
  return library.forked_child_status();
}}

}}  // namespace {d.namespace}
"""


def stub_allocation_notes(c, d):
    """The stub's records of what a successful call allocated or freed (allocation_hooks)."""
    notes = []
    for p in c.params:
        if p.direction == "alloc" and d.note_allocated:
            # The hooks take the address as the row has it (an address type stays an integer).
            address = f"*{p.name}" if p.pointee in d.address_types else allocation_address(p, d)
            notes.append(f"    if ({p.name} != nullptr) cr::{d.note_allocated}(cr::Fn::{c.name}, "
                         f"{address}, {p.expr});")
        elif p.direction == "free" and d.note_freed:
            notes.append(f"    cr::{d.note_freed}(cr::Fn::{c.name}, {p.name}, {p.name}_clock);")
    return notes


def stub_clock_reads(c, d):
    """A free row's read of the stub's allocation clock before the call (allocation_hooks'
    "clock"): its note after the call forgets only what was noted by then, never an allocation
    another thread was handed at the freed address meanwhile."""
    return [f"  const uint64_t {p.name}_clock = cr::{d.note_clock}();"
            for p in c.params if p.direction == "free" and d.note_freed]


def pool_routing(c, d):
    """The pool_routing of one row: its route's keys, and what a success notes."""
    if not d.pool_include:
        return [], []
    keys, notes = [], []
    for p in c.params:
        if p.is_array:
            continue
        handle = d.handles.get(p.ctype)
        if p.direction == "in" and p.ctype in d.pool_device_types:
            keys.append(f"cr::pool_backend_of_device({p.name})")
        elif p.direction in ("in", "destroy") and handle is not None:
            keys.append(f'cr::pool_backend_of_handle("{handle.name}", {p.name})')
        elif p.direction in ("dev", "free"):
            keys.append(f"cr::pool_backend_of_address({p.name})")
        if p.direction == "create":
            notes.append(f"    if ({p.name} != nullptr) "
                         f'cr::pool_note_handle("{d.handles[p.pointee].name}", *{p.name});')
        elif p.direction == "destroy":
            notes.append(f'    cr::pool_forget_handle("{handle.name}", {p.name});')
        elif p.direction == "out" and not p.is_array and p.pointee in d.pool_device_types:
            notes.append(f"    if ({p.name} != nullptr) *{p.name} = cr::pool_global_device(*{p.name});")
    return keys, notes


def stub_variants(c, d, sig):
    """The stub functions of one row, each as (its first line, whether it sends ahead): an auto
    row's export; a wrapped row's internal senders, not exported - the hand-written export of the
    same name translates its arguments (a kernel's host function to the kernel's id) and calls
    remote::NAME (waits) or remote::ahead::NAME (sends ahead), as its row's kind allows."""
    if c.mode == "auto":
        return [(f"{d.export_macro} {d.status} {c.name}({sig}) {{", c.kind == "async")]
    variants = []
    if c.kind in ("sync", "either"):
        variants.append((f"{d.status} {d.namespace}::remote::{c.name}({sig}) {{", False))
    if c.kind in ("async", "either"):
        variants.append((f"{d.status} {d.namespace}::remote::ahead::{c.name}({sig}) {{", True))
    return variants


def stub(calls, d):
    out = [generated_by(d)]
    out += [f'#include "{d.stub_include}"'] if d.stub_include else [stub_support(d, calls)]
    if d.pool_include:
        out += ['#include "frontend/route_scope.h"', f'#include "{d.pool_include}"']
    out += ["", "using gvirtus::WireReader;", "using gvirtus::WireWriter;",
            f"namespace cr = {d.namespace};", "namespace mr = gvirtus::marshal;", ""]
    for c in calls:
        if c.mode == "custom":
            continue
        sig = ", ".join(f"{p.ctype} {p.name}" for p in c.params)
        encode, decode, checks = [], [], []
        for p in c.params:
            if p.is_array:
                # The length, checked here: one over the limit or negative is refused unsent.
                checks.append(f"  uint64_t {p.name}_count = 0;")
                # A length read through a pointer the caller left null is refused, as the library
                # refuses a null count.
                unreadable = "".join(f"{n} == nullptr || " for n in dereferenced(p.expr))
                checks.append(f"  if ({p.name} != nullptr && ({unreadable}!mr::usable_count<{p.element}>"
                              f"({p.expr}, {p.name}_count))) return {d.invalid_value};")
                encode.append(f" mr::put_array(w, {p.elements}, {p.name}_count);")
                if p.direction == "out":
                    decode.append(f" mr::get_array(r, {p.elements}, {p.name}_count);")
            elif p.direction == "string":
                encode.append(f" mr::put_c_string(w, {p.name});")
            elif p.direction == "in" and p.ctype in d.pool_device_types:
                encode.append(f" mr::put_value(w, cr::pool_local_device({p.name}));")
            elif p.direction in VALUE_DIRECTIONS:
                encode.append(f" mr::put_value(w, {p.name});")
            else:  # out, create, alloc, inref: the pointee travels like an output's initial value
                encode.append(f" mr::put_output(w, {p.name});")
                if p.direction != "inref":
                    decode.append(f" mr::get_output(r, {p.name});")
        captures = "&" if c.params else ""
        # An enum value outside its type's range (a C caller may pass any int) is answered here,
        # as the library answers an unknown value; the backend takes such a value as malformed.
        checks += [f"  if (!mr::enum_holds<{p.ctype}>(mr::enum_bits({p.name}))) return {d.invalid_value};"
                   for p in c.params if p.direction == "in" and p.is_enum]
        keys, pool_notes = pool_routing(c, d)
        notes = stub_allocation_notes(c, d) + pool_notes
        returned = "const auto result =" if notes else "return"
        for head, ahead in stub_variants(c, d, sig):
            out.append(head)
            out += checks
            if keys:
                out.append(f"  const gvirtus::stub::RouteScope pool_route(gvirtus::stub::first_known({{{', '.join(keys)}}}));")
            out += stub_clock_reads(c, d)
            if ahead:
                out.append(f"  {returned} cr::remote_async(cr::Fn::{c.name}, [{captures}](WireWriter& w) {{{''.join(encode)} }});")
            else:
                out.append(f"  {returned} cr::remote_sync(\n      cr::Fn::{c.name}, [{captures}](WireWriter& w) {{{''.join(encode)} }},")
                out.append(f"      [{captures}](WireReader& r) {{{''.join(decode)} }});")
            if notes:
                out.append(f"  if (result == {d.success}) {{")
                out += notes
                out += ["  }", "  return result;"]
            out.append("}")
            out.append("")
    return "\n".join(out)


def vetting_header(d):
    """The backend's vetting of handles and device pointers for this library."""
    lib = d.library
    kinds = "\n".join(f"  k{h.camel},  // {h.ctype}" for h in d.handles.values() if not h.view_of)
    out = [generated_by(d),
           f"// How the {lib} backend vets the handles and device pointers a client names, and",
           "// records what its calls create, destroy, allocate and free, with the shared backend",
           "// services (backend/services/). A refused argument never reaches the library: the",
           "// call returns the library's own error, which becomes the thread's pending refusal.",
           "#pragma once", ""]
    out += [f"#include <{h}>" for h in d.headers]
    out += ["", "#include <cstdint>", "",
            '#include "backend/services/rejections.h"',
            '#include "backend/services/session_services.h"',
            f'#include "{lib}_calls.h"', ""]
    if d.vet_pointer != "ledger":
        out += [f"namespace {d.namespace} {{",
                f"// The library's own vetting of a device range (hand-written).",
                f"{d.status} {d.vet_pointer}(const void* ptr, uint64_t bytes = 0);",
                f"}}  // namespace {d.namespace}", ""]
    names = ", ".join(f'"{h.name}"' for h in d.handles.values() if not h.view_of)
    out += [f"namespace {d.namespace} {{", "",
            "enum class HandleKind : uint16_t {", kinds, "};", "",
            "// Each kind's name, by HandleKind: how the plugins of a session speak of handles to",
            "// each other (backend/services/session_services.h).",
            f"inline constexpr const char* kKindNames[] = {{{names}}};" if d.handles
            else "inline constexpr std::span<const char* const> kKindNames{};", "",
            ]
    if d.opaque_structs:
        out += ["// Structs of the library's own bytes (descriptor: opaque_structs; hand-written)."]
        for t, f in d.opaque_structs.items():
            out += [f"void {f['noted']}(const {t}* items, size_t count);",
                    f"{d.status} {f['vetted']}(const {t}* items, size_t count);"]
        out += [""]
    if d.handles and d.handle_owner:
        out += ["// What a new handle belongs to (descriptor: handle_owner; hand-written).",
                f"int {d.handle_owner}();",
                f"inline int handle_owner() {{ return {d.handle_owner}(); }}", ""]
    elif d.handles:
        out += ["inline int handle_owner() { return 0; }", ""]
    for h in d.handles.values():
        if h.view_of:
            out += [f"// {h.ctype}: a read-only {h.name}, vetted as a {h.view_of}.",
                    f"inline {d.status} vet({h.ctype} handle) {{",
                    f"  return vet(const_cast<{h.view_of}>(handle));",
                    "}", ""]
            continue
        kind = f"static_cast<uint16_t>(HandleKind::k{h.camel})"
        held = f"gvirtus::services::session_services().handles.holds({kind}, handle)"
        for other in h.accepts:
            if other not in d.handles:
                sys.exit(f"{d.path}: handle {h.ctype} accepts {other}, which is no handle kind")
            held += (f" || gvirtus::services::session_services().handles.holds("
                     f"static_cast<uint16_t>(HandleKind::k{d.handles[other].camel}), handle)")
        predefined = " || ".join(["handle == nullptr"] + [f"handle == {e}" for e in h.predefined])
        held += (f" || gvirtus::services::session_services().peer_holds(\"{h.name}\", handle)")
        out += [f"// {h.ctype}: the library's own ({predefined.replace('handle == ', '')}) pass; "
                "others must be the session's (this plugin's, or another's of the session).",
                f"inline bool predefined({h.ctype} handle) {{ return {predefined}; }}",
                f"inline {d.status} vet({h.ctype} handle) {{",
                f"  if (predefined(handle) || {held}) return {d.success};",
                f"  return static_cast<{d.status}>(gvirtus::services::refuse(",
                f'      {d.invalid_handle}, "{lib}", "{h.name}", handle,',
                '      "not a handle this session holds (never created, destroyed or reset)"));',
                "}",
                f"inline void adopt({h.ctype} handle) {{",
                f"  if (!predefined(handle)) gvirtus::services::session_services().handles.adopt({kind}, handle, handle_owner());",
                "}", ""]
        if h.destroyable:
            out += [f"// One {h.name} a call is about to destroy: vetted() says whether it may.",
                    f"class {h.camel}Release {{",
                    " public:",
                    f"  explicit {h.camel}Release({h.ctype} handle)",
                    f"      : release_(gvirtus::services::session_services().handles, {kind}, handle),",
                    "        handle_(handle),",
                    f"        vetted_(release_.held() || predefined(handle) ? {d.success} : vet(handle)) {{}}",
                    f"  {d.status} vetted() const {{ return vetted_; }}",
                    "  // Another plugin's handle, destroyed through this one: its creator forgets it.",
                    "  void destroyed() {",
                    "    if (!release_.held()) {",
                    f"      gvirtus::services::session_services().peer_forget(\"{h.name}\", handle_);",
                    "    }",
                    "    release_.destroyed();",
                    "  }", "",
                    " private:",
                    "  gvirtus::services::HandleRelease release_;",
                    f"  {h.ctype} handle_;",
                    f"  {d.status} vetted_;",
                    "};",
                    f"inline {h.camel}Release release({h.ctype} handle) {{ return {h.camel}Release(handle); }}",
                    ""]
    if d.vet_pointer == "ledger":
        out += ["// A device range must lie in an allocation this session's calls made.",
                f"inline {d.status} vet_device_pointer(const void* ptr, uint64_t bytes = 0) {{",
                f"  if (ptr == nullptr || gvirtus::services::session_services().allocations.contains(ptr, bytes) ||",
                f"      gvirtus::services::session_services().peer_contains(ptr, bytes)) return {d.success};",
                f"  return static_cast<{d.status}>(gvirtus::services::refuse(",
                f'      {d.invalid_value}, "{lib}", "device pointer", ptr,',
                '      "not device memory this session allocated"));', "}", ""]
    for struct, field in d.pointer_structs.items():
        out += [f"inline {d.status} vet_device_pointer(const {struct}& value) {{",
                f"  return vet_device_pointer(value.{field});", "}", ""]
    for integer in d.address_types:
        out += [f"// A device address held as an integer ({integer}), as the ledger keeps it.",
                f"inline const void* device_address({integer} address) {{",
                "  return reinterpret_cast<const void*>(static_cast<uintptr_t>(address));", "}",
                f"inline {d.status} vet_device_pointer({integer} address, uint64_t bytes = 0) {{",
                "  return vet_device_pointer(device_address(address), bytes);", "}", ""]
    out.append(f"}}  // namespace {d.namespace}")
    return "\n".join(out) + "\n"


def vetting(param, d):
    """The backend's check of one parameter before the call, or None."""
    if param.direction == "dev" and param.expr is not None:
        return f"vet_device_pointer({param.name}, {param.expr})"
    if param.direction in ("dev", "free"):
        return f"vet_device_pointer({param.name})"
    if param.direction == "destroy":
        return f"{param.name}_release.vetted()"
    if param.direction == "in" and param.ctype in d.handles:
        return f"vet({param.name})"
    return None


def allocation_address(param, d):
    if param.pointee in d.pointer_structs:
        return f"{param.name}->{d.pointer_structs[param.pointee]}"
    if param.pointee in d.address_types:
        return f"device_address(*{param.name})"
    return f"*{param.name}"


def freed_address(param, d):
    return f"device_address({param.name})" if param.ctype in d.address_types else param.name


def dereferenced(expr):
    """The names an expression dereferences ("*bytes"), not those it multiplies by."""
    names = []
    for m in re.finditer(r"\*\s*([A-Za-z_]\w*)", expr or ""):
        before = expr[:m.start()].rstrip()
        if not before or not (before[-1].isalnum() or before[-1] in "_)]"):
            names.append(m[1])
    return names


def global_sizes(c):
    """The outputs a "global" row's size expression reads."""
    return {n for p in c.params if p.direction == "global" for n in dereferenced(p.expr)}


def present(param):
    """The condition under which a recorded output and its size expression can be read: the
    output and every pointer the expression dereferences ("*bytes") were given."""
    names = [param.name] + dereferenced(param.expr)
    return " && ".join(f"{n} != nullptr" for n in dict.fromkeys(names))


def global_owner(c, d):
    """The handle a "global" row's range belongs to: its one input of a destroyable kind."""
    owners = [p.name for p in c.params
              if p.direction == "in" and p.ctype in d.handles and d.handles[p.ctype].destroyable]
    if len(owners) != 1:
        sys.exit(f"{c.name}: a global needs exactly one input handle of a destroyable kind to "
                 f"belong to, the row has {owners}")
    return owners[0]


def handler_case(c, d):
    out = [f"    case Fn::{c.name}: {{"]
    args = []
    for p in c.params:
        if p.direction == "kernel":
            out.append(f"      const void* {p.name} = kernel_handle(in);  // validated id")
        elif p.is_array:
            # The header's constness: a few take an input array by a non-const pointer
            # (cuDeviceSetGraphMemAttribute's value).
            qualifier = "const " if p.direction == "in" and p.pointee.startswith("const") else ""
            out.append(f"      Array<{p.element}> {p.holder}(in);")
            out.append(f"      {qualifier}{p.element}* const {p.name} = {p.holder}.ptr();")
        elif p.direction in VALUE_DIRECTIONS:
            out.append(f"      const auto {p.name} = get_value<{p.ctype}>(in);")
        elif p.direction == "string":
            out.append(f"      const CString {p.holder}(in);")
            out.append(f"      const char* const {p.name} = {p.holder}.ptr();")
        elif p.direction == "inref":  # an input passed by pointer
            pointee = p.pointee.replace("const ", "")
            out.append(f"      Output<{pointee}> {p.holder}(in);")
            # The header's own pointer type: a few take an input by a non-const pointer
            # (cudaMemPoolGetAccess's location).
            out.append(f"      {p.ctype} const {p.name} = {p.holder}.ptr();")
        elif p.name in global_sizes(c):
            # A global's size, which the session must know even when the caller does not ask.
            out.append(f"      Output<{p.pointee}> {p.holder}(in);")
            out.append(f"      {p.pointee} {p.name}_unasked{{}};")
            out.append(f"      {p.pointee}* const {p.name} = {p.holder}.ptr() != nullptr ? "
                       f"{p.holder}.ptr() : &{p.name}_unasked;")
        else:  # out, create, alloc
            out.append(f"      Output<{p.pointee}> {p.holder}(in);")
            out.append(f"      {p.pointee}* const {p.name} = {p.holder}.ptr();")
        args.append(p.name)
    out.append("      in.expect_end();")
    for p in c.params:
        if p.is_array and dereferenced(p.expr):
            # Its length is read through outputs, which a hostile request may leave out.
            out.append(f"      if ({p.name} != nullptr) {{")
            for n in dereferenced(p.expr):
                out.append(f"        if ({n} == nullptr) gvirtus::raise(gvirtus::ErrorKind::kInvalidInput, "
                           f"\"an array's length names an output that was not given\");")
            out.append(f"        {p.holder}.expect_count({p.expr});")
            out.append("      }")
        elif p.is_array:
            out.append(f"      {p.holder}.expect_count({p.expr});")
    for p in c.params:
        if p.direction == "destroy":
            out.append(f"      auto {p.name}_release = release({p.name});")
    checks = [v for v in (vetting(p, d) for p in c.params) if v]
    noted = []
    for p in c.params:
        opaque = d.opaque_structs.get(re.sub(r"^const\s+", "", p.pointee)) if p.ctype.endswith("*") else None
        if opaque is None:
            continue
        count = f"static_cast<size_t>({p.expr})" if p.is_array else "1"
        if p.direction == "inref" or (p.is_array and p.direction == "in"):
            checks.append(f"{opaque['vetted']}({p.name}, {p.name} != nullptr ? {count} : 0)")
        elif p.direction == "out":
            # An array's count read after the call: what the library wrote (*nbGroups).
            noted.append(f"        if ({present(p)}) {opaque['noted']}({p.name}, {count});")
    call = (f"real().{c.name}({', '.join(args)})" if d.real_library
            else f"::{c.name}({', '.join(args)})")
    if d.real_library:
        # An older library may lack the function: the call is not supported, as natively.
        checks.append(f"(real().{c.name} != nullptr ? {d.success} : {d.not_supported})")
    # What a free or a destroy takes from the ledger goes before the library's call, and back
    # if it fails: once freed, an address may be handed to another executor's allocation, which
    # a late drop would forget (allocation_ledger.h).
    withdrawals = []
    for p in c.params:
        if p.direction == "free":
            withdrawals.append(f"{p.name}_withdrawn.allocation({freed_address(p, d)});")
        elif p.direction == "destroy":
            withdrawals.append(f"{p.name}_withdrawn.owned_by({p.name});")
        if p.direction in ("free", "destroy"):
            out.append(f"      gvirtus::services::LedgerWithdrawal {p.name}_withdrawn("
                       "gvirtus::services::session_services().allocations);")
    if checks:
        out.append(f"      result = gvirtus::services::first_failure({d.success}, {', '.join(checks)});")
        if withdrawals:
            out.append(f"      if (result == {d.success}) {{")
            out += [f"        {w}" for w in withdrawals]
            out.append(f"        result = {call};")
            out.append("      }")
        else:
            out.append(f"      if (result == {d.success}) result = {call};")
    else:
        out += [f"      {w}" for w in withdrawals]
        out.append(f"      result = {call};")
    out.append("      out.put<int32_t>(result);")
    for p in c.params:
        if p.direction in OUTPUT_DIRECTIONS or (p.is_array and p.direction == "out"):
            out.append(f"      {p.holder}.put(out);")
    effects = []
    for p in c.params:
        if p.direction == "create":
            effects.append(f"        if ({p.name} != nullptr) adopt(*{p.name});")
        elif p.direction == "destroy":
            effects.append(f"        {p.name}_release.destroyed();")
            effects.append(f"        {p.name}_withdrawn.done();")
        elif p.direction == "global":
            owner = global_owner(c, d)
            effects.append(f"        if ({present(p)}) gvirtus::services::session_services().allocations.owned("
                           f"{owner}, device_address(*{p.name}), {p.expr});")
        elif p.direction == "alloc":
            # Made in the current context, whose end frees it (descriptor: handle_owner).
            context = ("handle_owner()" if d.handles and d.handle_owner
                       else "gvirtus::services::AllocationLedger::kNoContext")
            effects.append(f"        if ({present(p)}) gvirtus::services::session_services().allocations.allocated("
                           f"{allocation_address(p, d)}, {p.expr}, {context});")
        elif p.direction == "free":
            effects.append(f"        {p.name}_withdrawn.done();")
    effects += noted
    if effects:
        out.append(f"      if (result == {d.success}) {{")
        out += effects
        out.append("      }")
    out.append("      return true;")
    out.append("    }")
    return out


def real_library_header(calls, d):
    """The library the backend runs the calls on, opened in the worker (descriptor: real_library)."""
    names = [c.name for c in calls if c.name not in d.own_calls] + d.real_extra
    members = "\n".join(f"  decltype(&::{n}) {n} = nullptr;" for n in names)
    return f"""{generated_by(d)}
// {d.real_library}, the library the {d.library} backend runs its calls on, opened with dlopen in
// the session's worker when the plugin's session opens (the daemon never loads it). A function
// the library lacks (an older version) stays null, and its calls are not supported.
#pragma once

{"".join(f"#include <{h}>{chr(10)}" for h in d.headers)}
namespace {d.namespace} {{

// Rows may name deprecated functions: the vendor's library still exports them.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
struct RealLibrary {{
{members}
}};
#pragma GCC diagnostic pop

// Opens {d.real_library} once per process and resolves its functions; throws
// Error{{kUnimplemented}} naming the library and the loader's reason when it cannot be opened.
const RealLibrary& open_real_library();
// The opened library (open_real_library() first).
const RealLibrary& real();

}}  // namespace {d.namespace}
"""


def real_library_source(calls, d):
    names = [c.name for c in calls if c.name not in d.own_calls] + d.real_extra
    resolves = "\n".join(f'    resolve(library.{n}, "{n}");' for n in names)
    return f"""{generated_by(d)}
#include <dlfcn.h>

#include <string>

#include "common/error.h"
#include "{d.library}_real.h"

namespace {d.namespace} {{
namespace {{

RealLibrary library;
void* handle = nullptr;

template <typename Function>
void resolve(Function& function, const char* name) {{
  function = reinterpret_cast<Function>(::dlsym(handle, name));
}}

}}  // namespace

// A variant of the plugin built on another library with the same functions (the cuda plugin's
// simulated device) defines GVIRTUS_REAL_LIBRARY.
#ifndef GVIRTUS_REAL_LIBRARY
#define GVIRTUS_REAL_LIBRARY "{d.real_library}"
#endif

// The library's path: as named, or, for a variant whose library lies beside the plugin
// (GVIRTUS_REAL_LIBRARY_BESIDE_PLUGIN), in the plugin's own directory - named in full, since a
// dlopen intercepted by a sanitizer runtime searches that runtime's run path, not the plugin's.
std::string real_library_path() {{
#ifdef GVIRTUS_REAL_LIBRARY_BESIDE_PLUGIN
  Dl_info info{{}};
  if (::dladdr(reinterpret_cast<const void*>(&real_library_path), &info) != 0 &&
      info.dli_fname != nullptr) {{
    std::string path = info.dli_fname;
    const size_t slash = path.rfind('/');
    if (slash != std::string::npos) return path.substr(0, slash + 1) + GVIRTUS_REAL_LIBRARY;
  }}
#endif
  return GVIRTUS_REAL_LIBRARY;
}}

const RealLibrary& open_real_library() {{
  if (handle != nullptr) return library;
  handle = ::dlopen(real_library_path().c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {{
    const char* why = ::dlerror();
    gvirtus::raise(gvirtus::ErrorKind::kUnimplemented,
                   std::string("the {d.library} plugin runs its calls on " GVIRTUS_REAL_LIBRARY
                               ", which this backend machine cannot load: ") +
                       (why != nullptr ? why : "unknown reason"));
  }}
{resolves}
  return library;
}}

const RealLibrary& real() {{
  return library;
}}

}}  // namespace {d.namespace}
"""


def handlers(calls, d):
    includes = d.handlers_includes if not d.whole else []
    real = [f'#include "{d.library}_real.h"'] if d.real_library else []
    out = [generated_by(d),
           "// Rows may name deprecated functions: the vendor's library still exports them.",
           '#pragma GCC diagnostic ignored "-Wdeprecated-declarations"'] + [
           f'#include "{h}"' for h in includes] + real + [
           f'#include "{d.library}_enums.h"', f'#include "{d.library}_vetting.h"',
           '#include "common/call_marshal.h"', "",
           f"namespace {d.namespace} {{", "",
           "using gvirtus::WireReader;", "using gvirtus::WireWriter;",
           "using gvirtus::marshal::Array;", "using gvirtus::marshal::CString;",
           "using gvirtus::marshal::get_value;", "using gvirtus::marshal::Output;", "",
           f"bool run_generated(Fn fn, WireReader& in, WireWriter& out, {d.status}& result) {{",
           "  switch (fn) {"]
    for c in calls:
        if c.mode != "custom":
            out += handler_case(c, d)
    out += ["    default:", "      return false;", "  }", "}", ""]
    out += [f"}}  // namespace {d.namespace}", ""]
    return "\n".join(out)


def plugin(calls, d):
    """The backend plugin of a library generated whole. Its custom rows (if any) are run by a
    hand-written run_custom(), with the same contract as run_generated()."""
    custom = any(c.mode == "custom" for c in calls)
    custom_decl = (f"bool run_custom(Fn fn, gvirtus::WireReader& in, gvirtus::WireWriter& out, "
                   f"{d.status}& result);\n" if custom else "")
    custom_call = (" &&\n          !run_custom(fn, call.args, call.reply, result)" if custom
                   else "")
    # Without last-error calls, a failure of a call sent ahead is answered by the thread's next
    # waited-for call (backend/services/rejections.h).
    deferral = "" if d.last_error else f"""    if (call.header.is_async()) {{
      gvirtus::services::note_ahead_failure(returned, {d.success});
    }} else if (call.reply.size() >= sizeof(int32_t)) {{
      call.reply.store_at<int32_t>(0, gvirtus::services::deferred_failure(returned, {d.success}));
    }}
"""
    return f"""{generated_by(d)}
// libgvirtus-plugin-{d.library}.so: runs the {d.library} calls of one session on the real library.
#include "backend/plugin.h"
#include "backend/plugin_export.h"
#include "{d.library}_vetting.h"
{f'#include "{d.library}_real.h"' if d.real_library else ""}

namespace {d.namespace} {{

bool run_generated(Fn fn, gvirtus::WireReader& in, gvirtus::WireWriter& out, {d.status}& result);
{custom_decl}{f"void {d.before_call}(uint32_t client_thread);" + chr(10) if d.before_call else ""}{f"void {d.after_call}(Fn fn, gvirtus::WireReader request, {d.status} result);" + chr(10) if d.after_call else ""}{f"void {d.device_reset}(int device);" + chr(10) if d.device_reset else ""}{f"void {d.session_opened}(const gvirtus::SessionInfo& session);" + chr(10) if d.session_opened else ""}
namespace {{

class GeneratedSession final : public gvirtus::PluginSession {{
 public:
  void handle(gvirtus::Call& call) override {{
    const auto fn = static_cast<Fn>(gvirtus::call_function(call.header.call_id));
{f"    {d.before_call}(call.header.thread_id);" + chr(10) if d.before_call else ""}{"    const gvirtus::WireReader request = call.args;  // for after_call" + chr(10) if d.after_call else ""}    {"" if d.last_error and not d.after_call else f"const {d.status} returned = "}gvirtus::services::run_call(name_of(fn), last_error_role(fn), {d.success}, call.reply, [&]({d.status}& result) {{
      if (!run_generated(fn, call.args, call.reply, result){custom_call}) {{
        gvirtus::raise(gvirtus::ErrorKind::kUnimplemented,
                       "{d.library} call " + std::to_string(static_cast<unsigned>(fn)) +
                           " is not served by this backend");
      }}
    }});
{f"    {d.after_call}(fn, request, returned);" + chr(10) if d.after_call else ""}{deferral}  }}
}};

class GeneratedPlugin final : public gvirtus::BackendPlugin {{
 public:
  gvirtus::PluginIdentity identity() const override {{ return kIdentity; }}
  bool quiet(uint16_t function) const override {{ return is_quiet(static_cast<Fn>(function)); }}
  std::unique_ptr<gvirtus::PluginSession> open_session(const gvirtus::SessionInfo& session) override {{
{"    open_real_library();  // refuses the session, naming the library, when it is absent" + chr(10) if d.real_library else ""}    gvirtus::services::session_services().reset(session.device_bytes, session.registry, kKindNames{", " + d.device_reset if d.device_reset else ""});  // one session per worker process
{f"    {d.session_opened}(session);" + chr(10) if d.session_opened else ""}
    return std::make_unique<GeneratedSession>();
  }}
}};

}}  // namespace
}}  // namespace {d.namespace}

GVIRTUS_EXPORT_BACKEND_PLUGIN({d.namespace}::GeneratedPlugin)
"""


def main():
    options = arguments(__doc__).parse_args()
    d = Descriptor(options.descriptor)
    found = declarations(d.headers, options.include, options.cxx, defines=d.defines)
    calls = parse(d.table, found, d)
    out_dir, lib = options.out_dir, d.library
    os.makedirs(out_dir, exist_ok=True)

    def write(name, text):
        write_if_changed(os.path.join(out_dir, f"{lib}_{name}"), text)

    write("calls.h", header(calls, table_hash(calls), d))
    write("enums.h", enums_header(enum_types(calls, found, d), d))
    write("stub_calls.cpp", stub(calls, d))
    write("remote_calls.h", remote_calls_header(calls, d))
    write("vetting.h", vetting_header(d))
    write("handlers.cpp", handlers(calls, d))
    if d.whole:
        write("plugin.cpp", plugin(calls, d))
    if d.real_library:
        write("real.h", real_library_header(calls, d))
        write("real.cpp", real_library_source(calls, d))
    write("remote.txt", "".join(f"{c.name} remote\n" for c in calls))


if __name__ == "__main__":
    main()
