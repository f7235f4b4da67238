#!/usr/bin/env bash
# The quick start: installs what is missing, builds, starts gvirtus-backend on loopback with
# etc/properties.json, runs a sample client through it, and stops the backend.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
install_missing
build

BIN="$BUILD_DIR/bin"
CONFIG="$GVIRTUS_ROOT/etc/properties.json"
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
echo "== done; stopping the backend"
