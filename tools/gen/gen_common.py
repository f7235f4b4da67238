"""Helpers shared by the generators in tools/gen: their common arguments, the library descriptor
and file writing."""
import argparse
import json
import os
import re
import sys


def arguments(usage):
    """The arguments of every generator, DESCRIPTOR OUT_DIR --cxx COMPILER --include DIR..., the
    headers read through COMPILER's preprocessor with the include directories DIR."""
    parser = argparse.ArgumentParser(usage=usage)
    parser.add_argument("descriptor")
    parser.add_argument("out_dir")
    parser.add_argument("--cxx", required=True)
    parser.add_argument("--include", action="append", required=True)
    return parser


class Descriptor:
    """What is particular to one library: its descriptor, a JSON file documented in gen_calls.py
    (and its "exports" object in gen_exports.py). A missing or misstated field stops the
    generator, naming the file and the field."""

    def __init__(self, path):
        self.path = path
        with open(path) as f:
            d = json.load(f)
        try:
            self.library = d["library"]
            self.plugin_id = int(d["plugin_id"])
            self.namespace = d["namespace"]
            self.table = self.relative(d["table"])
            self.headers = list(d["headers"])
            self.defines = list(d.get("defines", []))
            self.status = d["status"]["type"]
            self.success = d["status"]["success"]
            self.lost = d["status"]["lost"]
            self.invalid_value = d["status"]["invalid_value"]
            self.invalid_handle = d["status"].get("invalid_handle")
            self.export_macro = d.get("export_macro",
                                      'extern "C" __attribute__((visibility("default")))')
            self.stub_include = d.get("stub_include")
            self.handlers_includes = list(d.get("handlers_includes", []))
            self.handles = {t: Handle(t, h) for t, h in d.get("handles", {}).items()}
            for index, h in enumerate(self.handles.values()):
                target = self.handles.get(h.view_of) if h.view_of else None
                if target is not None and list(self.handles).index(h.view_of) > index:
                    sys.exit(f"{path}: handle {h.ctype} must come after {h.view_of}, its kind")
                if h.view_of and (target is None or target.view_of or h.destroyable
                                  or h.accepts or h.predefined):
                    sys.exit(f"{path}: handle {h.ctype} is a view of {h.view_of}: that must be a "
                             "handle kind of its own, and the view takes nothing else")
            self.handle_owner = d.get("handle_owner")
            pointers = d.get("device_pointers", {})
            self.vet_pointer = pointers.get("vet", "ledger")
            self.pointer_structs = dict(pointers.get("structs", {}))
            # Integer types that hold device addresses (cuda.h's CUdeviceptr).
            self.address_types = list(pointers.get("address_types", []))
            self.last_error = dict(d.get("last_error", {}))
            self.extra_enums = list(d.get("enums", []))
            self.quiet_calls = list(d.get("quiet_calls", []))
            self.real_library = d.get("real_library")
            # Functions of the real library that hand-written backend code calls beyond the rows.
            self.real_extra = list(d.get("real_extra", []))
            # A hand-written void FUNCTION(Fn, WireReader request, STATUS result) the generated
            # plugin calls after each call (what a call did to other state than its own).
            self.after_call = d.get("after_call")
            # A hand-written void FUNCTION(uint32_t client_thread) the generated plugin calls
            # before each call (backend/services/client_threads.h).
            self.before_call = d.get("before_call")
            # A hand-written void FUNCTION(int device): what the plugin forgets when another
            # plugin of the session reset a device (backend/services/session_services.h).
            self.device_reset = d.get("device_reset")
            # A hand-written void FUNCTION(const gvirtus::SessionInfo&) the generated plugin calls
            # when a session opens (what the plugin keeps of it: its shared memory).
            self.session_opened = d.get("session_opened")
            self.not_supported = d["status"].get("not_supported", self.invalid_value)
            # {"sticky": [STATUS], "unavailable": STATUS, "clearing": [FUNCTION],
            #  "context_free": [FUNCTION]} (frontend/context_faults.h).
            self.context_faults = d.get("context_faults")
            # {"include": HEADER, "device_types": [TYPE]}: the stub routes each call in a
            # client's pool (frontend/pool.h) through hand-written functions HEADER declares.
            pool = d.get("pool_routing")
            self.pool_include = pool["include"] if pool else None
            self.pool_device_types = list(pool.get("device_types", [])) if pool else []
            # Custom rows that are gvirtus's own, which the real library lacks.
            self.own_calls = set(d.get("own_calls", []))
            # {TYPE: {"noted": FUNCTION, "vetted": FUNCTION}}: structs of the library's own bytes
            # (CUdevResource): what a call writes into one is noted, and one given to a call
            # must be one noted (hand-written, in the backend).
            self.opaque_structs = dict(d.get("opaque_structs", {}))
            hooks = d.get("allocation_hooks", {})
            self.note_allocated = hooks.get("allocated")
            self.note_freed = hooks.get("freed")
            self.note_clock = hooks.get("clock")
            if self.note_freed and not self.note_clock:
                raise ValueError("allocation_hooks: a \"freed\" hook needs its \"clock\"")
        except (KeyError, TypeError, ValueError) as e:
            sys.exit(f"{path}: the descriptor lacks or misstates {e}")
        if not 0 < self.plugin_id < 65536:
            sys.exit(f"{path}: plugin_id {self.plugin_id} is not in 1..65535")
        if self.handles and not self.invalid_handle:
            sys.exit(f"{path}: a library with handles needs status.invalid_handle")
        if bool(self.stub_include) != bool(self.handlers_includes):
            sys.exit(f"{path}: stub_include and handlers_includes go together (hand-written code "
                     "on both sides) or are both left out (the library generated whole)")
        if len(set(self.quiet_calls)) != len(self.quiet_calls):
            sys.exit(f"{path}: quiet_calls names a call twice")
        if set(self.last_error) - {"take", "peek"}:
            sys.exit(f"{path}: last_error names only 'take' and 'peek'")
        self.exports = d.get("exports")  # read by gen_exports.py, which checks it

    def relative(self, path):
        """PATH, given relative to the descriptor, as a path from here."""
        return os.path.join(os.path.dirname(self.path), path)

    @property
    def whole(self):
        """Generated whole: no hand-written code on either side."""
        return not self.stub_include







class Handle:
    """One of the library's handle kinds (descriptor: handles)."""

    def __init__(self, ctype, spec):
        self.ctype = ctype
        self.name = spec.get("name", ctype)
        self.destroyable = bool(spec.get("destroyable", False))
        self.predefined = list(spec.get("predefined", []))
        # Other kinds a parameter of this type may hold (cuda: a CUkernel where a CUfunction is
        # taken, as the driver allows).
        self.accepts = list(spec.get("accepts", []))
        # A read-only spelling of another kind (cudart: cudaArray_const_t of cudaArray_t): no kind
        # of its own, vetted as that kind; never created or destroyed through this type.
        self.view_of = spec.get("view_of")

    @property
    def camel(self):
        """The name in C++ identifiers: "memory pool" -> MemoryPool."""
        return "".join(w[:1].upper() + w[1:] for w in re.split(r"[^A-Za-z0-9]+", self.name) if w)


def write_if_changed(path, text):
    """Writes `text` to `path` unless it already holds it, so that builds stay incremental."""
    if os.path.exists(path) and open(path).read() == text:
        return
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)
