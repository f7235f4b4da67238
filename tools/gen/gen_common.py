"""Helpers shared by the generators in tools/gen: their common arguments, the library descriptor
and file writing."""
import argparse
import json
import os
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
            self.status = d["status"]["type"]
            self.success = d["status"]["success"]
            self.lost = d["status"]["lost"]
            self.invalid_value = d["status"]["invalid_value"]
            self.export_macro = d["export_macro"]
            self.stub_include = d["stub_include"]
            self.handlers_includes = list(d["handlers_includes"])
            self.handles = {t: bool(h.get("destroyable", False)) for t, h in d["handles"].items()}
        except (KeyError, TypeError, ValueError) as e:
            sys.exit(f"{path}: the descriptor lacks or misstates {e}")
        if not 0 < self.plugin_id < 65536:
            sys.exit(f"{path}: plugin_id {self.plugin_id} is not in 1..65535")
        self.exports = d.get("exports")  # read by gen_exports.py, which checks it

    def relative(self, path):
        """PATH, given relative to the descriptor, as a path from here."""
        return os.path.join(os.path.dirname(self.path), path)


def write_if_changed(path, text):
    """Writes `text` to `path` unless it already holds it, so that builds stay incremental."""
    if os.path.exists(path) and open(path).read() == text:
        return
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)
