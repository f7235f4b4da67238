#!/usr/bin/env bash
# The GPU suite, for a machine with a GPU: the whole ctest suite, then every parity program
# (tests/e2e/programs and the samples) natively and through gvirtus over each transport given, with
# the CPU-reference checks counted. Writes a log with the date, the commit and the device.
#   scripts/gpu-suite.sh LOG [CONFIG...]   (default: etc/properties.json, tcp on loopback, and
#                                          etc/examples/shm.json, shm on this machine)
# mapped_memory (kernels using page-locked memory) runs only through a shm configuration.
# Expects an existing build (GVIRTUS_BUILD_DIR, default build/): the GPU machines have no apt.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${GVIRTUS_BUILD_DIR:-$ROOT/build}"
LOG="${1:?usage: scripts/gpu-suite.sh LOG [CONFIG...]}"
shift
CONFIGS=("$@")
[ ${#CONFIGS[@]} -eq 0 ] && CONFIGS=("$ROOT/etc/properties.json" "$ROOT/etc/examples/shm.json")
device="$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
{
  echo "gvirtus GPU suite: commit $(git -C "$ROOT" rev-parse --short HEAD)," \
       "date $(date -u +%Y-%m-%dT%H:%M:%SZ), device: ${device:-none found}"
  echo
  echo "== ctest (whole suite)"
  ctest --test-dir "$BUILD" -j "$(nproc)" --timeout 900 2>&1 | sed -n '/tests passed/,$p'
} > "$LOG"

programs=$(ls "$BUILD"/tests/e2e/programs/ | grep -v '\.')
failed=0
for config in "${CONFIGS[@]}"; do
  "$BUILD/bin/gvirtus-backend" --config "$config" 2> "$LOG.backend" &
  backend=$!
  sleep 1
  echo -e "\n== parity programs: native vs through gvirtus ($config)" >> "$LOG"
  for p in $programs; do
    if [ "$p" = mapped_memory ] && ! grep -q '"shm"' "$config"; then
      echo "$p: not run (kernels cannot reach client memory over this transport)" >> "$LOG"
      continue
    fi
    bin="$BUILD/tests/e2e/programs/$p"
    native_rc=0; "$bin" > "$LOG.native" 2>/dev/null || native_rc=$?
    remote_rc=0
    "$BUILD/bin/gvirtus-run" --config "$config" -- "$bin" > "$LOG.remote" 2>/dev/null || remote_rc=$?
    ok=$(grep -c ' ok$' "$LOG.native"); bad=$(grep -c 'FAILED' "$LOG.native")
    if cmp -s "$LOG.native" "$LOG.remote" && [ "$native_rc" = "$remote_rc" ]; then
      echo "$p: IDENTICAL (exit $native_rc), $ok CPU-reference checks ok, $bad failed" >> "$LOG"
    else
      failed=1
      echo "$p: DIFFERENT (exit $native_rc natively, $remote_rc remoted)" >> "$LOG"
      diff "$LOG.native" "$LOG.remote" | head -40 >> "$LOG"
    fi
    [ "$bad" = 0 ] || failed=1
  done
  kill -TERM "$backend"; wait "$backend" 2>/dev/null
done
rm -f "$LOG.native" "$LOG.remote" "$LOG.backend"
echo -e "\n== result: $([ $failed = 0 ] && echo all identical, no failed check || echo FAILURES above)" >> "$LOG"
exit $failed
