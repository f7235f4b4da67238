#!/usr/bin/env bash
# The tests: installs what is missing, builds, and runs every test suite through ctest.
# Suites that need a GPU or other hardware skip themselves and say why.
# Then the same suites again from a second build directory under ASan+UBSan ($BUILD_DIR-asan;
# the fuzzer, the packaging tests, the VM harness and the framework tests are left out there);
# GVIRTUS_SKIP_SANITIZED=1 skips that.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# Each phase's time, so that a CI log shows where its minutes went (the budget: 45 minutes on
# CI's two cores, sanitized pass included).
phase() { echo "== [$((SECONDS / 60))m$((SECONDS % 60))s] $*"; }
phase "installing what is missing"
install_missing test
phase "building"
build
phase "built"
# The suites see only the listed programs (scripts/lib.sh): one that starts anything else fails.
LISTED=$(listed_programs_path test)
echo "== running ctest (PATH=$LISTED: the programs listed in scripts/lib.sh)"
PATH="$LISTED" "$LISTED/ctest" --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)" --timeout 900
# What ran inside the VM harness's guest (rdma and vsock), which ctest does not show on success.
if [ -f "$BUILD_DIR/tests/vm/work/summary.txt" ]; then cat "$BUILD_DIR/tests/vm/work/summary.txt"; fi
phase "tests done"

if [ "${GVIRTUS_SKIP_SANITIZED:-0}" != 1 ] && [[ "${GVIRTUS_CMAKE_ARGS:-}" != *SANITIZE* ]]; then
  phase "ASan+UBSan: building and running the suites in $BUILD_DIR-asan"
  # The sanitized tree runs the CUDA 12 programs on the runtime installed for the first one.
  BUILD_DIR="$BUILD_DIR-asan" GVIRTUS_CMAKE_ARGS="${GVIRTUS_CMAKE_ARGS:-} -DGVIRTUS_SANITIZE=ON \
    -DGVIRTUS_CUDA12_RUNTIME=$GVIRTUS_CUDA12_DIR/nvidia/cuda_runtime" build
  phase "sanitized tree built"
  # halt_on_error: a report fails its test; detect_leaks: the daemon's exit checks for leaks.
  # Left out: the fuzzer (sanitized already), the packaging tests, which install and package
  # the build as a user would and run uninstrumented programs with it (no ASan runtime there),
  # the VM harness (it ran above; under emulation it would double the suite's time), and the
  # framework tests (PyTorch's gigabytes of libraries in an uninstrumented Python under ASan's
  # runtime would cost minutes; the stub paths they take run sanitized in the library programs).
  ASAN_OPTIONS="detect_leaks=1:halt_on_error=1" UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" \
    PATH="$LISTED" "$LISTED/ctest" --test-dir "$BUILD_DIR-asan" --output-on-failure -j "$(nproc)" --timeout 900 \
    -E '^(session_fuzz|install_tree_runs_a_sample|debs_build_with_checked_file_lists|vm_rdma_vsock|Frameworks\..*)$'
  phase "sanitized tests done"
fi
