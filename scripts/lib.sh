# Shared by quickstart.sh and test.sh: install what is missing, configure and build.
# Idempotent: a second run installs nothing and rebuilds only what changed.

GVIRTUS_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${GVIRTUS_BUILD_DIR:-$GVIRTUS_ROOT/build}"

# Debian packages the build and tests need. The CUDA toolkit is optional (detected by CMake).
GVIRTUS_PACKAGES=(cmake ninja-build g++ pkg-config libgtest-dev libgmock-dev liblz4-dev libzstd-dev
  libssl-dev
  # the session fuzzer (clang++ with libFuzzer) and the network-cut test (ip netns)
  clang libclang-rt-14-dev iproute2)
# The rdma communicator (rdma-core headers) and the VM harness (tests/vm: qemu, busybox, the
# Soft-RoCE provider, rdma tool, initramfs tools); installed without recommends (no qemu GUI).
GVIRTUS_VM_PACKAGES=(libibverbs-dev librdmacm-dev ibverbs-providers iproute2 qemu-system-x86
                     busybox-static cpio kmod python3)
# cuobjdump (ground truth for the fatbin parser's tests) is not in the CUDA 13 toolkit; PyPI has it.
GVIRTUS_CUOBJDUMP_PIP="nvidia-cuda-cuobjdump==13.2.86"
GVIRTUS_CUOBJDUMP_DIR="$BUILD_DIR/tools/cuobjdump"

# Installs cuobjdump from PyPI when nvcc exists but no cuobjdump does. Not fatal: without it
# (PyPI unreachable, no pip) the fatbin tests skip and say why.
install_cuobjdump() {
  local nvcc
  nvcc="$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)"
  [ -x "$nvcc" ] || return 0
  command -v cuobjdump >/dev/null && return 0
  [ -x "$(dirname "$nvcc")/cuobjdump" ] && return 0
  [ -x "$GVIRTUS_CUOBJDUMP_DIR/nvidia/cu13/bin/cuobjdump" ] && return 0
  echo "== installing cuobjdump from PyPI ($GVIRTUS_CUOBJDUMP_PIP)"
  python3 -m pip install -q --disable-pip-version-check --target "$GVIRTUS_CUOBJDUMP_DIR" \
    "$GVIRTUS_CUOBJDUMP_PIP" || echo "== cuobjdump not installed; the fatbin tests will skip"
}

install_missing() {
  install_cuobjdump
  local missing=() missing_vm=()
  for p in "${GVIRTUS_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  for p in "${GVIRTUS_VM_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing_vm+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && [ ${#missing_vm[@]} -eq 0 ] && return 0
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  if [ ${#missing[@]} -gt 0 ]; then
    echo "== installing: ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
  fi
  if [ ${#missing_vm[@]} -gt 0 ]; then
    # Not fatal: without them the rdma plugin is not built and the VM test skips, saying why.
    echo "== installing (rdma and VM harness): ${missing_vm[*]}"
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
      "${missing_vm[@]}" || echo "== could not install ${missing_vm[*]}; tests/vm will skip"
  fi
}

build() {
  echo "== building in $BUILD_DIR"
  if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
    local cuobjdump_arg=()
    [ -x "$GVIRTUS_CUOBJDUMP_DIR/nvidia/cu13/bin/cuobjdump" ] &&
      cuobjdump_arg=("-DGVIRTUS_CUOBJDUMP=$GVIRTUS_CUOBJDUMP_DIR/nvidia/cu13/bin/cuobjdump")
    cmake -S "$GVIRTUS_ROOT" -B "$BUILD_DIR" -G Ninja "${cuobjdump_arg[@]}" ${GVIRTUS_CMAKE_ARGS:-}
  fi
  cmake --build "$BUILD_DIR" -j "$(nproc)"
}
