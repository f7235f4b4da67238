#!/usr/bin/env bash
# The quick start: installs what is missing, builds, starts gvirtus-backend on loopback with
# etc/properties.json, runs a sample client through it, and stops the backend.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
install_missing
build

BIN="$BUILD_DIR/bin"
CONFIG="$GVIRTUS_ROOT/etc/properties.json"
CUDA_SAMPLE="$BUILD_DIR/tests/e2e/programs/device_queries"
if [ ! -f "$BUILD_DIR/lib/gvirtus/libgvirtus-plugin-cudart.so" ]; then
  echo "== no CUDA toolkit was found: the backend serves ping only"
  CONFIG="$GVIRTUS_ROOT/etc/examples/core-only.json"
  CUDA_SAMPLE=""
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

echo "== running the sample through the backend"
"$BIN/gvirtus-ping" --config "$CONFIG" --count 1000 --bytes 64
"$BIN/gvirtus-ping" --config "$CONFIG" --count 20 --bytes $((4 << 20))
if [ -n "$CUDA_SAMPLE" ]; then
  echo "== an unmodified CUDA program (nvcc -cudart shared), natively:"
  "$CUDA_SAMPLE" > /tmp/gvirtus-native.$$ || true
  cat /tmp/gvirtus-native.$$
  echo "== the same program through gvirtus (gvirtus-run --config $CONFIG -- ...):"
  "$BIN/gvirtus-run" --config "$CONFIG" -- "$CUDA_SAMPLE" > /tmp/gvirtus-remote.$$ || true
  cat /tmp/gvirtus-remote.$$
  if cmp -s /tmp/gvirtus-native.$$ /tmp/gvirtus-remote.$$; then
    echo "== identical output natively and through gvirtus"
  else
    echo "== outputs differ:"; diff /tmp/gvirtus-native.$$ /tmp/gvirtus-remote.$$ || true
    rm -f /tmp/gvirtus-native.$$ /tmp/gvirtus-remote.$$
    exit 1
  fi
  rm -f /tmp/gvirtus-native.$$ /tmp/gvirtus-remote.$$
fi
echo "== done; stopping the backend"
