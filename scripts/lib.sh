# Shared by quickstart.sh and test.sh: install what is missing, configure and build.
# Idempotent: a second run installs nothing and rebuilds only what changed.

GVIRTUS_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${GVIRTUS_BUILD_DIR:-$GVIRTUS_ROOT/build}"

# Every program the build, the quick start and the tests run, as PROGRAM:PACKAGE, with the Debian
# package that installs it; and the packages that bring only libraries and headers. This is the one
# list: install_missing installs what it names and then checks each program on it, and the tests
# run with a PATH that holds these programs and nothing else (listed_programs_path), so a test that
# starts an unlisted program fails here, on every machine, not only on a fresh one.
# Programs the build runs (the CUDA toolkit's nvcc comes with the machine, not from Debian; without
# it CMake builds no CUDA part and says so).
GVIRTUS_BUILD_PROGRAMS=(cmake:cmake ctest:cmake cpack:cmake ninja:ninja-build g++:g++ gcc:gcc
  c++:g++ cc:gcc pkg-config:pkg-config python3:python3 nm:binutils readelf:binutils
  # the session fuzzer is built with clang++ and libFuzzer
  clang++:clang)
# Programs that the scripts, the quick start and the tests run that come with every Debian system
# (Essential packages): listed so that the PATH the quick start and the tests run with holds them.
GVIRTUS_BASE_PROGRAMS=(bash:bash sh:dash env:coreutils cat:coreutils cp:coreutils mv:coreutils
  rm:coreutils mkdir:coreutils ln:coreutils ls:coreutils head:coreutils tail:coreutils
  tr:coreutils sort:coreutils uniq:coreutils wc:coreutils tee:coreutils truncate:coreutils
  timeout:coreutils sleep:coreutils date:coreutils pwd:coreutils basename:coreutils
  dirname:coreutils realpath:coreutils readlink:coreutils mktemp:coreutils od:coreutils
  seq:coreutils id:coreutils nproc:coreutils printf:coreutils chmod:coreutils touch:coreutils
  cut:coreutils stat:coreutils grep:grep sed:sed awk:mawk find:findutils xargs:findutils
  diff:diffutils cmp:diffutils gzip:gzip tar:tar dpkg:dpkg dpkg-deb:dpkg dpkg-query:dpkg
  apt-get:apt apt-cache:apt)
# Programs only the tests run.
GVIRTUS_TEST_PROGRAMS=(
  # test programs' ldd and binary tools; git names the commit in benchmark JSON; the export
  # generator's test compiles and links a library of its own (the compiler runs as and ld)
  ldd:libc-bin strip:binutils as:binutils ld:binutils git:git
  # the packaging test checks the systemd unit
  systemd-analyze:systemd
  # the network-cut test (ip netns) and the VM harness (rdma link, Soft-RoCE devices)
  ip:iproute2 rdma:iproute2 ibv_devices:ibverbs-utils
  # the VM harness: qemu, a static busybox for the guest, its initramfs, the kernel's modules
  qemu-system-x86_64:qemu-system-x86 busybox:busybox-static cpio:cpio depmod:kmod modprobe:kmod
  # readable ASan and UBSan reports in the sanitized pass
  llvm-symbolizer:llvm
  # the metrics test scrapes a backend with a real Prometheus
  prometheus:prometheus
  # the GPU pool test runs a real Slurm (its prolog runs scontrol), with munge for its credentials
  slurmctld:slurmctld slurmd:slurmd sbatch:slurm-client squeue:slurm-client
  scancel:slurm-client scontrol:slurm-client sinfo:slurm-client munged:munge)
# Packages that bring libraries and headers only (checked by dpkg): GoogleTest, lz4, zstd,
# OpenSSL, prometheus-cpp (the backend's /metrics), libFuzzer's runtime, and rdma-core for the
# rdma communicator with its Soft-RoCE
# provider (the rdma plugin is built only where these are, so the quick start installs them too).
GVIRTUS_LIBRARY_PACKAGES=(libgtest-dev libgmock-dev liblz4-dev libzstd-dev libssl-dev
  prometheus-cpp-dev
  libclang-rt-14-dev libibverbs-dev librdmacm-dev ibverbs-providers)
# The system's own program directories: programs are taken from here only, never from a
# directory that someone's installation put first on PATH (/usr/local, pyenv, ...).
GVIRTUS_SYSTEM_PATH=/usr/sbin:/usr/bin:/sbin:/bin
# Python packages from PyPI that the build needs where the CUDA toolkit is (the call generators read
# CUDA's headers with cxxheaderparser), installed into GVIRTUS_PYTHON_DIR and checked.
GVIRTUS_PYTHON_PACKAGES=(cxxheaderparser==2.2.0)
GVIRTUS_PYTHON_DIR="$BUILD_DIR/tools/python"
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

# NVIDIA's CUDA 12 runtime (libcudart.so.12 and libcudart_static.a), which the driver-mode tests
# link programs with to show CUDA 12 programs run on gvirtus's libcuda.so.1 (tests/driver). PyPI
# has it; it has no CUDA 12 nvcc, so device code is compiled by the toolkit's nvcc.
GVIRTUS_CUDA12_PIP="nvidia-cuda-runtime-cu12==12.9.79"
GVIRTUS_CUDA12_DIR="$BUILD_DIR/tools/cuda12"

# Installs the CUDA 12 runtime from PyPI where the CUDA toolkit is, and checks it; stops, saying
# why, when it cannot (the driver-mode tests need it).
install_cuda12_runtime() {
  [ -x "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)" ] || return 0
  local lib="$GVIRTUS_CUDA12_DIR/nvidia/cuda_runtime/lib"
  pip_install_files "$GVIRTUS_CUDA12_PIP" "$GVIRTUS_CUDA12_DIR" \
    "the driver-mode tests run CUDA 12 programs on it" "$lib/libcudart.so.12" "$lib/libcudart_static.a"
}

# pip_install_files PACKAGE DIR WHY FILE...: installs PACKAGE (name==version, without its
# dependencies) from PyPI into DIR unless every FILE is there, then checks that each is; stops,
# saying WHY it is needed, when one is not.
pip_install_files() {
  local package=$1 dir=$2 why=$3 file missing=0
  shift 3
  for file in "$@"; do [ -f "$file" ] || missing=1; done
  [ "$missing" = 0 ] && return 0
  echo "== installing $package from PyPI into $dir"
  python3 -m pip install -q --disable-pip-version-check --no-deps --target "$dir" "$package" || true
  for file in "$@"; do
    if [ ! -f "$file" ]; then
      echo "error: scripts/lib.sh could not install $package (PyPI) into $dir ($file is" \
        "missing); $why" >&2
      exit 1
    fi
  done
}

# nvml.h, which the nvml plugin is generated from (src/plugins/nvml): not in every CUDA toolkit
# (not in the 13.0 one's packages here); PyPI has NVIDIA's header alone, matching CUDA 13.0.
GVIRTUS_NVML_HEADER_PIP="nvidia-nvml-dev==13.0.87"
GVIRTUS_NVML_DIR="$BUILD_DIR/tools/nvml"

# Installs nvml.h from PyPI where the CUDA toolkit is and has none, and checks it; stops, saying
# why, when it cannot (the build needs it).
install_nvml_header() {
  local nvcc
  nvcc="$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)"
  [ -x "$nvcc" ] || return 0
  [ -f "$(dirname "$nvcc")/../include/nvml.h" ] && return 0
  pip_install_files "$GVIRTUS_NVML_HEADER_PIP" "$GVIRTUS_NVML_DIR" \
    "the nvml plugin is generated from its nvml.h" "$GVIRTUS_NVML_DIR/nvidia/cu13/include/nvml.h"
}

# PyTorch for the framework tests (tests/frameworks: driver mode on the simulated device), from
# PyPI with its CUDA 13 libraries (about 4.5 GB; pip's cache keeps the wheels between runs).
GVIRTUS_TORCH_PIP="torch==2.11.0"
GVIRTUS_TORCH_DIR="$BUILD_DIR/tools/torch"
# NVIDIA's NVML bindings (module pynvml), beside PyTorch: torch.cuda.utilization(), memory_usage(),
# clock_rate() and the like go through them. The driver 580 line, as nvml.h (nvidia-nvml-dev 13.0).
GVIRTUS_PYNVML_PIP="nvidia-ml-py==13.580.82"
# CuPy for the framework tests (about 150 MB with NumPy; it compiles its kernels with the
# toolkit's NVRTC).
GVIRTUS_CUPY_PIP="cupy-cuda13x==14.2.0"
GVIRTUS_CUPY_DIR="$BUILD_DIR/tools/cupy"

# JAX for the framework tests, with its CUDA 13 plugin (XLA as a PJRT plugin; about 1 GB with
# NumPy and SciPy). The NVIDIA libraries it asks for are PyTorch's (GVIRTUS_TORCH_DIR has the CUDA
# 13 wheels jax-cuda13-plugin names), but for ptxas and libdevice, which XLA compiles its kernels
# with on the client: NVIDIA's nvcc wheels, in GVIRTUS_JAX_DIR/cuda-nvcc. JAX runs with
# PYTHONPATH=$GVIRTUS_JAX_DIR:$GVIRTUS_TORCH_DIR:$GVIRTUS_JAX_DIR/cuda-nvcc, in that order: it
# loads each library from the first nvidia/cu13 on the path.
GVIRTUS_JAX_PIP=(jax==0.10.2 jaxlib==0.10.2 jax-cuda13-plugin==0.10.2 jax-cuda13-pjrt==0.10.2)
GVIRTUS_JAX_NVCC_PIP=(nvidia-cuda-nvcc==13.0.88 nvidia-nvvm==13.0.88 nvidia-cuda-crt==13.0.88)
GVIRTUS_JAX_DIR="$BUILD_DIR/tools/jax"

# pip_install_checked PACKAGE DIR WHY [MODULE]: installs PACKAGE (name==version) from PyPI into DIR
# unless its module (MODULE, else the package's name) imports from there already, then checks that
# it does; stops, saying WHY it is needed, when it cannot.
pip_install_checked() {
  local package=$1 dir=$2 why=$3 module=${4:-${1%%=*}}
  PYTHONPATH="$dir" python3 -c "import $module" 2>/dev/null && return 0
  echo "== installing $package from PyPI into $dir"
  python3 -m pip install -q --disable-pip-version-check --target "$dir" "$package" || true
  if ! PYTHONPATH="$dir" python3 -c "import $module" 2>/dev/null; then
    echo "error: scripts/lib.sh could not install $package (PyPI) into $dir; $why" >&2
    exit 1
  fi
}

# Installs PyTorch, CuPy and JAX where the CUDA toolkit is (the framework tests run them).
install_frameworks() {
  [ -x "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)" ] || return 0
  pip_install_checked "$GVIRTUS_TORCH_PIP" "$GVIRTUS_TORCH_DIR" "the framework tests run it"
  pip_install_checked "$GVIRTUS_PYNVML_PIP" "$GVIRTUS_TORCH_DIR" \
    "the framework tests ask PyTorch for utilisation through it" pynvml
  pip_install_checked "$GVIRTUS_CUPY_PIP" "$GVIRTUS_CUPY_DIR" "the framework tests run it" cupy
  install_jax
}

# Installs JAX, its CUDA plugin and the nvcc it compiles with (GVIRTUS_JAX_PIP), and checks them.
install_jax() {
  local dir=$GVIRTUS_JAX_DIR ptxas=$GVIRTUS_JAX_DIR/cuda-nvcc/nvidia/cu13/bin/ptxas
  if ! PYTHONPATH="$dir" python3 -c "import jax, jax_plugins.xla_cuda13" 2>/dev/null; then
    echo "== installing ${GVIRTUS_JAX_PIP[*]} from PyPI into $dir"
    python3 -m pip install -q --disable-pip-version-check --target "$dir" "${GVIRTUS_JAX_PIP[@]}" ||
      true
    if ! PYTHONPATH="$dir" python3 -c "import jax, jax_plugins.xla_cuda13" 2>/dev/null; then
      echo "error: scripts/lib.sh could not install JAX (PyPI) into $dir; the framework tests" \
        "run it" >&2
      exit 1
    fi
  fi
  [ -x "$ptxas" ] && return 0
  echo "== installing ${GVIRTUS_JAX_NVCC_PIP[*]} from PyPI into $dir/cuda-nvcc"
  python3 -m pip install -q --disable-pip-version-check --no-deps --target "$dir/cuda-nvcc" \
    "${GVIRTUS_JAX_NVCC_PIP[@]}" || true
  if [ ! -x "$ptxas" ]; then
    echo "error: scripts/lib.sh could not install NVIDIA's nvcc (PyPI) into $dir/cuda-nvcc" \
      "($ptxas is missing); JAX compiles its kernels with it" >&2
    exit 1
  fi
}

# Installs the build's Python packages (GVIRTUS_PYTHON_PACKAGES) where the CUDA toolkit is.
install_python_packages() {
  command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ] || return 0
  local package
  for package in "${GVIRTUS_PYTHON_PACKAGES[@]}"; do
    pip_install_checked "$package" "$GVIRTUS_PYTHON_DIR" "the build needs it to read CUDA's headers"
  done
}

# The system's path of a listed program, or nothing.
system_program() { PATH=$GVIRTUS_SYSTEM_PATH command -v "$1" 2>/dev/null || true; }

package_installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

# The PROGRAM:PACKAGE entries that a purpose needs: build (the build and the quick start) or test.
listed_programs() {
  printf '%s\n' "${GVIRTUS_BUILD_PROGRAMS[@]}" "${GVIRTUS_BASE_PROGRAMS[@]}"
  [ "$1" = test ] && printf '%s\n' "${GVIRTUS_TEST_PROGRAMS[@]}"
  return 0
}

# install_missing [build|test]: installs every listed package that is missing, then checks that
# each listed program is there and stops, naming the program and its package, if one is not.
install_missing() {
  local purpose=${1:-test} entry program package missing=()
  install_cuobjdump
  install_python_packages
  install_nvml_header
  install_cuda12_runtime
  [ "$purpose" = test ] && install_frameworks
  for entry in $(listed_programs "$purpose"); do
    program=${entry%%:*} package=${entry#*:}
    [ -n "$(system_program "$program")" ] && package_installed "$package" && continue
    [[ " ${missing[*]} " == *" $package "* ]] || missing+=("$package")
  done
  for package in "${GVIRTUS_LIBRARY_PACKAGES[@]}"; do
    package_installed "$package" || [[ " ${missing[*]} " == *" $package "* ]] || missing+=("$package")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    echo "== installing: ${missing[*]}"
    $sudo apt-get update -qq
    # Without recommends: qemu would bring a desktop's worth of them.
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
      "${missing[@]}" || true
  fi
  local absent=()
  for entry in $(listed_programs "$purpose"); do
    program=${entry%%:*} package=${entry#*:}
    [ -n "$(system_program "$program")" ] || absent+=("$program (Debian package $package)")
  done
  for package in "${GVIRTUS_LIBRARY_PACKAGES[@]}"; do
    package_installed "$package" || absent+=("the libraries and headers of Debian package $package")
  done
  if [ ${#absent[@]} -gt 0 ]; then
    echo "== scripts/lib.sh could not install what the $purpose needs; missing:" >&2
    printf '   %s\n' "${absent[@]}" >&2
    echo "   (install them with apt-get, or fix GVIRTUS_*_PROGRAMS in scripts/lib.sh)" >&2
    exit 1
  fi
}

# listed_programs_path [build|test]: a directory holding a link to each listed program (and
# nothing else), for a PATH under which running an unlisted program fails at once.
listed_programs_path() {
  local dir="$BUILD_DIR/listed-programs" entry program
  rm -rf "$dir"; mkdir -p "$dir"
  for entry in $(listed_programs "${1:-test}"); do
    program=${entry%%:*}
    ln -sf "$(system_program "$program")" "$dir/$program"
  done
  echo "$dir"
}

build() {
  echo "== building in $BUILD_DIR"
  # nvml.h where install_nvml_header put it: under the first build directory, which a second
  # one (the sanitized tree) shares.
  local nvml_arg=()
  [ -f "$GVIRTUS_NVML_DIR/nvidia/cu13/include/nvml.h" ] &&
    nvml_arg=("-DGVIRTUS_NVML_INCLUDE_DIR=$GVIRTUS_NVML_DIR/nvidia/cu13/include")
  if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
    local cuobjdump_arg=()
    [ -x "$GVIRTUS_CUOBJDUMP_DIR/nvidia/cu13/bin/cuobjdump" ] &&
      cuobjdump_arg=("-DGVIRTUS_CUOBJDUMP=$GVIRTUS_CUOBJDUMP_DIR/nvidia/cu13/bin/cuobjdump")
    cmake -S "$GVIRTUS_ROOT" -B "$BUILD_DIR" -G Ninja "${cuobjdump_arg[@]}" "${nvml_arg[@]}" \
      -DGVIRTUS_PYTHONPATH="$GVIRTUS_PYTHON_DIR" ${GVIRTUS_CMAKE_ARGS:-}
  elif ! grep -q "^GVIRTUS_PYTHONPATH:PATH=$GVIRTUS_PYTHON_DIR\$" "$BUILD_DIR/CMakeCache.txt" ||
       grep -q "^GVIRTUS_NVML_INCLUDE_DIR:PATH=.*NOTFOUND" "$BUILD_DIR/CMakeCache.txt"; then
    # A tree configured before the generators read headers, or before nvml.h was installed (or
    # elsewhere): point it here.
    cmake -S "$GVIRTUS_ROOT" -B "$BUILD_DIR" -DGVIRTUS_PYTHONPATH="$GVIRTUS_PYTHON_DIR" \
      "${nvml_arg[@]}" >/dev/null
  fi
  cmake --build "$BUILD_DIR" -j "$(nproc)"
}
