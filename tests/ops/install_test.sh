#!/usr/bin/env bash
# Installs the build into a temporary prefix and runs everything from there, with nothing from the
# build tree on any path and no GVIRTUS_* variable set: the installed backend finds its
# configuration and plugin from its own location, the installed gvirtus-run puts the installed stub
# in front of a sample, and the installed gvirtus-smi sees that session's backend.
#   install_test.sh BUILD_DIR
# Without the CUDA toolkit (no stub, no samples) only the layout and gvirtus-smi are checked.
set -euo pipefail
BUILD="$1"
WORK="$(mktemp -d /tmp/gvirtus-install-test.XXXXXX)"
P="$WORK/prefix"
BACKEND_PID=""
cleanup() {
  [ -n "$BACKEND_PID" ] && kill -TERM "$BACKEND_PID" 2>/dev/null && wait "$BACKEND_PID" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  [ -f "$WORK/backend.log" ] && { echo "--- backend log"; cat "$WORK/backend.log"; }
  exit 1
}
# A clean environment: the system's PATH only, no LD_LIBRARY_PATH, no GVIRTUS_CONFIG/HOME.
clean() { env -i PATH=/usr/bin:/bin HOME="$WORK" "$@"; }

cmake --install "$BUILD" --prefix "$P" >"$WORK/install.log" || { cat "$WORK/install.log"; fail "cmake --install"; }

echo "== layout of $P"
for f in bin/gvirtus-backend bin/gvirtus-run bin/gvirtus-smi bin/gvirtus-bench bin/gvirtus-ping \
         etc/gvirtus/properties.json lib/systemd/system/gvirtus-backend.service \
         libexec/gvirtus/gvirtus-slurm-task-prolog lib/gvirtus/stub/preload/libgvirtus-device-node.so; do
  [ -e "$P/$f" ] || fail "$f is not installed"
done
HAVE_CUDA=0
[ -e "$BUILD/lib/gvirtus/libgvirtus-plugin-cudart.so" ] && HAVE_CUDA=1
if [ "$HAVE_CUDA" = 1 ]; then
  for f in lib/gvirtus/stub/libcudart.so.13 lib/gvirtus/stub/libgvirtus-frontend.so.1 \
           lib/gvirtus/stub/driver/libcuda.so.1 bin/gvirtus-bench-driver bin/gvirtus-bench-peer \
           lib/gvirtus/stub/nvml/libnvidia-ml.so.1 lib/gvirtus/libgvirtus-plugin-nvml.so \
           lib/gvirtus/libgvirtus-plugin-nvml-simulated.so lib/gvirtus/libgvirtus-simulated-nvml.so \
           lib/gvirtus/libgvirtus-plugin-cudart.so lib/gvirtus/libgvirtus-plugin-cuda.so \
           lib/gvirtus/libgvirtus-plugin-cuda-simulated.so lib/gvirtus/libgvirtus-simulated-cuda.so \
           libexec/gvirtus/samples/saxpy libexec/gvirtus/gvirtus-copy-workload \
           lib/gvirtus/libgvirtus-accepting-device.so; do
    [ -e "$P/$f" ] || fail "$f is not installed"
  done
  # The stub only where gvirtus-run (or an explicit LD_LIBRARY_PATH) picks it up.
  [ "$(find "$P" -name 'libcudart.so*' | wc -l)" = 1 ] || fail "the stub is installed twice"
  [ "$(find "$P" -name 'libcuda.so*' | wc -l)" = 1 ] || fail "the driver stub is installed twice"
  [ "$(find "$P" -name 'libnvidia-ml.so*' | wc -l)" = 1 ] || fail "the NVML stub is installed twice"
fi
grep -qx "ExecStart=$P/bin/gvirtus-backend --config $P/etc/gvirtus/properties.json" \
  "$P/lib/systemd/system/gvirtus-backend.service" || fail "the unit's ExecStart does not name $P"
# The unit is one systemd accepts (directive names, paths), where systemd's tools are.
if command -v systemd-analyze >/dev/null; then
  systemd-analyze verify "$P/lib/systemd/system/gvirtus-backend.service" >"$WORK/verify" 2>&1 ||
    fail "systemd-analyze verify: $(cat "$WORK/verify")"
  [ ! -s "$WORK/verify" ] || fail "systemd-analyze verify warns: $(cat "$WORK/verify")"
fi
# No installed program or library looks for libraries in the build tree (RPATH/RUNPATH).
for f in $(find "$P/bin" "$P/lib" -type f); do
  if readelf -d "$f" 2>/dev/null | grep -E "R(UN)?PATH" | grep -qF "$BUILD"; then
    fail "$f has a run path into the build tree: $(readelf -d "$f" | grep -E 'R(UN)?PATH')"
  fi
done

echo "== the installed backend, started with no --config and no GVIRTUS_* variable"
CONFIG="$P/etc/gvirtus/properties.json"
sed -i 's/"port": *"[0-9]*"/"port": "0"/' "$CONFIG"
: >"$WORK/backend.log"  # exists before the background job opens it
# Not through clean(): $! must be the backend itself (env execs it), not a subshell.
env -i PATH=/usr/bin:/bin GVIRTUS_LOGLEVEL=info "$P/bin/gvirtus-backend" 2>"$WORK/backend.log" &
BACKEND_PID=$!
PORT=""
for _ in $(seq 100); do
  PORT="$(sed -n 's/.*listening on tcp:\/\/127.0.0.1:\([0-9]*\).*/\1/p' "$WORK/backend.log" | head -1)"
  [ -n "$PORT" ] && break
  kill -0 "$BACKEND_PID" 2>/dev/null || fail "gvirtus-backend did not start"
  sleep 0.1
done
[ -n "$PORT" ] || fail "gvirtus-backend did not report its port"
grep -qF "configuration from $CONFIG" "$WORK/backend.log" || fail "the backend did not use $CONFIG"
if [ "$HAVE_CUDA" = 1 ]; then
  grep -qF "loaded plugin cudart from $P/lib/gvirtus/libgvirtus-plugin-cudart.so" \
    "$WORK/backend.log" || fail "the backend did not load the installed plugin"
fi
# Clients read the same installed file: point it at the port the backend got.
sed -i "s/\"port\": *\"0\"/\"port\": \"$PORT\"/" "$CONFIG"

if [ "$HAVE_CUDA" = 1 ]; then
  echo "== samples/saxpy natively and through the installed gvirtus-run (no --config)"
  SAXPY="$P/libexec/gvirtus/samples/saxpy"
  native_rc=0
  clean "$SAXPY" >"$WORK/native.out" 2>/dev/null || native_rc=$?
  remote_rc=0
  clean "$P/bin/gvirtus-run" -- "$SAXPY" >"$WORK/remote.out" 2>"$WORK/remote.err" || remote_rc=$?
  cat "$WORK/native.out"
  [ -s "$WORK/native.out" ] || fail "the native run printed nothing"
  cmp -s "$WORK/native.out" "$WORK/remote.out" ||
    fail "outputs differ: $(diff "$WORK/native.out" "$WORK/remote.out"; cat "$WORK/remote.err")"
  [ "$native_rc" = "$remote_rc" ] || fail "exit status $native_rc natively, $remote_rc remotely"
  grep -q "session with saxpy" "$WORK/backend.log" || fail "the run did not go through the backend"
  echo "identical output and exit status ($native_rc)"
fi

echo "== the installed gvirtus-smi (no --config)"
smi_rc=0
clean "$P/bin/gvirtus-smi" >"$WORK/smi.out" 2>&1 || smi_rc=$?
cat "$WORK/smi.out"
[ "$smi_rc" = 0 ] || fail "gvirtus-smi exited with $smi_rc"
grep -qF "configuration $CONFIG" "$WORK/smi.out" || fail "gvirtus-smi did not use $CONFIG"
grep -qF "Backend tcp 127.0.0.1:$PORT: gvirtus-backend" "$WORK/smi.out" || fail "no backend block"
echo "PASS"
