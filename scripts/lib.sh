# Shared by quickstart.sh and test.sh: install what is missing, configure and build.
# Idempotent: a second run installs nothing and rebuilds only what changed.

GVIRTUS_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${GVIRTUS_BUILD_DIR:-$GVIRTUS_ROOT/build}"

# Debian packages the build and tests need. The CUDA toolkit is optional (detected by CMake).
GVIRTUS_PACKAGES=(cmake ninja-build g++ pkg-config libgtest-dev libgmock-dev)

install_missing() {
  local missing=()
  for p in "${GVIRTUS_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "== installing: ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
}

build() {
  echo "== building in $BUILD_DIR"
  if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
    cmake -S "$GVIRTUS_ROOT" -B "$BUILD_DIR" -G Ninja ${GVIRTUS_CMAKE_ARGS:-}
  fi
  cmake --build "$BUILD_DIR" -j "$(nproc)"
}
