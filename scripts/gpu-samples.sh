#!/usr/bin/env bash
# NVIDIA's cuda-samples natively and through gvirtus on a machine with a GPU: issue 21's "the
# cuda-samples that use these families give results equal to native". The samples are third-party
# source and never enter this repository: build them here from a checkout and carry the programs.
#
#   scripts/gpu-samples.sh build CUDA_SAMPLES DIR [ARCH]
#       builds the samples listed below from a checkout of github.com/NVIDIA/cuda-samples with its
#       own CMake files (their architecture list replaced by ARCH, default 90; NVIDIA's runtime
#       linked shared, as `-cudart shared` does, so runtime mode can serve them) into DIR/NAME/,
#       each program with the data files its CMake copies beside it. Needs nvcc and cmake; no GPU.
#       (.samples, the folder device-lease.sh carries, is git-ignored.)
#   scripts/gpu-samples.sh run DIR LOG [CONFIG...]
#       on the GPU machine, with gvirtus built (GVIRTUS_BUILD_DIR, default build/): each program in
#       DIR/NAME/ natively, then through gvirtus in runtime and in driver mode over each
#       configuration (default etc/examples/shm.json with the driver plugin added, as
#       scripts/device-gpu.sh writes it), a backend per configuration. Each run in its own folder.
#
# What counts as equal: the same exit status and the same verdict lines (those naming a pass, a
# failure, a result, an error or a mismatch), since the samples print timings and bandwidths that
# differ between any two runs (a sample whose input is random in each run: its pass and fail lines
# only). The log keeps each difference's lines and both runs' wall times.
# GVIRTUS_SAMPLES_TIMEOUT (seconds, default 60) bounds each run; GVIRTUS_SAMPLES_JOBS (default 8)
# samples run at a time, natively and remoted alike.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# The samples that use the runtime families issue 21 covers (textures and surfaces, graphs,
# streams and callbacks, managed and mapped memory, pools, cooperative groups, occupancy,
# attributes) and a few driver-API and library ones, for driver mode. None needs a display, MPI,
# a second GPU or data files missing from the repository (dwtHaar1D's are), and none runs for
# minutes (UnifiedMemoryPerf and cudaGraphsPerfScaling do).
SAMPLES="
0_Introduction/asyncAPI 0_Introduction/clock 0_Introduction/fp16ScalarProduct
0_Introduction/matrixMul 0_Introduction/mergeSort 0_Introduction/simpleAWBarrier
0_Introduction/simpleAssert 0_Introduction/simpleAtomicIntrinsics 0_Introduction/simpleAttributes
0_Introduction/simpleCallback 0_Introduction/simpleCooperativeGroups
0_Introduction/simpleCubemapTexture 0_Introduction/simpleHyperQ 0_Introduction/simpleLayeredTexture
0_Introduction/simpleMultiCopy 0_Introduction/simpleOccupancy 0_Introduction/simplePitchLinearTexture
0_Introduction/simplePrintf 0_Introduction/simpleStreams 0_Introduction/simpleSurfaceWrite
0_Introduction/simpleTemplates 0_Introduction/simpleTexture 0_Introduction/simpleVoteIntrinsics
0_Introduction/simpleZeroCopy 0_Introduction/systemWideAtomics 0_Introduction/template
0_Introduction/vectorAdd 0_Introduction/simpleIPC 0_Introduction/vectorAddDrv
0_Introduction/matrixMulDrv 0_Introduction/simpleTextureDrv 0_Introduction/vectorAddMMAP
0_Introduction/simpleDrvRuntime
2_Concepts_and_Techniques/reduction 2_Concepts_and_Techniques/scan 2_Concepts_and_Techniques/shfl_scan
2_Concepts_and_Techniques/sortingNetworks 2_Concepts_and_Techniques/histogram
2_Concepts_and_Techniques/threadFenceReduction 2_Concepts_and_Techniques/streamOrderedAllocation
2_Concepts_and_Techniques/scalarProd 2_Concepts_and_Techniques/convolutionSeparable
2_Concepts_and_Techniques/convolutionTexture 2_Concepts_and_Techniques/eigenvalues
2_Concepts_and_Techniques/reductionMultiBlockCG 2_Concepts_and_Techniques/interval
2_Concepts_and_Techniques/inlinePTX 2_Concepts_and_Techniques/FunctionPointers
2_Concepts_and_Techniques/dct8x8 2_Concepts_and_Techniques/MC_EstimatePiP
3_CUDA_Features/simpleCudaGraphs 3_CUDA_Features/graphMemoryNodes 3_CUDA_Features/graphMemoryFootprint
3_CUDA_Features/jacobiCudaGraphs 3_CUDA_Features/graphConditionalNodes 3_CUDA_Features/StreamPriorities
3_CUDA_Features/cudaTensorCoreGemm 3_CUDA_Features/bf16TensorCoreGemm 3_CUDA_Features/tf32TensorCoreGemm
3_CUDA_Features/globalToShmemAsyncCopy 3_CUDA_Features/warpAggregatedAtomicsCG
3_CUDA_Features/binaryPartitionCG 3_CUDA_Features/newdelete 3_CUDA_Features/cdpSimplePrint
3_CUDA_Features/ptxjit 3_CUDA_Features/cudaCompressibleMemory
4_CUDA_Libraries/simpleCUFFT 4_CUDA_Libraries/conjugateGradientCudaGraphs
5_Domain_Specific/BlackScholes 5_Domain_Specific/binomialOptions 5_Domain_Specific/SobolQRNG
5_Domain_Specific/quasirandomGenerator 5_Domain_Specific/fastWalshTransform
5_Domain_Specific/MonteCarloMultiGPU 5_Domain_Specific/FDTD3d 5_Domain_Specific/stereoDisparity
6_Performance/alignedTypes 6_Performance/transpose 6_Performance/LargeKernelParameter
"

usage() { sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | grep '^#' | sed 's/^# \{0,1\}//' >&2; exit 2; }

build() {
  local src=${1:?CUDA_SAMPLES} out=${2:?DIR} arch=${3:-90} work s name
  src=$(cd "$src" && pwd)
  mkdir -p "$out"; out=$(cd "$out" && pwd)
  work=$(mktemp -d /tmp/gvirtus-samples.XXXXXX)
  # A copy of what is built, each CMakeLists.txt naming one architecture instead of nine (the
  # build here takes minutes, not an hour); the samples' own files otherwise.
  mkdir -p "$work/src/Samples"
  cp -r "$src/Common" "$src/cmake" "$work/src/" 2>/dev/null || cp -r "$src/Common" "$work/src/"
  {
    echo "cmake_minimum_required(VERSION 3.20)"
    echo "project(gvirtus_samples LANGUAGES C CXX CUDA)"
    for s in $SAMPLES; do
      mkdir -p "$work/src/Samples/$(dirname "$s")"
      cp -r "$src/Samples/$s" "$work/src/Samples/$s"
      echo "add_subdirectory(Samples/$s)"
    done
  } > "$work/src/CMakeLists.txt"
  find "$work/src/Samples" -name CMakeLists.txt -exec \
    sed -i "s/set(CMAKE_CUDA_ARCHITECTURES [^)]*)/set(CMAKE_CUDA_ARCHITECTURES $arch)/" {} +
  cmake -S "$work/src" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CUDA_RUNTIME_LIBRARY=Shared -DCMAKE_CUDA_ARCHITECTURES="$arch" > "$work/configure.log" 2>&1 ||
    { tail -30 "$work/configure.log"; exit 1; }
  # A sample that does not build is named and left out; the others go on.
  ninja -C "$work/build" -k 0 > "$work/build.log" 2>&1 ||
    grep -E '^FAILED' "$work/build.log" | sed 's/^/build: /'
  for s in $SAMPLES; do
    name=$(basename "$s")
    local bin="$work/build/Samples/$s"
    [ -x "$bin/$name" ] || { echo "build: $name did not build"; continue; }
    mkdir -p "$out/$name"
    # The program and what its CMake copied beside it (data files, fatbinaries, PTX).
    find "$bin" -maxdepth 1 -type f ! -name '*.cmake' ! -name 'Makefile' ! -name '*.ninja' \
      -exec cp {} "$out/$name/" \;
    strip "$out/$name/$name" 2>/dev/null
  done
  rm -rf "$work"
  echo "built $(ls "$out" | wc -l) samples into $out ($(du -sh "$out" | cut -f1))"
}

LIMIT="${GVIRTUS_SAMPLES_TIMEOUT:-60}"
JOBS="${GVIRTUS_SAMPLES_JOBS:-8}"
# Samples whose input is random in each run (natively too): only their pass and fail lines count.
RANDOM_INPUT="fp16ScalarProduct"
verdicts() {  # FILE [NAME]
  if [[ " $RANDOM_INPUT " == *" ${2:-} "* ]]; then
    grep -aiE 'pass|fail' "$1" | head -20
  else
    grep -aiE 'pass|fail|result|error|mismatch|wrong|differ' "$1" | head -20
  fi
}

# one_run NAME TAG [COMMAND...]: runs DIR/NAME/NAME (after COMMAND, if given) in the program's
# folder (the samples look for their data there); its output into WORK/NAME.TAG, its exit status
# into WORK/NAME.TAG.rc, its wall time into WORK/NAME.TAG.s. DIR and WORK come from the
# environment: xargs runs it, several samples at a time.
one_run() {
  local name=$1 tag=$2 start end rc=0
  shift 2
  start=$(date +%s.%N)
  (cd "$DIR/$name" && timeout "$LIMIT" "$@" "./$name" > "$WORK/$name.$tag" 2>&1 < /dev/null) || rc=$?
  end=$(date +%s.%N)
  echo "$rc" > "$WORK/$name.$tag.rc"
  awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }' > "$WORK/$name.$tag.s"
}

# all_runs TAG [COMMAND...]: every sample, JOBS at a time (results are compared, not timed).
all_runs() {
  ls "$DIR" | xargs -P "$JOBS" -I{} bash -c 'one_run "$@"' _ {} "$@"
}

run() {
  local config name mode failed=0 same=0 differ=0 rc
  DIR=$(cd "${1:?DIR}" && pwd)
  local log=${2:?LOG}
  shift 2
  local build; build=$(realpath "${GVIRTUS_BUILD_DIR:-$ROOT/build}")
  local configs=("$@")
  [ ${#configs[@]} -eq 0 ] && configs=("${CONFIGS:-/tmp/gvirtus-gpu-configs}/shm.json")
  local device
  device="$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
  echo "cuda-samples through gvirtus: commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null)," \
       "date $(date -u +%Y-%m-%dT%H:%M:%SZ), device: ${device:-none found}; equal = same exit" \
       "status and verdict lines; $JOBS samples at a time" > "$log"
  WORK=$(mktemp -d /tmp/gvirtus-samples-run.XXXXXX)
  export DIR WORK LIMIT
  export -f one_run
  all_runs native
  for config in "${configs[@]}"; do
    config=$(realpath "$config")  # the runs start in each sample's folder
    "$build/bin/gvirtus-backend" --config "$config" 2> "$WORK/backend.log" &
    local backend=$!
    sleep 1
    for mode in runtime driver; do
      all_runs "$mode" "$build/bin/gvirtus-run" --mode "$mode" --config "$config" --
      echo -e "\n== $mode mode ($config)" >> "$log"
      for name in $(ls "$DIR"); do
        rc=$(cat "$WORK/$name.$mode.rc")
        if [ "$(cat "$WORK/$name.native.rc")" = "$rc" ] &&
           cmp -s <(verdicts "$WORK/$name.native" "$name") <(verdicts "$WORK/$name.$mode" "$name"); then
          same=$((same + 1))
          echo "$name: EQUAL (exit $rc), native $(cat "$WORK/$name.native.s") s, remoted" \
               "$(cat "$WORK/$name.$mode.s") s; $(verdicts "$WORK/$name.$mode" "$name" | tail -1)" >> "$log"
        else
          differ=$((differ + 1)); failed=1
          echo "$name: DIFFERENT (exit $(cat "$WORK/$name.native.rc") natively, $rc remoted)," \
               "native $(cat "$WORK/$name.native.s") s, remoted $(cat "$WORK/$name.$mode.s") s" >> "$log"
          diff <(verdicts "$WORK/$name.native" "$name") <(verdicts "$WORK/$name.$mode" "$name") |
            head -12 >> "$log"
          tail -8 "$WORK/$name.$mode" | sed 's/^/  remoted: /' >> "$log"
        fi
      done
    done
    kill -TERM "$backend"; wait "$backend" 2>/dev/null
    echo "-- backend's log (last lines):" >> "$log"; tail -10 "$WORK/backend.log" >> "$log"
  done
  echo -e "\n== result: $same equal, $differ different" >> "$log"
  rm -rf "$WORK"
  return $failed
}

case "${1:-}" in
  build) shift; build "$@" ;;
  run) shift; run "$@" ;;
  *) usage ;;
esac
