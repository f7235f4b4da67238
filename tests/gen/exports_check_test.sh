#!/usr/bin/env bash
# The export-list generator on a toy library of ours ("reference": "headers"): the stub exports
# every extern "C" function its header declares (not what that header includes, nor a static
# inline helper or a C++ overload), each missing one returns its declared type (the status type,
# also through a typedef; void; a pointer; an integer; a struct), and the generated translation
# unit compiles and links into a library that exports exactly that list under the version node.
# And the generator refuses, naming the file and the field: a descriptor that lacks a field, a
# local call the stub does not implement, a return type it has no rule for.
#   exports_check_test.sh PYTHON GENERATOR CXX NM PYTHONPATH
set -euo pipefail
PYTHON=$1 GEN=$2 CXX=$3 NM=$4
export PYTHONPATH=$5
WORK=$(mktemp -d /tmp/gvirtus-exports-test.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
mkdir -p "$WORK/include/toy" "$WORK/src/toy"

cat > "$WORK/include/toy/toy_types.h" <<'EOF'
#pragma once
typedef enum toyStatus { toySuccess = 0, toyNotSupported = 7 } toyStatus_t;
typedef struct toyPair { int a, b; } toyPair_t;
typedef unsigned long toySize_t;
#ifdef __cplusplus
extern "C" {
#endif
int toyTypesVersion(void); /* declared by an included header: not an export of toy.h */
#ifdef __cplusplus
}
#endif
EOF
cat > "$WORK/include/toy/toy.h" <<'EOF'
#pragma once
#include <stddef.h>
#include <toy/toy_types.h>
#ifdef __cplusplus
extern "C" {
#endif
toyStatus_t toyInit(int flags);
toyStatus_t toyShutdown(void);
enum toyStatus toyFlush(void);
void toyReset(void);
const char* toyName(toyStatus_t status);
toySize_t toyCount(void);
toyPair_t toyPairOf(int a, int b);
static inline int toyHelper(void) { return 1; }
#ifdef TOY_WITH_RATIO
double toyRatio(void);
#endif
#ifdef __cplusplus
}
int toyOverload(int value);
#endif
EOF
cat > "$WORK/src/toy/not_supported.h" <<'EOF'
#pragma once
#include <atomic>
namespace toy { int not_supported(const char* name, std::atomic<bool>& logged); }
EOF
cat > "$WORK/impl.cpp" <<'EOF'
#include <atomic>
#include "toy/not_supported.h"
extern "C" __attribute__((visibility("default"))) int toyInit(int) { return 0; }
int toy::not_supported(const char*, std::atomic<bool>& logged) { logged = true; return 7; }
EOF
"$CXX" -std=c++20 -fPIC -fvisibility=hidden -I"$WORK/src" -c "$WORK/impl.cpp" -o "$WORK/impl.o"
printf 'toyInit  answered by the stub itself\n' > "$WORK/local_calls.txt"

describe() {  # OUT PYTHON-STATEMENTS: the toy descriptor, changed by the statements (on d, x)
  "$PYTHON" - "$1" "$2" <<'PY'
import json, sys
d = {"library": "toy", "plugin_id": 9, "namespace": "toy", "table": "unused.txt",
     "headers": ["toy/toy.h"],
     "status": {"type": "toyStatus_t", "success": "toySuccess", "lost": "toyNotSupported",
                "invalid_value": "toyNotSupported"},
     "export_macro": "", "stub_include": "", "handlers_includes": [], "handles": {},
     "exports": {"reference": "headers", "version_node": "libtoy.so.1",
                 "struct_types_include": "toy/toy_types.h",
                 "not_supported": {"function": "toy::not_supported",
                                   "include": "toy/not_supported.h", "returns": "int",
                                   "value": "toyNotSupported"},
                 "local_calls": "local_calls.txt", "coverage_title": "Toy coverage"}}
x = d["exports"]
exec(sys.argv[2])
json.dump(d, open(sys.argv[1], "w"))
PY
}
generate() {  # DESCRIPTOR OUT_DIR [OPTION...]
  local descriptor=$1 out=$2
  shift 2
  "$PYTHON" "$GEN" "$descriptor" "$out" --cxx "$CXX" --include "$WORK/include" --nm "$NM" "$@" \
    "$WORK/impl.o"
}

describe "$WORK/toy.json" ""
generate "$WORK/toy.json" "$WORK/out" > "$WORK/out.log" 2>&1 || fail "generating: $(cat "$WORK/out.log")"
TU="$WORK/out/toy_not_supported.cpp"
expected="toyCount toyFlush toyInit toyName toyPairOf toyReset toyShutdown"
listed=$(echo $(sed -n 's/^    \(.*\);$/\1/p' "$WORK/out/libtoy.map"))  # one line, words
[ "$listed" = "$expected" ] || fail "the map lists '$listed', not '$expected'"
head -1 "$WORK/out/libtoy.map" | grep -qx "libtoy.so.1 {" || fail "the map's node: $(head -1 "$WORK/out/libtoy.map")"
for definition in "int toyShutdown() { static std::atomic<bool> logged; return toy::not_supported(" \
                  "int toyFlush() {" "void toyReset() {" "void* toyName() {" \
                  "unsigned long toyCount() {" "toyPair_t toyPairOf() {" \
                  "#include <toy/toy_types.h>" '#include "toy/not_supported.h"'; do
  grep -qF "$definition" "$TU" || fail "'$definition' is not in the generated definitions"
done
grep -q "toyInit" "$TU" && fail "toyInit is implemented, yet defined as not supported"
grep -qF '| `toyInit` | local |' "$WORK/out/toy-coverage.md" || fail "toyInit is not local"
grep -qF "7 exports: 0 remote, 1 local, 6 not supported." "$WORK/out/toy-coverage.md" ||
  fail "coverage counts: $(grep exports: "$WORK/out/toy-coverage.md")"
"$CXX" -std=c++20 -shared -fPIC -fvisibility=hidden -I"$WORK/include" -I"$WORK/src" "$TU" \
  "$WORK/impl.o" -Wl,--version-script="$WORK/out/libtoy.map" -Wl,-soname,libtoy.so.1 \
  -o "$WORK/libtoy.so.1" || fail "the generated definitions do not compile and link"
exported=$(echo $("$NM" -D --defined-only "$WORK/libtoy.so.1" | awk '$2 != "A" {print $3}' | sort))
[ "$exported" = "$(echo $(printf '%s@@libtoy.so.1 ' $expected))" ] ||
  fail "the linked stub exports '$exported'"
echo "generated, compiled and linked: $expected"
# Reasons: each not-supported export names the first reason whose glob matches, and the reasons
# are listed with their counts.
printf '%s\n' '# why' '[lifecycle] never: the toy cannot stop' 'toyShutdown' 'toyRes*' \
  '[queries] not yet: asked later' 'toy[CFNP]*' > "$WORK/reasons.txt"
describe "$WORK/reasons.json" 'x["unsupported_reasons"] = "reasons.txt"'
generate "$WORK/reasons.json" "$WORK/reasons" > "$WORK/reasons.log" 2>&1 ||
  fail "generating with reasons: $(cat "$WORK/reasons.log")"
for row in '| `toyShutdown` | not supported: lifecycle |' '| `toyReset` | not supported: lifecycle |' \
           '| `toyCount` | not supported: queries |' '| `toyInit` | local |' \
           '| lifecycle | 2 | never: the toy cannot stop |' '| queries | 4 | not yet: asked later |'; do
  grep -qF "$row" "$WORK/reasons/toy-coverage.md" || fail "the coverage list lacks '$row'"
done
# The linked toy as the reference library of another stub: the same list, its node read from it.
describe "$WORK/copy.json" 'x["reference"] = "library"; x["vendor"] = "Toy Inc."'
generate "$WORK/copy.json" "$WORK/copy" --reference "$WORK/libtoy.so.1" > "$WORK/copy.log" 2>&1 ||
  fail "generating from the reference library: $(cat "$WORK/copy.log")"
cmp "$WORK/out/libtoy.map" "$WORK/copy/libtoy.map" || fail "the reference library's map differs"
grep -qF "// Every Toy Inc. libtoy.so.1 export the stub's sources do not implement." \
  "$WORK/copy/toy_not_supported.cpp" || fail "the reference is not named"

expect_refusal() {  # NAME CHANGE MESSAGE [OPTION...]: the toy changed by CHANGE is refused
  describe "$WORK/$1.json" "$2"
  if generate "$WORK/$1.json" "$WORK/out-$1" "${@:4}" > "$WORK/$1.log" 2>&1; then
    fail "$1: the generator accepted it"
  fi
  grep -qF "$3" "$WORK/$1.log" || fail "$1: expected '$3', got: $(cat "$WORK/$1.log")"
  echo "refused as expected: $1: $(tail -1 "$WORK/$1.log")"
}
expect_refusal no_exports 'del d["exports"]' "no_exports.json: exports is missing"
expect_refusal no_function 'del x["not_supported"]["function"]' \
  "no_function.json: exports.not_supported.function is missing"
# Without a version node the exports are unversioned, as NVIDIA's libnvidia-ml.so.1's are.
describe "$WORK/no_node.json" 'del x["version_node"]'
generate "$WORK/no_node.json" "$WORK/no_node" > "$WORK/no_node.log" 2>&1 ||
  fail "generating without a version node: $(cat "$WORK/no_node.log")"
head -1 "$WORK/no_node/libtoy.map" | grep -qx "{" ||
  fail "the map without a node starts: $(head -1 "$WORK/no_node/libtoy.map")"
grep -qx "    toyInit;" "$WORK/no_node/libtoy.map" || fail "the map without a node lacks toyInit"
expect_refusal bad_reference 'x["reference"] = "nm"' \
  'bad_reference.json: exports.reference is "nm", not "library" or "headers"'
expect_refusal no_reference_library 'x["reference"] = "library"; x["vendor"] = "Toy Inc."' \
  'exports.reference is "library": give the library with --reference'
expect_refusal other_node 'x["reference"] = "library"; x["vendor"] = "Toy Inc."; x["version_node"] = "libtoy.so.2"' \
  "other_node.json: exports.version_node is \"libtoy.so.2\", but $WORK/libtoy.so.1 exports under \"libtoy.so.1\"" \
  --reference "$WORK/libtoy.so.1"
expect_refusal no_struct_include 'del x["struct_types_include"]' \
  "no_struct_include.json: exports.struct_types_include is missing, and toyPairOf"
printf 'toyReset  not implemented\n' > "$WORK/unimplemented_local.txt"
expect_refusal unimplemented_local 'x["local_calls"] = "unimplemented_local.txt"' \
  "unimplemented_local.txt: listed as local but not implemented by the stub: ['toyReset']"
printf '[lifecycle] never: the toy cannot stop\ntoyShutdown\n' > "$WORK/few_reasons.txt"
expect_refusal unexplained 'x["unsupported_reasons"] = "few_reasons.txt"' \
  "few_reasons.txt: no reason for these exports the stub does not support: ['toyCount', 'toyFlush', 'toyName', 'toyPairOf', 'toyReset']"
printf 'toyReset\n' > "$WORK/bad_reasons.txt"
expect_refusal pattern_first 'x["unsupported_reasons"] = "bad_reasons.txt"' \
  'bad_reasons.txt:1: a pattern before any "[LABEL] TEXT"'
printf '#!/bin/sh\nexec "%s" -DTOY_WITH_RATIO "$@"\n' "$CXX" > "$WORK/cxx-ratio"
chmod +x "$WORK/cxx-ratio"
expect_refusal no_rule "" "toyRatio ($WORK/include/toy/toy.h) returns 'double', for which" \
  --cxx "$WORK/cxx-ratio"
echo "PASS: headers-driven exports, return types, linked stub and refusals"
