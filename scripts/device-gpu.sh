#!/usr/bin/env bash
# The GPU run on a machine lent through the device tool (/work/.library/device): it has CUDA,
# CMake and ninja but no apt and no internet, and may lack GoogleTest, OpenSSL, lz4, zstd and
# prometheus-cpp. So the packages travel from here, as .deb files, and are unpacked there under
# /tmp, never into /.
#
#   scripts/device-gpu.sh fetch       here: downloads googletest (its sources), OpenSSL, lz4,
#                                     zstd and prometheus-cpp (headers and libraries), the
#                                     cxxheaderparser wheel, NVIDIA's CUDA 12 runtime (for
#                                     driver mode's CUDA 12 programs) and nvml.h into .devdebs/
#                                     (git-ignored; name ".devdebs" in the run tool's carry list)
#   scripts/device-gpu.sh build       there: builds build-gpu/, taking each carried package only
#                                     where the machine lacks its headers
#   scripts/device-gpu.sh suite OUT   there: scripts/gpu-suite.sh (the parity programs native vs
#                                     through tcp and shm, runtime and driver mode, then ctest)
#                                     -> OUT/gpu-suite-DEV-DATE.log
#   scripts/device-gpu.sh frameworks OUT  there: bench/frameworks/torch_smoke.py, cupy_smoke.py, jax_smoke.py
#                                     natively and in driver mode over shm
#                                     -> OUT/frameworks-DEV-DATE.log
#   scripts/device-gpu.sh bench OUT   there: gvirtus-bench gpu (tcp and shm, runtime and driver
#                                     mode, vs native in one run), gvirtus-bench copy,
#                                     gvirtus-bench pool and gvirtus-bench frameworks
#                                     (PyTorch, driver mode, tcp and shm); add
#                                     --quick as a third argument for a short run)
#                                     -> OUT/gpu-DEV-DATE.{json,txt}
#   scripts/device-gpu.sh diagnose OUT MODE:PROGRAM...  there: each parity program again over
#                                     shm, unbuffered, the backend at debug level, a backtrace
#                                     where it crashed -> OUT/diagnose-DEV-DATE.log
#   scripts/device-gpu.sh all OUT     build, suite, frameworks and bench (--quick) in turn, each
#                                     step's time in OUT/steps-DEV-DATE.log; sized for one call
# DEV is the GPU's short name (h100, h200, ...) and DATE today's; each log names the commit.
# scripts/device-lease.sh runs these steps within one call's time and packs what they wrote into
# one file (the tool returns at most 8): the way to spend a lease.
# The configurations used there are etc/properties.json (tcp) and etc/examples/shm.json with the
# driver plugin "cuda" added to their plugins (written under /tmp/gvirtus-gpu-configs).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEBS="$ROOT/.devdebs"
BUILD="${GVIRTUS_DEVICE_BUILD:-$ROOT/build-gpu}"  # another build tree to try the steps here
DEVROOT=/tmp/gvirtus-devroot
GTEST_PREFIX=/tmp/gvirtus-gtest

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | grep '^#' | sed 's/^# \{0,1\}//' >&2; exit 2; }

fetch() {
  mkdir -p "$DEBS"
  # prometheus-cpp (the backend's /metrics) with what its CMake package looks for: civetweb, zlib
  # and curl (headers and libraries).
  (cd "$DEBS" && apt-get download googletest libssl-dev libssl3 liblz4-dev liblz4-1 libzstd-dev \
    libzstd1 prometheus-cpp-dev libprometheus-cpp-core1.0 libprometheus-cpp-pull1.0 \
    libprometheus-cpp-push1.0 civetweb libcivetweb-dev libcivetweb1 zlib1g-dev libcurl4-openssl-dev libcurl4)
  # The call generators' header parser (scripts/lib.sh: GVIRTUS_PYTHON_PACKAGES), as a wheel.
  python3 -m pip download -q --no-deps -d "$DEBS" cxxheaderparser==2.2.0
  # NVIDIA's CUDA 12 runtime (the pin is scripts/lib.sh's), for the driver tests' CUDA 12 programs.
  local cuda12; cuda12=$(sed -n 's/^GVIRTUS_CUDA12_PIP="\(.*\)"$/\1/p' "$ROOT/scripts/lib.sh")
  python3 -m pip install -q --disable-pip-version-check --no-deps --target "$DEBS/cuda12" "$cuda12"
  # nvml.h for the nvml plugin (the pin is scripts/lib.sh's), where the toolkit lacks it.
  local nvml; nvml=$(sed -n 's/^GVIRTUS_NVML_HEADER_PIP="\(.*\)"$/\1/p' "$ROOT/scripts/lib.sh")
  python3 -m pip install -q --disable-pip-version-check --no-deps --target "$DEBS/nvml" "$nvml"
  ls -la "$DEBS"
}

unpack() {  # every carried .deb under $DEVROOT (dpkg -x, or ar and tar where dpkg is missing)
  rm -rf "$DEVROOT"; mkdir -p "$DEVROOT"
  compgen -G "$DEBS/*.deb" >/dev/null || { echo "no .deb files in $DEBS: run 'fetch' here first" >&2; exit 1; }
  local deb member z
  for deb in "$DEBS"/*.deb; do
    if command -v dpkg >/dev/null; then
      dpkg -x "$deb" "$DEVROOT"
      continue
    fi
    member=$(ar t "$deb" | grep '^data\.tar')
    case $member in *.xz) z=-J ;; *.zst) z=--zstd ;; *.gz) z=-z ;; *) z= ;; esac
    ar p "$deb" "$member" | tar -x $z -C "$DEVROOT"
  done
}

# Whether the machine's compiler finds a header (GVIRTUS_DEVICE_USE_CARRIED=1: pretend not, to try
# the carried packages on a machine that has everything).
has_header() {
  [ "${GVIRTUS_DEVICE_USE_CARRIED:-0}" = 1 ] && return 1
  echo "#include <$1>" | c++ -E -x c++ - >/dev/null 2>&1
}

build() {
  unpack
  local cmake_args=(-G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo) prefixes=()
  if ! has_header lz4.h || ! has_header zstd.h || ! has_header prometheus/registry.h; then
    echo "== lz4, zstd and prometheus-cpp from the carried packages"
    prefixes+=("$DEVROOT/usr")
  fi
  if ! has_header gtest/gtest.h; then
    echo "== GoogleTest from the carried sources into $GTEST_PREFIX"
    cmake -S "$DEVROOT/usr/src/googletest" -B /tmp/gvirtus-gtest-build -G Ninja \
      -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$GTEST_PREFIX" >/dev/null
    cmake --build /tmp/gvirtus-gtest-build -j "$(nproc)" >/dev/null
    cmake --install /tmp/gvirtus-gtest-build >/dev/null
    prefixes+=("$GTEST_PREFIX")
  fi
  if ! has_header openssl/hmac.h; then
    echo "== OpenSSL's headers and libcrypto from the carried packages"
    cmake_args+=(-DOPENSSL_ROOT_DIR="$DEVROOT/usr"
                 -DOPENSSL_INCLUDE_DIR="$DEVROOT/usr/include"
                 -DOPENSSL_CRYPTO_LIBRARY="$DEVROOT/usr/lib/x86_64-linux-gnu/libcrypto.so.3")
  fi
  if ! python3 -c "import cxxheaderparser" 2>/dev/null; then
    echo "== cxxheaderparser from the carried wheel into $BUILD/tools/python"
    compgen -G "$DEBS/cxxheaderparser-*.whl" >/dev/null ||
      { echo "no cxxheaderparser wheel in $DEBS: run 'fetch' here first" >&2; exit 1; }
    mkdir -p "$BUILD/tools/python"
    python3 -m zipfile -e "$DEBS"/cxxheaderparser-*.whl "$BUILD/tools/python"  # pure Python
    cmake_args+=(-DGVIRTUS_PYTHONPATH="$BUILD/tools/python")
  fi
  if [ -f "$DEBS/nvml/nvidia/cu13/include/nvml.h" ]; then
    cmake_args+=(-DGVIRTUS_NVML_INCLUDE_DIR="$DEBS/nvml/nvidia/cu13/include")
  fi
  if [ -f "$DEBS/cuda12/nvidia/cuda_runtime/lib/libcudart_static.a" ]; then
    cmake_args+=(-DGVIRTUS_CUDA12_RUNTIME="$DEBS/cuda12/nvidia/cuda_runtime")
  fi
  [ ${#prefixes[@]} -eq 0 ] || cmake_args+=(-DCMAKE_PREFIX_PATH="$(IFS=';'; echo "${prefixes[*]}")")
  cmake -S "$ROOT" -B "$BUILD" "${cmake_args[@]}"
  # The tests' discovery runs them while building: libraries the carried ones need (civetweb under
  # prometheus-cpp) are found only through the loader's path, not the tests' RUNPATH.
  runtime_env
  # -k 0: a target that cannot build there (the fuzzers: that machine's clang has no libFuzzer
  # runtime; CI runs them) leaves the rest to build and run.
  cmake --build "$BUILD" -j "$(nproc)" -- -k 0
}

# Where carried libraries were built against, the programs find them at run time too (after the
# machine's own, which win where they exist). Once, however often it is called.
runtime_env() {
  local libs=$DEVROOT/usr/lib/x86_64-linux-gnu
  [ -d "$libs" ] || return 0
  case ":${LD_LIBRARY_PATH:-}:" in
    *":$libs:"*) ;;
    *) export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$libs" ;;
  esac
}

device_tag() {
  local name
  name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | tr 'A-Z' 'a-z')
  grep -oE '[a-z][0-9]{2,4}' <<<"$name" | head -1 || echo gpu
}

# The shipped tcp and shm configurations (they serve the runtime, the driver and NVML).
CONFIGS=/tmp/gvirtus-gpu-configs
driver_configs() {
  mkdir -p "$CONFIGS"
  cp "$ROOT/etc/properties.json" "$ROOT/etc/examples/shm.json" "$CONFIGS/"
}

suite() {
  local out=$1 tag; tag=$(device_tag)
  mkdir -p "$out"; runtime_env; driver_configs
  GVIRTUS_BUILD_DIR="$BUILD" "$ROOT/scripts/gpu-suite.sh" "$out/gpu-suite-$tag-$(date +%F).log" \
    "$CONFIGS/properties.json" "$CONFIGS/shm.json" || true
  cat "$out/gpu-suite-$tag-$(date +%F).log"
}

frameworks() {
  set +e  # a probe that fails is what the log is for
  local out=$1 tag log config backend script; tag=$(device_tag)
  mkdir -p "$out"; runtime_env; driver_configs
  log="$out/frameworks-$tag-$(date +%F).log"
  config="$CONFIGS/shm.json"
  {
    echo "frameworks: commit $(git -C "$ROOT" rev-parse --short HEAD), date $(date -u +%FT%TZ)"
    for script in torch_smoke cupy_smoke jax_smoke; do
      echo "==== $script"
      echo "== native"
      timeout 60 python3 "$ROOT/bench/frameworks/$script.py" > "$log.native" 2>&1
      echo "exit $?"; cat "$log.native"
      "$BUILD/bin/gvirtus-backend" --config "$config" 2> "$log.backend" &
      backend=$!
      sleep 1
      echo "== driver mode over shm"
      timeout 90 "$BUILD/bin/gvirtus-run" --mode driver --config "$config" -- \
        python3 "$ROOT/bench/frameworks/$script.py" > "$log.remote" 2>&1
      echo "exit $?"; tail -40 "$log.remote"
      kill -TERM "$backend"; wait "$backend" 2>/dev/null
      echo "== backend's log (last lines)"; tail -30 "$log.backend"
      echo "== diff native remote (standard output and error)"; diff "$log.native" "$log.remote"
    done
  } > "$log" 2>&1
  rm -f "$log.native" "$log.remote" "$log.backend"
  cat "$log"
}

bench() {
  local out=$1 quick=${2:-} tag; tag=$(device_tag)
  mkdir -p "$out"; runtime_env
  local base; base="$out/gpu-$tag-$(date +%F)"
  {
    echo "gvirtus-bench gpu: commit $(git -C "$ROOT" rev-parse --short HEAD), date $(date -u +%FT%TZ)," \
         "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
    "$BUILD/bin/gvirtus-bench" gpu --mode runtime --mode driver $quick --json "$base.json"
  } 2>&1 | tee "$base.txt"
  # Copies natively and through gvirtus over tcp and shm, beside each transport's raw streaming
  # (issue 23: pinned over shm >= 95% of native, over tcp >= 80%).
  base="$out/copy-$tag-$(date +%F)"
  {
    echo "gvirtus-bench copy: commit $(git -C "$ROOT" rev-parse --short HEAD)," \
         "date $(date -u +%FT%TZ)"
    "$BUILD/bin/gvirtus-bench" copy $quick --json "$base.json"
  } 2>&1 | tee "$base.txt"
  # Copies between two backends of a pool on the one GPU: direct against relayed (issue 22:
  # direct >= 1.8x relayed at 64 MiB), every byte checked on device memory.
  base="$out/pool-$tag-$(date +%F)"
  {
    echo "gvirtus-bench pool: commit $(git -C "$ROOT" rev-parse --short HEAD)," \
         "date $(date -u +%FT%TZ)"
    "$BUILD/bin/gvirtus-bench" pool $quick --json "$base.json"
  } 2>&1 | tee "$base.txt"
  # PyTorch's figures (time to the first tensor, matmul, MLP and ResNet-18 steps, the loss curve)
  # natively and in driver mode over tcp and shm.
  base="$out/frameworks-bench-$tag-$(date +%F)"
  {
    echo "gvirtus-bench frameworks: commit $(git -C "$ROOT" rev-parse --short HEAD)," \
         "date $(date -u +%FT%TZ)"
    "$BUILD/bin/gvirtus-bench" frameworks $quick --json "$base.json"
  } 2>&1 | tee "$base.txt"
}

# What a run's failures need looked at closer (-> OUT/diagnose-DEV-DATE.log): each given parity
# program run again in MODE over shm, its output unbuffered and the backend logging at debug
# level, and under cuda-gdb where it crashed (a backtrace).
#   diagnose OUT MODE:PROGRAM...   (PROGRAM in tests/e2e/programs or tests/driver/static)
diagnose() {
  set +e
  local out=$1 log tag item mode program bin backend rc; shift; tag=$(device_tag)
  mkdir -p "$out"; runtime_env; driver_configs
  log="$out/diagnose-$tag-$(date +%F).log"
  for item in "$@"; do
    mode=${item%%:*}; program=${item#*:}
    bin="$BUILD/tests/e2e/programs/$program"
    [ "$mode" = driver ] && bin="$BUILD/tests/driver/static/$program"
    {
      echo "== $program in $mode mode over shm"
      GVIRTUS_LOGLEVEL=debug "$BUILD/bin/gvirtus-backend" --config "$CONFIGS/shm.json" \
        2> "$log.backend" &
      backend=$!
      sleep 1
      timeout 60 stdbuf -o0 -e0 "$BUILD/bin/gvirtus-run" --mode "$mode" \
        --config "$CONFIGS/shm.json" -- "$bin" > "$log.out" 2>&1
      rc=$?
      echo "exit $rc; the last lines of its output:"; tail -12 "$log.out"
      if [ $rc -ge 128 ] && command -v cuda-gdb >/dev/null; then
        echo "-- under cuda-gdb:"
        timeout 90 "$BUILD/bin/gvirtus-run" --mode "$mode" --config "$CONFIGS/shm.json" -- \
          cuda-gdb -batch -ex run -ex bt -ex "info sharedlibrary" --args "$bin" 2>&1 |
          grep -vE '^\[(New|Thread|Detaching)' | tail -60
      fi
      kill -TERM "$backend"; wait "$backend" 2>/dev/null
      echo "-- backend's log (last 40 lines that are not per-call debug lines):"
      grep -vE 'debug: .*(call|reply)' "$log.backend" | tail -40
    } >> "$log" 2>&1
  done
  rm -f "$log.out" "$log.backend"
  cat "$log"
}

# Everything, each step's wall time logged as it ends: the order puts what no earlier session
# could see (driver mode, frameworks) before the suite's ctest and the bench.
all() {
  local out=$1 steps start
  mkdir -p "$out"; steps="$out/steps-$(device_tag)-$(date +%F).log"
  start=$SECONDS
  build > "$out/build-gpu.log" 2>&1 || grep -B2 -A8 FAILED "$out/build-gpu.log" | head -60
  echo "build: $((SECONDS - start)) s" | tee -a "$steps"
  start=$SECONDS; GVIRTUS_GPU_SUITE_CTEST=0 suite "$out"
  echo "parity (runtime and driver mode, tcp and shm): $((SECONDS - start)) s" | tee -a "$steps"
  start=$SECONDS; frameworks "$out"; echo "frameworks: $((SECONDS - start)) s" | tee -a "$steps"
  start=$SECONDS; bench "$out" --quick || true
  echo "bench (native, runtime and driver mode): $((SECONDS - start)) s" | tee -a "$steps"
  start=$SECONDS
  { echo "ctest: commit $(git -C "$ROOT" rev-parse --short HEAD), date $(date -u +%FT%TZ)"
    runtime_env; ctest --test-dir "$BUILD" -j "$(nproc)" --timeout 120 2>&1 |
      grep -vE '^ *[0-9]+/[0-9]+ Test +#[0-9]+: .* Passed'; } > "$out/ctest-$(device_tag)-$(date +%F).log"
  tail -30 "$out/ctest-$(device_tag)-$(date +%F).log"
  echo "ctest: $((SECONDS - start)) s" | tee -a "$steps"
}

# Run as a command; sourced (scripts/device-lease.sh), it only defines the functions above.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  case ${1:-} in
    fetch) fetch ;;
    build) build ;;
    suite) [ $# -ge 2 ] || usage; suite "$2" ;;
    bench) [ $# -ge 2 ] || usage; bench "$2" "${3:-}" ;;
    frameworks) [ $# -ge 2 ] || usage; frameworks "$2" ;;
    diagnose) [ $# -ge 3 ] || usage; out=$2; shift 2; diagnose "$out" "$@" ;;
    all) [ $# -ge 2 ] || usage; all "$2" ;;
    *) usage ;;
  esac
fi
