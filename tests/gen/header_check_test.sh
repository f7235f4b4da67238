#!/usr/bin/env bash
# The call generator takes its types from a library's real headers (here CUDA's runtime, with the
# cudart descriptor) and refuses a table that disagrees with them: a function no header declares,
# a parameter named otherwise or missing, a type spelled otherwise. A row that spells its types
# out generates exactly what the same row with directions only does (the table hash included).
# Annotations that do not fit (a create of no handle, a length naming no parameter, ...) are
# refused naming the row. And a descriptor that lacks a field is refused naming it.
#   header_check_test.sh PYTHON GENERATOR DESCRIPTOR CXX CUDA_INCLUDE PYTHONPATH
set -euo pipefail
PYTHON=$1 GEN=$2 DESCRIPTOR=$3 CXX=$4 INCLUDE=$5
export PYTHONPATH=$6
WORK=$(mktemp -d /tmp/gvirtus-gen-test.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
generate() {  # TABLE OUT_DIR: the cudart descriptor, with TABLE as its table
  "$PYTHON" - "$DESCRIPTOR" "$1" "$1.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["table"] = sys.argv[2]
json.dump(d, open(sys.argv[3], "w"))
PY
  "$PYTHON" "$GEN" "$1.json" "$2" --cxx "$CXX" --include "$INCLUDE"
}
expect_refusal() {  # NAME ROW MESSAGE
  printf '%s\n' "$2" > "$WORK/$1.txt"
  if generate "$WORK/$1.txt" "$WORK/out-$1" > "$WORK/$1.log" 2>&1; then
    fail "$1: the generator accepted '$2'"
  fi
  grep -qF "$3" "$WORK/$1.log" || fail "$1: expected '$3', got: $(cat "$WORK/$1.log")"
  echo "refused as expected: $1: $(tail -1 "$WORK/$1.log")"
}
expect_refusal unknown_function "1 sync auto cudaNoSuchCall(out count)" \
  "cudaNoSuchCall is declared in none of the headers"
expect_refusal renamed_parameter "1 sync auto cudaGetDeviceCount(out n)" \
  "parameter 'n' of cudaGetDeviceCount is 'count' in its header"
expect_refusal missing_parameter "1 sync auto cudaMemGetInfo(out free)" \
  "cudaMemGetInfo takes 2 parameters in its header, the row names 1"
expect_refusal other_type "1 sync auto cudaGetDeviceCount(out long* count)" \
  "parameter 'count' of cudaGetDeviceCount is 'int*' in its header, not 'long*'"
# Annotations that do not fit the parameter or the row.
expect_refusal create_not_a_handle "1 sync auto cudaGetDeviceCount(create count)" \
  "create 'count' must point to a handle kind of the descriptor"
expect_refusal handle_as_plain_out "1 sync auto cudaStreamCreate(out pStream)" \
  "'pStream' returns a handle: annotate it create"
expect_refusal unknown_length "1 sync auto cudaDeviceGetPCIBusId(out pciBusId[size], in len, in device)" \
  "'size' in [size] is not a parameter of the call"
expect_refusal alloc_without_bytes "1 sync auto cudaMalloc(alloc devPtr, in size)" \
  "alloc 'devPtr' needs its bytes"
expect_refusal destroy_not_destroyable "1 sync auto cudaGetChannelDesc(out desc, destroy array)" \
  "only a destroyable handle can be destroyed"
expect_refusal auto_either "1 either auto cudaDeviceSynchronize()" \
  "an auto row is sync or async"
expect_refusal outputs_sent_ahead "1 async auto cudaGetDeviceCount(out count)" \
  "a call sent ahead (async, either) cannot have outputs"

mkdir -p "$WORK/spelled" "$WORK/directions"  # same file name: it is named in what is generated
printf '%s\n' "1 sync auto cudaMemGetInfo(out size_t* free, out size_t* total)" \
  "2 async auto cudaStreamWaitEvent(in cudaStream_t stream, in cudaEvent_t event, in unsigned int flags)" \
  > "$WORK/spelled/table.txt"
printf '%s\n' "1 sync auto cudaMemGetInfo(out free, out total)" \
  "2 async auto cudaStreamWaitEvent(in stream, in event, in flags)" > "$WORK/directions/table.txt"
generate "$WORK/spelled/table.txt" "$WORK/spelled/out" || fail "the spelled-out table was refused"
generate "$WORK/directions/table.txt" "$WORK/directions/out" ||
  fail "the directions-only table was refused"
diff -r "$WORK/spelled/out" "$WORK/directions/out" || fail "the two tables generate different code"
grep -q "cudaError_t cudaMemGetInfo(size_t\* free, size_t\* total)" "$WORK/directions/out/cudart_stub_calls.cpp" ||
  fail "the header's types are not in the generated stub"
"$PYTHON" - "$DESCRIPTOR" "$WORK/no_status.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
del d["status"]["lost"]
json.dump(d, open(sys.argv[2], "w"))
PY
if "$PYTHON" "$GEN" "$WORK/no_status.json" "$WORK/out-no-status" --cxx "$CXX" \
    --include "$INCLUDE" > "$WORK/no_status.log" 2>&1; then
  fail "a descriptor without status.lost was accepted"
fi
grep -q "the descriptor lacks or misstates 'lost'" "$WORK/no_status.log" ||
  fail "descriptor refusal: $(cat "$WORK/no_status.log")"
echo "PASS: header-driven types, refusals, equivalence and the descriptor's checks"
