#!/usr/bin/env bash
# One call of the device tool (/work/.library/device) spent well: the steps named, in order, each
# bounded by the time left of SECONDS, their output and logs gathered under /tmp/gvirtus-lease and
# packed into $OUT/gpu-PHASE.tgz at the end (the tool returns at most 8 files), the step times in
# $OUT/steps-PHASE.log. A step that would not fit is skipped and says so; a failed build stops the
# rest. Run it there with the carried packages (scripts/device-gpu.sh fetch, carry ".devdebs"):
#   bash scripts/device-lease.sh SECONDS PHASE STEP...
# Steps (scripts/device-gpu.sh does the work):
#   build      build-gpu/ with the carried packages where the machine lacks them
#   suite      the parity programs native vs through gvirtus (runtime and driver mode, tcp and shm)
#   frameworks the PyTorch, CuPy and JAX probes natively and in driver mode over shm
#   samples    NVIDIA's cuda-samples built here into .samples (scripts/gpu-samples.sh build; carry
#              .samples too), natively and in runtime and driver mode over shm
#   torchdiag  the PyTorch probe in driver mode over shm with both sides logging at debug level
#   bgpu bcopy bpool bfw   gvirtus-bench gpu, copy, pool and frameworks (--quick)
#   ctest      the whole suite (-j 16, the failures' output kept), but for what needs this machine's
#              absent tools (qemu, clang's libFuzzer, dpkg-deb's packages, Prometheus)
#   diagnose   each parity program the suite found different, again over shm with debug logs
# Give the tool's timeout_s some 20 s more than SECONDS, and name PHASE by the call (1, 2, ...).
set +e
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
TOTAL=${1:?usage: device-lease.sh SECONDS PHASE STEP...} PHASE=${2:?phase}
shift 2
W=/tmp/gvirtus-lease
mkdir -p "$W"
END=$((SECONDS + TOTAL))
STEPS=$W/steps-$PHASE.log
echo "phase $PHASE: commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)" \
     "(the sent tree may be newer), $(date -u +%FT%TZ)," \
     "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)," \
     "$(nproc) cpus" \
     >> "$STEPS"
export GVIRTUS_DEVICE_BUILD=$PWD/build-gpu
# device-gpu.sh's pieces: runtime_env (the carried libraries on the loader's path) and
# driver_configs (the shipped configurations with the driver's plugins, under $CONFIGS).
source scripts/device-gpu.sh
set +eu
step() {  # NAME LIMIT COMMAND...: runs COMMAND for at most LIMIT seconds (less if less is left)
  local name=$1 limit=$2 left=$((END - SECONDS - 15)) start=$SECONDS rc
  shift 2
  if [ $left -lt 15 ]; then echo "$name: skipped ($left s left)" >> "$STEPS"; return 1; fi
  [ "$limit" -gt $left ] && limit=$left
  timeout -k 5 "$limit" "$@" > "$W/$name-$PHASE.out" 2>&1
  rc=$?
  echo "$name: exit $rc in $((SECONDS - start)) s (limit $limit)" >> "$STEPS"
  return $rc
}
BENCH=build-gpu/bin/gvirtus-bench
export W CONFIG=$CONFIGS/shm.json
torch_diagnosis() {  # run by `timeout` through bash: exported
  GVIRTUS_LOGLEVEL=debug build-gpu/bin/gvirtus-backend --config "$CONFIG" 2> "$W/torch-backend.log" &
  local backend=$!
  sleep 1
  GVIRTUS_LOGLEVEL=debug timeout 45 build-gpu/bin/gvirtus-run --mode driver --config "$CONFIG" -- \
    python3 bench/frameworks/torch_smoke.py > "$W/torch-client.log" 2>&1
  echo "exit $?"
  kill "$backend"; wait "$backend"
  grep -v ' debug: ' "$W/torch-client.log" | tail -40
  gzip -9f "$W/torch-backend.log" "$W/torch-client.log"
}
export -f torch_diagnosis
for s in "$@"; do
  case $s in
    build)
      step build 300 bash scripts/device-gpu.sh build
      if ! [ -x build-gpu/bin/gvirtus-backend ]; then
        grep -A12 -E 'CMake Error|FAILED' "$W/build-$PHASE.out" | head -60
        break
      fi ;;
    suite) GVIRTUS_GPU_SUITE_CTEST=0 GVIRTUS_GPU_SUITE_TIMEOUT=60 \
             step suite 300 bash scripts/device-gpu.sh suite "$W" ;;
    frameworks) step frameworks 200 bash scripts/device-gpu.sh frameworks "$W" ;;
    samples) runtime_env; driver_configs
      if [ -d .samples ]; then
        GVIRTUS_BUILD_DIR=$GVIRTUS_DEVICE_BUILD GVIRTUS_SAMPLES_TIMEOUT=30 step samples 240 \
          bash scripts/gpu-samples.sh run .samples "$W/samples-$PHASE.log" "$CONFIGS/shm.json"
      else
        echo "samples: not run (no .samples: scripts/gpu-samples.sh build here, carry .samples)" >> "$STEPS"
      fi ;;
    torchdiag) runtime_env; driver_configs; step torchdiag 60 bash -c torch_diagnosis ;;
    bgpu) runtime_env
      step bench-gpu 150 "$BENCH" gpu --mode runtime --mode driver --quick --json "$W/gpu-$PHASE.json" ;;
    bcopy) runtime_env; step bench-copy 90 "$BENCH" copy --quick --json "$W/copy-$PHASE.json" ;;
    bpool) runtime_env; step bench-pool 90 "$BENCH" pool --quick --json "$W/pool-$PHASE.json" ;;
    bfw) runtime_env
      step bench-fw 200 "$BENCH" frameworks --quick --json "$W/frameworks-bench-$PHASE.json" ;;
    ctest) runtime_env
      step ctest 400 ctest --test-dir build-gpu -j 16 --timeout 90 --output-on-failure \
        -E '^(vm_rdma_vsock|.*fuzz.*|debs_build_with_checked_file_lists|install_tree_runs_a_sample|Prometheus\..*)$' ;;
    diagnose)
      items=$(awk '/^== runtime mode/{m="runtime"} /^== driver mode/{m="driver"} /^== NVML/{m=""}
                   / DIFFERENT /&&m!=""{sub(":","",$1); print m":"$1}' "$W"/gpu-suite-*.log 2>/dev/null |
              sort -u | head -6)
      echo "diagnose: ${items:-nothing differed}" >> "$STEPS"
      [ -n "$items" ] && step diagnose 150 bash scripts/device-gpu.sh diagnose "$W" $items ;;
    *) echo "unknown step $s" >> "$STEPS" ;;
  esac
done
pkill -f gvirtus-backend
tar czf "$OUT/gpu-$PHASE.tgz" -C "$W" . 2>/dev/null
cp "$STEPS" "$OUT/"
cat "$STEPS"
grep -hE 'DIFFERENT|result:|^== ' "$W"/gpu-suite-*.log 2>/dev/null | head -40
grep -hE 'DIFFERENT|result:' "$W"/samples-*.log 2>/dev/null | head -30
grep -hE 'tests passed|\*\*\*Failed|\*\*\*Timeout' "$W/ctest-$PHASE.out" 2>/dev/null | head -30
