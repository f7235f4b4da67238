#!/usr/bin/env bash
# The quick start: installs what is missing, builds, starts gvirtus-backend on loopback with
# etc/properties.json, runs CUDA samples (samples/) natively and through it, checks that both runs
# print the same and exit the same way, and stops the backend.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
install_missing build
build
# From here on, only the programs listed in scripts/lib.sh.
PATH=$(listed_programs_path build)

BIN="$BUILD_DIR/bin"
CONFIG="$GVIRTUS_ROOT/etc/properties.json"
CUDA_SAMPLES="$BUILD_DIR/samples/saxpy $BUILD_DIR/samples/matrixMul"
if [ ! -f "$BUILD_DIR/lib/gvirtus/libgvirtus-plugin-cudart.so" ]; then
  echo "== no CUDA toolkit was found: the backend serves ping only"
  CONFIG="$GVIRTUS_ROOT/etc/examples/core-only.json"
  CUDA_SAMPLES=""
fi
LOG="$(mktemp /tmp/gvirtus-backend.XXXXXX.log)"

echo "== starting gvirtus-backend --config $CONFIG (log: $LOG)"
"$BIN/gvirtus-backend" --config "$CONFIG" 2>"$LOG" &
BACKEND=$!
stop_backend() {
  kill -TERM "$BACKEND" 2>/dev/null && wait "$BACKEND" 2>/dev/null || true
  cat "$LOG"
  rm -f "$LOG"
}
trap stop_backend EXIT
for _ in $(seq 100); do
  grep -q "listening on" "$LOG" && break
  kill -0 "$BACKEND" 2>/dev/null || { echo "gvirtus-backend failed to start"; exit 1; }
  sleep 0.1
done

echo "== the backend answers (gvirtus-ping)"
"$BIN/gvirtus-ping" --config "$CONFIG" --count 1000 --bytes 64
failed=0
for sample in $CUDA_SAMPLES; do
  name=$(basename "$sample")
  echo "== $name, an unmodified CUDA program (nvcc -cudart shared), natively:"
  native_rc=0; "$sample" > /tmp/gvirtus-native.$$ || native_rc=$?
  cat /tmp/gvirtus-native.$$
  echo "== $name through gvirtus (gvirtus-run --config $CONFIG -- $name):"
  remote_rc=0; "$BIN/gvirtus-run" --config "$CONFIG" -- "$sample" > /tmp/gvirtus-remote.$$ || remote_rc=$?
  cat /tmp/gvirtus-remote.$$
  if cmp -s /tmp/gvirtus-native.$$ /tmp/gvirtus-remote.$$ && [ "$native_rc" = "$remote_rc" ]; then
    echo "== $name: identical output and exit status ($native_rc) natively and through gvirtus"
  else
    echo "== $name: runs differ (exit $native_rc natively, $remote_rc through gvirtus):"
    diff /tmp/gvirtus-native.$$ /tmp/gvirtus-remote.$$ || true
    failed=1
  fi
  rm -f /tmp/gvirtus-native.$$ /tmp/gvirtus-remote.$$
done
[ "$failed" = 0 ] || exit 1
echo "== what the backend reports (gvirtus-smi --config $CONFIG)"
"$BIN/gvirtus-smi" --config "$CONFIG"
echo "== done; stopping the backend"
