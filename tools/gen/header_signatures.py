"""Function signatures read from a library's real headers.

The headers go through the build's own C++ preprocessor (so every macro, version guard and
include resolves as it does for the code that uses them), and the result is parsed by
cxxheaderparser (PyPI; scripts/lib.sh installs it into build/tools/python). A call table then
names only what a signature cannot say (directions, lengths, handles): the types come from here.

    signatures(["cuda_runtime_api.h"], ["/usr/local/cuda/include"], "c++")
        -> {"cudaMalloc": Signature("cudaError_t", [Param("void**", "devPtr"),
                                                    Param("size_t", "size")]), ...}
"""
import subprocess
import sys
from typing import NamedTuple

try:
    from cxxheaderparser.simple import parse_string
except ImportError:  # said once, where the generator starts, with what to do
    parse_string = None


class Param(NamedTuple):
    ctype: str  # as the header spells it, normalised: "const struct cudaDeviceProp*"
    name: str


class Signature(NamedTuple):
    returns: str
    params: list


def require_parser():
    if parse_string is None:
        sys.exit("the Python package cxxheaderparser is missing: scripts/lib.sh installs it into "
                 "build/tools/python (or: python3 -m pip install cxxheaderparser)")


def preprocess(headers, include_dirs, cxx):
    """The headers as the compiler sees them: macros expanded, no line markers."""
    source = "".join(f"#include <{h}>\n" for h in headers)
    command = [cxx, "-E", "-P", "-x", "c++", "-"] + [f"-I{d}" for d in include_dirs]
    done = subprocess.run(command, input=source, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"preprocessing {', '.join(headers)} failed ({' '.join(command)}):\n"
                 f"{done.stderr}")
    return done.stdout


def signatures(headers, include_dirs, cxx):
    """Every function the headers declare at namespace scope (extern "C" blocks included)."""
    require_parser()
    parsed = parse_string(preprocess(headers, include_dirs, cxx))
    found = {}
    for f in parsed.namespace.functions:
        params = [Param(p.type.format(), p.name or f"arg{i}") for i, p in enumerate(f.parameters)]
        found[f.name.format()] = Signature(f.return_type.format() if f.return_type else "void",
                                           params)
    return found
