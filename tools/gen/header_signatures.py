"""Function signatures and enumerations read from a library's real headers.

The headers go through the build's own C++ preprocessor (so every macro, version guard and
include resolves as it does for the code that uses them), and the result is parsed by
cxxheaderparser (PyPI; scripts/lib.sh installs it into build/tools/python). A call table then
names only what a signature cannot say (directions, lengths, handles): the types come from here.

    read_headers(["cuda_runtime_api.h"], ["/usr/local/cuda/include"], "c++")
        -> Declarations(functions={"cudaMalloc": Signature("cudaError_t",
                                       [Param("void**", "devPtr"), Param("size_t", "size")]), ...},
                        enums={"enum cudaMemcpyKind": ["cudaMemcpyHostToHost", ...],
                               "gvtMode_t": [...] (a typedef of an enum), ...})
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


class Declarations(NamedTuple):
    functions: dict  # name -> Signature
    enums: dict  # "enum NAME" or a typedef's name -> the names of its enumerators


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


def read_headers(headers, include_dirs, cxx):
    """Every function the headers declare at namespace scope (extern "C" blocks included), and
    every enumeration, by its tag and by each typedef name it has."""
    require_parser()
    parsed = parse_string(preprocess(headers, include_dirs, cxx))
    functions = {}
    for f in parsed.namespace.functions:
        params = [Param(p.type.format(), p.name or f"arg{i}") for i, p in enumerate(f.parameters)]
        functions[f.name.format()] = Signature(
            f.return_type.format() if f.return_type else "void", params)
    enums = {e.typename.format(): [v.name for v in e.values] for e in parsed.namespace.enums}
    for t in parsed.namespace.typedefs:
        if hasattr(t.type, "typename") and t.type.format() in enums:
            enums[t.name] = enums[t.type.format()]
    return Declarations(functions, enums)


def signatures(headers, include_dirs, cxx):
    """The functions only (see read_headers)."""
    return read_headers(headers, include_dirs, cxx).functions
