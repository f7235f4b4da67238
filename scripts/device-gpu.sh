#!/usr/bin/env bash
# The GPU run on a machine lent through the device tool (/work/.library/device): it has CUDA,
# CMake and ninja but no apt and no internet, and may lack GoogleTest, OpenSSL, lz4 and zstd. So
# the packages travel from here, as .deb files, and are unpacked there under /tmp, never into /.
#
#   scripts/device-gpu.sh fetch       here: downloads googletest (its sources), OpenSSL, lz4 and
#                                     zstd (headers and libraries) and the cxxheaderparser wheel
#                                     into .devdebs/ (git-ignored; name ".devdebs" in the run
#                                     tool's carry list)
#   scripts/device-gpu.sh build       there: builds build-gpu/, taking each carried package only
#                                     where the machine lacks its headers
#   scripts/device-gpu.sh suite OUT   there: scripts/gpu-suite.sh (ctest, then the parity programs
#                                     native vs through tcp and shm) -> OUT/gpu-suite-DEV-DATE.log
#   scripts/device-gpu.sh bench OUT   there: gvirtus-bench gpu (tcp and shm vs native; add
#                                     --quick as a third argument for a short run)
#                                     -> OUT/gpu-DEV-DATE.{json,txt}
#   scripts/device-gpu.sh all OUT     build, suite and bench in turn (may outlast one call)
# DEV is the GPU's short name (h100, h200, ...) and DATE today's; each log names the commit.
# Each step fits in one call of the run tool (10 minutes); a warm machine keeps build-gpu/.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEBS="$ROOT/.devdebs"
BUILD="$ROOT/build-gpu"
DEVROOT=/tmp/gvirtus-devroot
GTEST_PREFIX=/tmp/gvirtus-gtest

usage() { sed -n '2,19p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }

fetch() {
  mkdir -p "$DEBS"
  (cd "$DEBS" && apt-get download googletest libssl-dev libssl3 liblz4-dev liblz4-1 libzstd-dev \
    libzstd1)
  # The call generators' header parser (scripts/lib.sh: GVIRTUS_PYTHON_PACKAGES), as a wheel.
  python3 -m pip download -q --no-deps -d "$DEBS" cxxheaderparser==2.2.0
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
  if ! has_header lz4.h || ! has_header zstd.h; then
    echo "== lz4 and zstd from the carried packages"
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
  [ ${#prefixes[@]} -eq 0 ] || cmake_args+=(-DCMAKE_PREFIX_PATH="$(IFS=';'; echo "${prefixes[*]}")")
  cmake -S "$ROOT" -B "$BUILD" "${cmake_args[@]}"
  cmake --build "$BUILD" -j "$(nproc)"
}

# Where carried libraries were built against, the programs find them at run time too (after the
# machine's own, which win where they exist).
runtime_env() {
  if [ -d "$DEVROOT/usr/lib/x86_64-linux-gnu" ]; then
    export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$DEVROOT/usr/lib/x86_64-linux-gnu"
  fi
}

device_tag() {
  local name
  name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | tr 'A-Z' 'a-z')
  grep -oE '[a-z][0-9]{2,4}' <<<"$name" | head -1 || echo gpu
}

suite() {
  local out=$1 tag; tag=$(device_tag)
  mkdir -p "$out"; runtime_env
  GVIRTUS_BUILD_DIR="$BUILD" "$ROOT/scripts/gpu-suite.sh" "$out/gpu-suite-$tag-$(date +%F).log" || true
  cat "$out/gpu-suite-$tag-$(date +%F).log"
}

bench() {
  local out=$1 quick=${2:-} tag; tag=$(device_tag)
  mkdir -p "$out"; runtime_env
  local base; base="$out/gpu-$tag-$(date +%F)"
  {
    echo "gvirtus-bench gpu: commit $(git -C "$ROOT" rev-parse --short HEAD), date $(date -u +%FT%TZ)," \
         "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
    "$BUILD/bin/gvirtus-bench" gpu $quick --json "$base.json"
  } 2>&1 | tee "$base.txt"
}

case ${1:-} in
  fetch) fetch ;;
  build) build ;;
  suite) [ $# -ge 2 ] || usage; suite "$2" ;;
  bench) [ $# -ge 2 ] || usage; bench "$2" "${3:-}" ;;
  all) [ $# -ge 2 ] || usage; build; suite "$2"; bench "$2" "${3:-}" ;;
  *) usage ;;
esac
