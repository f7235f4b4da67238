#!/usr/bin/env bash
# The tests: installs what is missing, builds, and runs every test suite through ctest.
# Suites that need a GPU or other hardware skip themselves and say why.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
install_missing
build
echo "== running ctest"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)" --timeout 900
# What ran inside the VM harness's guest (rdma and vsock), which ctest does not show on success.
if [ -f "$BUILD_DIR/tests/vm/work/summary.txt" ]; then cat "$BUILD_DIR/tests/vm/work/summary.txt"; fi
