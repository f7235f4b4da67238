#!/usr/bin/env bash
# The GPU suite, for a machine with a GPU: the whole ctest suite, then every parity program run
# natively and through gvirtus over each transport given, with the CPU-reference checks counted:
#   runtime mode  tests/e2e/programs (built -cudart shared) on gvirtus's libcudart.so.13
#   driver mode   tests/driver/static (NVIDIA's runtime, static and shared, CUDA 12 and 13, and
#                 NVIDIA's libraries) on gvirtus's libcuda.so.1
#   NVML          tests/nvml's probe on gvirtus's libnvidia-ml.so.1 (configurations naming nvml)
# Each line gives both runs' wall time (the whole process: context creation, module loading and
# the work). Writes a log with the date, the commit and the device.
#   scripts/gpu-suite.sh LOG [CONFIG...]   (default: etc/properties.json, tcp on loopback, and
#                                          etc/examples/shm.json, shm on this machine)
# Programs that hand kernels page-locked client memory run only through a shm configuration.
# Expects an existing build (GVIRTUS_BUILD_DIR, default build/): the GPU machines have no apt.
# GVIRTUS_GPU_SUITE_CTEST=0 leaves the ctest suite out; GVIRTUS_GPU_SUITE_TIMEOUT (seconds, default
# 120) bounds each program's run.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${GVIRTUS_BUILD_DIR:-$ROOT/build}"
LOG="${1:?usage: scripts/gpu-suite.sh LOG [CONFIG...]}"
shift
CONFIGS=("$@")
[ ${#CONFIGS[@]} -eq 0 ] && CONFIGS=("$ROOT/etc/properties.json" "$ROOT/etc/examples/shm.json")
LIMIT="${GVIRTUS_GPU_SUITE_TIMEOUT:-120}"
device="$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
echo "gvirtus GPU suite: commit $(git -C "$ROOT" rev-parse --short HEAD)," \
     "date $(date -u +%Y-%m-%dT%H:%M:%SZ), device: ${device:-none found}" > "$LOG"
failed=0

# Runs a program, its wall time in seconds into the variable named by $1 and its exit status into
# the one named by $2; its standard output goes to $3.
timed_run() {
  local -n seconds_=$1 status_=$2
  local out=$3 start end
  shift 3
  start=$(date +%s.%N)
  status_=0; timeout "$LIMIT" "$@" > "$out" 2>/dev/null || status_=$?
  end=$(date +%s.%N)
  seconds_=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }')
}

# parity MODE DIR CONFIG: every program in DIR, natively and through gvirtus in MODE.
parity() {
  local mode=$1 dir=$2 config=$3 p bin native_s remote_s native_rc remote_rc ok bad args
  echo -e "\n== $mode mode: native vs through gvirtus ($config)" >> "$LOG"
  for p in $(ls "$dir" | grep -v '\.'); do
    case $p in mapped_memory|host_mapped)
      if ! grep -q '"shm"' "$config"; then
        echo "$p: not run (kernels cannot reach client memory over this transport)" >> "$LOG"
        continue
      fi ;;
    esac
    bin="$dir/$p"
    args=()  # the driver programs that load a module take the saxpy fatbinary built beside them
    case $p in driver_api|driver_graph_nodes|driver_context_answers|pool_devices)
      args=("$dir/saxpy.fatbin") ;;
    esac
    timed_run native_s native_rc "$LOG.native" "$bin" "${args[@]}"
    timed_run remote_s remote_rc "$LOG.remote" \
      "$BUILD/bin/gvirtus-run" --mode "$mode" --config "$config" -- "$bin" "${args[@]}"
    ok=$(grep -c ' ok$' "$LOG.native"); bad=$(grep -c 'FAILED' "$LOG.native")
    if cmp -s "$LOG.native" "$LOG.remote" && [ "$native_rc" = "$remote_rc" ]; then
      echo "$p: IDENTICAL (exit $native_rc), $ok CPU-reference checks ok, $bad failed;" \
           "native ${native_s} s, remoted ${remote_s} s" >> "$LOG"
    else
      failed=1
      echo "$p: DIFFERENT (exit $native_rc natively, $remote_rc remoted);" \
           "native ${native_s} s, remoted ${remote_s} s" >> "$LOG"
      diff "$LOG.native" "$LOG.remote" | head -40 >> "$LOG"
    fi
    [ "$bad" = 0 ] || failed=1
  done
}

# nvml_parity CONFIG: tests/nvml/nvml_probe.c on NVIDIA's NVML and on gvirtus's (the backend's
# configuration must name the nvml plugin). Figures that move between two reads (utilisation,
# clocks, memory in use) are compared without their numbers, and the setter's answer without its
# value: natively it changes the GPU (as root), through gvirtus it is never remoted by design
# (docs/nvml.md: the backend's GPUs are shared) and tests/nvml asserts that refusal.
nvml_parity() {
  local config=$1 probe="$BUILD/tests/nvml/nvml-probe" native_rc=0 remote_rc=0
  [ -x "$probe" ] || return 0
  echo -e "\n== NVML: native vs through gvirtus ($config)" >> "$LOG"
  if ! grep -q '"nvml"' "$config"; then
    echo "nvml-probe: not run (the configuration names no nvml plugin)" >> "$LOG"
    return 0
  fi
  timeout "$LIMIT" "$probe" > "$LOG.native" 2>&1 || native_rc=$?
  GVIRTUS_CONFIG="$config" LD_LIBRARY_PATH="$BUILD/lib/stub/nvml" timeout "$LIMIT" "$probe" \
    2>/dev/null > "$LOG.remote" || remote_rc=$?
  local moving='s/^\(  \(utilization\|sm clock\|memory\)\).*/\1 (a figure that moves)/'
  moving+='; s/^\(set persistence mode:\).*/\1 (refused through gvirtus by design)/'
  if cmp -s <(sed "$moving" "$LOG.native") <(sed "$moving" "$LOG.remote") &&
     [ "$native_rc" = "$remote_rc" ]; then
    echo "nvml-probe: IDENTICAL (exit $native_rc), moving figures compared without numbers" >> "$LOG"
  else
    failed=1
    echo "nvml-probe: DIFFERENT (exit $native_rc natively, $remote_rc remoted)" >> "$LOG"
    diff "$LOG.native" "$LOG.remote" | head -40 >> "$LOG"
  fi
  sed 's/^/  native: /' "$LOG.native" | head -30 >> "$LOG"
}

for config in "${CONFIGS[@]}"; do
  "$BUILD/bin/gvirtus-backend" --config "$config" 2> "$LOG.backend" &
  backend=$!
  sleep 1
  nvml_parity "$config"
  parity runtime "$BUILD/tests/e2e/programs" "$config"
  [ -d "$BUILD/tests/driver/static" ] && parity driver "$BUILD/tests/driver/static" "$config"
  kill -TERM "$backend"; wait "$backend" 2>/dev/null
  echo "-- backend's log (last lines):" >> "$LOG"; tail -15 "$LOG.backend" >> "$LOG"
done

if [ "${GVIRTUS_GPU_SUITE_CTEST:-1}" != 0 ]; then
  echo -e "\n== ctest (whole suite)" >> "$LOG"
  ctest --test-dir "$BUILD" -j "$(nproc)" --timeout 300 2>&1 |
    grep -E 'tests passed|\*\*\*|Failed|Not Run|Timeout|Skipped|Total Test' >> "$LOG"
  [ "${PIPESTATUS[0]}" = 0 ] || failed=1
fi
rm -f "$LOG.native" "$LOG.remote" "$LOG.backend"
echo -e "\n== result: $([ $failed = 0 ] && echo all identical, no failed check || echo FAILURES above)" >> "$LOG"
exit $failed
