#!/usr/bin/env bash
# Builds the two Debian packages from the build tree (cpack -G DEB) and checks them: the exact
# file list of each, the conffile, the dependency of the backend on the client of the same
# version, and the systemd unit's paths for the /usr prefix.
#   deb_test.sh BUILD_DIR VERSION
# Exits 77 (ctest: skipped) when dpkg-deb is missing (not a Debian-based machine).
set -euo pipefail
BUILD="$1"
VERSION="$2"
command -v dpkg-deb >/dev/null || { echo "SKIP: dpkg-deb is not installed"; exit 77; }
WORK="$(mktemp -d /tmp/gvirtus-deb-test.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

cpack --config "$BUILD/CPackConfig.cmake" -G DEB -B "$WORK" >"$WORK/cpack.log" 2>&1 ||
  { cat "$WORK/cpack.log"; fail "cpack"; }
ARCH="$(dpkg --print-architecture)"
CLIENT="$WORK/gvirtus-client_${VERSION}_${ARCH}.deb"
BACKEND="$WORK/gvirtus-backend_${VERSION}_${ARCH}.deb"
[ -f "$CLIENT" ] && [ -f "$BACKEND" ] || { ls "$WORK"; fail "the two packages were not written"; }

HAVE_CUDA=0
[ -e "$BUILD/lib/gvirtus/libgvirtus-plugin-cudart.so" ] && HAVE_CUDA=1
# Communicator plugins (libgvirtus-comm-<name>.so) are built only where their libraries are
# (rdma-core...): they belong to the client package, which both sides install, and are listed
# apart from the fixed list.
files() {
  dpkg-deb -c "$1" | awk '{print $6}' | grep -v '/$' | sed 's|^\./|/|' |
    grep -v '^/usr/lib/gvirtus/libgvirtus-comm-[a-z0-9_-]*\.so$' | sort || true
}
comm_plugins() { dpkg-deb -c "$1" | awk '{print $6}' | grep -c 'libgvirtus-comm-' || true; }
expect() { printf '%s\n' "$@" | sort; }

expect /etc/gvirtus/properties.json /usr/bin/gvirtus-bench /usr/bin/gvirtus-ping \
  /usr/bin/gvirtus-run /usr/bin/gvirtus-smi /usr/share/doc/gvirtus/README.md \
  /usr/share/doc/gvirtus/configuration.md /usr/share/doc/gvirtus/install.md \
  /usr/share/doc/gvirtus/transports.md /usr/share/doc/gvirtus/troubleshooting.md \
  /usr/lib/gvirtus/stub/libgvirtus-frontend.so.1 /usr/libexec/gvirtus/gvirtus-slurm-task-prolog \
  /usr/lib/gvirtus/stub/preload/libgvirtus-device-node.so \
  $([ "$HAVE_CUDA" = 1 ] && echo /usr/lib/gvirtus/stub/libcudart.so.13 \
      /usr/lib/gvirtus/stub/driver/libcuda.so.1 /usr/lib/gvirtus/stub/nvml/libnvidia-ml.so.1 \
      /usr/bin/gvirtus-bench-driver /usr/bin/gvirtus-bench-peer \
      /usr/libexec/gvirtus/samples/saxpy /usr/libexec/gvirtus/samples/matrixMul \
      /usr/libexec/gvirtus/samples/streams_events /usr/libexec/gvirtus/gpu_workloads \
      /usr/libexec/gvirtus/gvirtus-copy-workload /usr/lib/gvirtus/libgvirtus-accepting-device.so) >"$WORK/client.expected"
expect /usr/bin/gvirtus-backend /usr/lib/systemd/system/gvirtus-backend.service \
  $([ "$HAVE_CUDA" = 1 ] && echo /usr/lib/gvirtus/libgvirtus-plugin-cudart.so \
      /usr/lib/gvirtus/libgvirtus-plugin-cuda.so /usr/lib/gvirtus/libgvirtus-plugin-cuda-simulated.so \
      /usr/lib/gvirtus/libgvirtus-simulated-cuda.so /usr/lib/gvirtus/libgvirtus-plugin-nvml.so \
      /usr/lib/gvirtus/libgvirtus-plugin-nvml-simulated.so /usr/lib/gvirtus/libgvirtus-simulated-nvml.so) \
  >"$WORK/backend.expected"
files "$CLIENT" >"$WORK/client.files"
files "$BACKEND" >"$WORK/backend.files"
for p in client backend; do
  echo "== gvirtus-$p: $(wc -l <"$WORK/$p.files") files"
  cat "$WORK/$p.files"
  diff -u "$WORK/$p.expected" "$WORK/$p.files" || fail "gvirtus-$p's files differ from the expected list"
done

[ "$(comm_plugins "$BACKEND")" = 0 ] || fail "communicator plugins belong to gvirtus-client"
dpkg-deb -e "$CLIENT" "$WORK/client.control"
grep -qx /etc/gvirtus/properties.json "$WORK/client.control/conffiles" ||
  fail "the configuration is not a conffile"
[ "$(dpkg-deb -f "$BACKEND" Depends | grep -o "gvirtus-client (= $VERSION)")" ] ||
  fail "gvirtus-backend does not depend on gvirtus-client (= $VERSION): $(dpkg-deb -f "$BACKEND" Depends)"
dpkg-deb --fsys-tarfile "$BACKEND" | tar -xO ./usr/lib/systemd/system/gvirtus-backend.service \
  >"$WORK/unit"
grep -qx "ExecStart=/usr/bin/gvirtus-backend --config /etc/gvirtus/properties.json" "$WORK/unit" ||
  fail "the packaged unit's ExecStart: $(grep ExecStart "$WORK/unit")"
# The packaged programs run: unpack both packages side by side (as installed, under usr/) and run
# a sample through the unpacked backend and gvirtus-run (a configuration of our own: the packages'
# is read from /etc).
if [ "$HAVE_CUDA" = 1 ]; then
  ROOT="$WORK/root"
  dpkg-deb -x "$CLIENT" "$ROOT"
  dpkg-deb -x "$BACKEND" "$ROOT"
  sed 's/"port": *"[0-9]*"/"port": "0"/' "$ROOT/etc/gvirtus/properties.json" >"$WORK/backend.json"
  : >"$WORK/backend.log"
  env -i PATH=/usr/bin:/bin GVIRTUS_LOGLEVEL=info "$ROOT/usr/bin/gvirtus-backend" --config "$WORK/backend.json" \
    2>"$WORK/backend.log" &
  BACKEND_PID=$!
  trap 'kill -TERM "$BACKEND_PID" 2>/dev/null; wait "$BACKEND_PID" 2>/dev/null; rm -rf "$WORK"' EXIT
  PORT=""
  for _ in $(seq 100); do
    PORT="$(sed -n 's/.*listening on tcp:\/\/127.0.0.1:\([0-9]*\).*/\1/p' "$WORK/backend.log" | head -1)"
    [ -n "$PORT" ] && break
    kill -0 "$BACKEND_PID" 2>/dev/null || { cat "$WORK/backend.log"; fail "the packaged backend did not start"; }
    sleep 0.1
  done
  [ -n "$PORT" ] || fail "the packaged backend did not report its port"
  sed "s/\"port\": *\"0\"/\"port\": \"$PORT\"/" "$WORK/backend.json" >"$WORK/client.json"
  SAXPY="$ROOT/usr/libexec/gvirtus/samples/saxpy"
  native_rc=0
  env -i PATH=/usr/bin:/bin "$SAXPY" >"$WORK/native.out" 2>/dev/null || native_rc=$?
  remote_rc=0
  env -i PATH=/usr/bin:/bin "$ROOT/usr/bin/gvirtus-run" --config "$WORK/client.json" -- "$SAXPY" \
    >"$WORK/remote.out" 2>/dev/null || remote_rc=$?
  cmp -s "$WORK/native.out" "$WORK/remote.out" && [ "$native_rc" = "$remote_rc" ] ||
    fail "saxpy differs natively and through the packages: $(diff "$WORK/native.out" "$WORK/remote.out")"
  grep -q "session with saxpy" "$WORK/backend.log" || fail "the packaged run did not reach the backend"
  echo "== saxpy through the unpacked packages: identical output and exit status ($native_rc)"
fi
echo "PASS"
