#!/usr/bin/env bash
# Managed memory's cost against explicit copies (docs/managed-memory.md), side by side in one run:
# tests/driver/driver_managed_memory.cu through gvirtus's libcuda.so.1, against a backend on the
# simulated device per transport, once with managed memory (the mirror moves the chunks the host
# touches) and once with the same rounds moved by explicit cuMemcpyHtoD/DtoH (the baseline), each
# the median of REPEATS runs. Writes JSON: per transport, both times, their ratio, and the bytes
# the mirror moved (GVIRTUS_STATS) against the bytes the host touched.
#   run.sh BUILD_DIR OUT.json [ROUNDS] [REPEATS]
# Not GPU evidence: the device's side is the simulated device's memory.
set -euo pipefail
BUILD=$1 OUT=$2 ROUNDS=${3:-8} REPEATS=${4:-5}
PROGRAM=$BUILD/tests/driver/static/driver_managed_memory
STUB=$BUILD/lib/stub/driver
WORK=$(mktemp -d /tmp/gvirtus-managed-bench.XXXXXX)
BACKEND=
trap 'kill "$BACKEND" 2>/dev/null || true; wait "$BACKEND" 2>/dev/null || true; rm -rf "$WORK"' EXIT

start_backend() {  # $1: tcp or shm; sets BACKEND and writes $WORK/client.json
  local endpoint
  if [ "$1" = tcp ]; then
    endpoint='{"suite":"tcp/ip","protocol":"tcp","server_address":"127.0.0.1","port":"0"}'
  else
    endpoint="{\"suite\":\"shm\",\"protocol\":\"shm\",\"path\":\"$WORK/shm.sock\"}"
  fi
  echo "{\"communicator\":[{\"endpoint\":$endpoint,\"plugins\":[\"cuda-simulated\"]}]}" \
    > "$WORK/backend.json"
  : > "$WORK/backend.log"
  "$BUILD/bin/gvirtus-backend" --config "$WORK/backend.json" > "$WORK/backend.log" 2>&1 &
  BACKEND=$!
  for _ in $(seq 200); do grep -q "listening" "$WORK/backend.log" && break; sleep 0.05; done
  if [ "$1" = tcp ]; then
    local port
    port=$(grep -o 'listening on tcp://127.0.0.1:[0-9]*' "$WORK/backend.log" | head -1 | sed 's/.*://')
    endpoint="{\"suite\":\"tcp/ip\",\"protocol\":\"tcp\",\"server_address\":\"127.0.0.1\",\"port\":\"$port\"}"
  fi
  echo "{\"communicator\":[{\"endpoint\":$endpoint,\"plugins\":[]}]}" > "$WORK/client.json"
}

# One run's output (with GVIRTUS_STATS) into $WORK/run.txt; prints its rounds_seconds.
run_once() {
  env GVIRTUS_STATS=1 GVIRTUS_CONFIG="$WORK/client.json" LD_LIBRARY_PATH="$STUB" \
    "$PROGRAM" "$ROUNDS" "$@" > "$WORK/run.txt" 2>&1
  grep -q "wrong on the device: 0, device writes wrong on the host: 0" "$WORK/run.txt" ||
    { cat "$WORK/run.txt" >&2; exit 1; }
  grep -o 'rounds_seconds=[0-9.]*' "$WORK/run.txt" | cut -d= -f2
}

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
work_bytes() { awk -v what="$1" 'index($0, what" ") == 1 {print $(NF-2)}' "$WORK/run.txt" | head -1; }

MIB=$((1 << 20))
TOUCHED=$((ROUNDS * 2 * 64 * MIB))  # each round the host writes and reads all 64 MiB
{
  echo "{"
  echo "  \"what\": \"managed memory vs explicit copies, driver mode, simulated device (not GPU evidence)\","
  echo "  \"date\": \"$(date -u +%FT%TZ)\", \"commit\": \"$(git -C "$(dirname "$0")" rev-parse --short HEAD)\","
  echo "  \"machine\": \"$(nproc) cpus, $(uname -r)\", \"rounds\": $ROUNDS, \"region_bytes\": $((64 * MIB)),"
  echo "  \"host_bytes_touched\": $TOUCHED,"
  echo "  \"transports\": {"
  first=1
  for transport in tcp shm; do
    start_backend "$transport"
    managed=$(for _ in $(seq "$REPEATS"); do run_once; done | median)
    fetched=$(work_bytes "managed memory fetched")
    flushed=$(work_bytes "managed memory flushed")
    explicit=$(for _ in $(seq "$REPEATS"); do run_once explicit; done | median)
    kill "$BACKEND"; wait "$BACKEND" 2>/dev/null || true
    [ $first = 1 ] || echo ","
    first=0
    printf '    "%s": {"managed_s": %s, "explicit_s": %s, "managed_over_explicit": %s, ' \
      "$transport" "$managed" "$explicit" "$(awk -v a="$managed" -v b="$explicit" 'BEGIN {printf "%.3f", a / b}')"
    printf '"fetched_bytes": %s, "flushed_bytes": %s}' "$fetched" "$flushed"
  done
  echo ""
  echo "  }"
  echo "}"
} > "$OUT"
cat "$OUT"
