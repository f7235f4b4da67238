"""Function signatures read from a library's real headers.

The headers go through the build's own C++ preprocessor (so every macro, version guard and
include resolves as it does for the code that uses them), and the result is parsed by
cxxheaderparser (PyPI; scripts/lib.sh installs it into build/tools/python). A call table then
names only what a signature cannot say (directions, lengths, handles): the types come from here.

    signatures(["cuda_runtime_api.h"], ["/usr/local/cuda/include"], "c++")
        -> {"cudaMalloc": Signature("cudaError_t", [Param("void**", "devPtr"),
                                                    Param("size_t", "size")], True, ...), ...}

declarations() gives the typedefs, the enumerations (by tag and by typedef: their enumerators)
and the files read as well, and can stand empty files in for
headers the machine may lack (an interop header's GL/gl.h): cxxheaderparser takes any unknown
name for a type, so a declaration that names one of their types still parses.
"""
import os
import re
import subprocess
import sys
import tempfile
from typing import NamedTuple

try:
    from cxxheaderparser.simple import SimpleCxxVisitor
    from cxxheaderparser.parser import CxxParser
except ImportError:  # said once, where the generator starts, with what to do
    CxxParser = None
    SimpleCxxVisitor = object

# The preprocessor's line markers (# 12 "/usr/include/stdio.h" 1 3 4): cxxheaderparser reads them
# too, so each declaration knows its file.
LINE_MARKER = re.compile(r'^# \d+ "([^"<][^"]*)"', re.M)


class Param(NamedTuple):
    ctype: str  # as the header spells it, normalised: "const struct cudaDeviceProp*"
    name: str


class Signature(NamedTuple):
    returns: str
    params: list
    c_symbol: bool  # declared extern "C", not static, inline or defined here: a library
    #                 exports a symbol of this very name
    file: str  # the header that declares it, as the preprocessor found it


class Declarations(NamedTuple):
    functions: dict  # {name: Signature}
    typedefs: dict  # {name: the type it names, formatted: "enum cudaError", "struct CUstream_st*"}
    files: list  # every file the preprocessor read, the stand-ins left out
    enums: dict  # {"enum NAME" or a typedef's name: the names of its enumerators}


def require_parser():
    if CxxParser is None:
        sys.exit("the Python package cxxheaderparser is missing: scripts/lib.sh installs it into "
                 "build/tools/python (or: python3 -m pip install cxxheaderparser)")


def without_system_headers(text):
    """The preprocessed text less what came from system headers (line markers with flag 3: the C
    library's, the compiler's): their GNU extensions (__asm redirects, attributes) are nothing a
    library's declarations need - an unknown type name parses as a type - and more than the parser
    takes. Line markers stay, so every declaration keeps its file."""
    kept, system = [], False
    for line in text.splitlines(keepends=True):
        if line.startswith("# "):
            flags = line.split('"')[-1].split()
            system = "3" in flags
            kept.append(line)
        elif not system:
            kept.append(line)
    return "".join(kept)


def preprocess(headers, include_dirs, cxx, defines=()):
    """The headers as the compiler sees them: macros expanded, line markers kept, system headers
    left out (without_system_headers)."""
    source = "".join(f"#include <{h}>\n" for h in headers)
    command = ([cxx, "-E", "-x", "c++", "-"] + [f"-D{d}" for d in defines] +
               [f"-I{d}" for d in include_dirs])
    done = subprocess.run(command, input=source, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"preprocessing {', '.join(headers)} failed ({' '.join(command)}):\n"
                 f"{done.stderr}")
    return without_system_headers(done.stdout)


class _LocatingVisitor(SimpleCxxVisitor):
    """cxxheaderparser's own visitor, noting the file of each function it is handed."""

    def __init__(self):
        self.file_of = {}

    def on_function(self, state, fn):
        self.file_of[id(fn)] = state.location.filename
        super().on_function(state, fn)


def declarations(headers, include_dirs, cxx, stand_ins=(), defines=()):
    """Every function the headers declare at namespace scope (extern "C" blocks included), but
    templates (no symbol has their name); where a name is declared more than once, its C symbol
    (see Signature) wins over C++ overloads (cuda_runtime.h's), else the first declaration. STAND_INS are include
    paths ("GL/gl.h") given as empty files, ahead of INCLUDE_DIRS; DEFINES are macros
    ("NAME" or "NAME=VALUE") defined for the preprocessor."""
    require_parser()
    with tempfile.TemporaryDirectory(prefix="gvirtus-stand-ins.") as empty:
        for path in stand_ins:
            os.makedirs(os.path.dirname(os.path.join(empty, path)), exist_ok=True)
            open(os.path.join(empty, path), "w").close()
        text = preprocess(headers, ([empty] if stand_ins else []) + list(include_dirs), cxx,
                          defines)
        files = sorted({f for f in LINE_MARKER.findall(text) if not f.startswith(empty + "/")})
    visitor = _LocatingVisitor()
    CxxParser("<headers>", text, visitor).parse()
    functions = {}
    for f in visitor.data.namespace.functions:
        if f.template:
            continue
        name = f.name.format()
        params = [Param(p.type.format(), p.name or f"arg{i}") for i, p in enumerate(f.parameters)]
        c_symbol = f.extern == '"C"' and not (f.static or f.inline or f.has_body)
        found = Signature(f.return_type.format() if f.return_type else "void", params, c_symbol,
                          visitor.file_of[id(f)])
        if name not in functions or (found.c_symbol and not functions[name].c_symbol):
            functions[name] = found
    typedefs = {t.name: t.type.format() for t in visitor.data.namespace.typedefs}
    enums = {e.typename.format(): [v.name for v in e.values] for e in visitor.data.namespace.enums}
    enums.update({name: enums[named] for name, named in typedefs.items() if named in enums})
    return Declarations(functions, typedefs, files, enums)


def signatures(headers, include_dirs, cxx):
    """{name: Signature} of every function the headers declare (see declarations())."""
    return declarations(headers, include_dirs, cxx).functions
