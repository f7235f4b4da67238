#!/usr/bin/env bash
# Runs stub_call_rate through a backend of one build, over one transport, and prints its figure.
#   run.sh BUILD_DIR tcp|shm PROGRAM [N]
# BUILD_DIR's gvirtus-backend and stub libcudart.so.13 are used: compare two builds by running
# this on each, alternately, on an otherwise idle machine.
set -euo pipefail
BUILD=$1 TRANSPORT=$2 PROGRAM=$3 N=${4:-20000}
WORK=$(mktemp -d /tmp/gvirtus-stub-rate.XXXXXX)
trap 'kill "$BACKEND" 2>/dev/null || true; wait "$BACKEND" 2>/dev/null || true; rm -rf "$WORK"' EXIT
if [ "$TRANSPORT" = tcp ]; then
  ENDPOINT='{"suite":"tcp/ip","protocol":"tcp","server_address":"127.0.0.1","port":"0"}'
else
  ENDPOINT="{\"suite\":\"shm\",\"protocol\":\"shm\",\"path\":\"$WORK/shm.sock\"}"
fi
cat > "$WORK/backend.json" <<JSON
{"communicator":[{"endpoint":$ENDPOINT,"plugins":["cudart"]}],"secure_application":false}
JSON
"$BUILD/bin/gvirtus-backend" --config "$WORK/backend.json" > "$WORK/backend.log" 2>&1 &
BACKEND=$!
for _ in $(seq 100); do
  grep -q "listening" "$WORK/backend.log" && break
  sleep 0.05
done
if [ "$TRANSPORT" = tcp ]; then
  PORT=$(grep -o 'listening on tcp://127.0.0.1:[0-9]*' "$WORK/backend.log" | head -1 | sed 's/.*://')
  ENDPOINT="{\"suite\":\"tcp/ip\",\"protocol\":\"tcp\",\"server_address\":\"127.0.0.1\",\"port\":\"$PORT\"}"
fi
cat > "$WORK/client.json" <<JSON
{"communicator":[{"endpoint":$ENDPOINT,"plugins":["cudart"]}],"secure_application":false}
JSON
GVIRTUS_CONFIG="$WORK/client.json" LD_LIBRARY_PATH="$BUILD/lib/stub" "$PROGRAM" "$N"
