#!/usr/bin/env bash
# The VM harness: boots Debian's kernel under qemu (software emulation) with an initramfs holding
# busybox, the rdma_rxe (Soft-RoCE) and vsock_loopback modules, rdma-core's user space, and our
# test binaries with every library they load, at the same absolute paths as in the build tree.
# guest_init.sh then runs, inside the guest, the transport conformance suite over rdma and vsock,
# the CUDA end-to-end parity test over each, and (with --bench) gvirtus-bench comm over tcp,
# vsock and rdma, or (with --bench-copy, in place of the tests) gvirtus-bench copy over them. A backend on this host serves the guest through an ivshmem device (shm, file
# mode): gvirtus-ping and the parity test run in the guest against it. Prints the guest's
# summary; exit 0 only if every step passed, 77 (ctest's skip) when qemu or the kernel cannot be
# had here.
#
# usage: run_vm.sh BUILD_DIR [--bench OUT_DIR | --bench-copy OUT_DIR] [--parity-filter FILTER]
#   GVIRTUS_VM_BENCH_ARGS: extra gvirtus-bench comm (or copy) arguments (e.g. "--max-bytes 4194304")
set -euo pipefail

BUILD=$(cd "$1" && pwd); shift
BENCH_OUT=""
BENCH_MODE=""
# Every parity program but mapped_memory (kernels on client memory need shm; docs/cudart.md).
PARITY_FILTER="*-*/mapped_memory_*"
while [ $# -gt 0 ]; do
  case $1 in
    --bench) BENCH_OUT=$2; BENCH_MODE=comm; shift 2 ;;
    --bench-copy) BENCH_OUT=$2; BENCH_MODE=copy; shift 2 ;;
    --parity-filter) PARITY_FILTER=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
WORK=$BUILD/tests/vm/work
CACHE=${GVIRTUS_VM_CACHE:-$BUILD/vm-cache}
mkdir -p "$WORK" "$CACHE"
rm -f "$WORK/summary.txt"  # never show an earlier run's summary

skip() { echo "SKIP: $*"; exit 77; }

# Every program used here is on scripts/lib.sh's list, which installs it; run by hand elsewhere,
# a missing one is named.
for tool in qemu-system-x86_64 busybox cpio depmod modprobe python3 gzip strip ldd rdma ibv_devices; do
  command -v $tool >/dev/null || skip "$tool is not installed (scripts/lib.sh lists its package)"
done
busybox --list | grep -qx modprobe || skip "busybox is not the static full build (busybox-static)"
case $(ldd "$(command -v busybox)" 2>&1 || true) in  # ldd fails on a static binary
  *"not a dynamic executable"*) ;;
  *) skip "$(command -v busybox) is dynamically linked; the guest needs busybox-static" ;;
esac
[ -e "$BUILD/lib/gvirtus/libgvirtus-comm-rdma.so" ] ||
  skip "the rdma plugin was not built (rdma-core headers missing at configure time)"
PROVIDER=/usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so
[ -e "$PROVIDER" ] || PROVIDER=$(ls /usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav*.so 2>/dev/null | head -1)
[ -n "$PROVIDER" ] && [ -e "$PROVIDER" ] || skip "the rxe provider (ibverbs-providers) is not installed"

# ---- the kernel: the version linux-image-amd64 depends on, downloaded once into the cache ----
KVER=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/{sub("linux-image-","",$2); print $2; exit}')
[ -n "$KVER" ] || KVER=$(ls "$CACHE" | sed -n 's/^linux-image-\(.*\)_.*\.deb$/\1/p' | head -1)
[ -n "$KVER" ] || skip "cannot resolve the kernel version (apt-cache depends linux-image-amd64)"
KPKG=$CACHE/kernel-$KVER
if [ ! -e "$KPKG/boot/vmlinuz-$KVER" ]; then
  if ! ls "$CACHE"/linux-image-"$KVER"_*.deb >/dev/null 2>&1; then
    (cd "$CACHE" && apt-get download "linux-image-$KVER" >/dev/null 2>&1) ||
      skip "cannot download linux-image-$KVER (apt-get download failed; no network or apt lists?)"
  fi
  rm -rf "$KPKG"; dpkg -x "$CACHE"/linux-image-"$KVER"_*.deb "$KPKG"
fi
# The uncompressed kernel has a PVH entry note: qemu boots it directly, skipping the firmware's
# real-mode setup and the decompressor (seconds under emulation).
VMLINUX=$CACHE/vmlinux-$KVER
[ -e "$VMLINUX" ] || python3 - "$KPKG/boot/vmlinuz-$KVER" "$VMLINUX" <<'PY'
import lzma, sys
data = open(sys.argv[1], 'rb').read()
start = data.find(b'\xfd7zXZ\x00')
if start < 0: sys.exit("the kernel image is not XZ-compressed")
open(sys.argv[2], 'wb').write(lzma.LZMADecompressor().decompress(data[start:]))
PY

# ---- the guest's root ----
R=$WORK/root
rm -rf "$R"; mkdir -p "$R"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,etc,lib64,lib/x86_64-linux-gnu}
cp "$(command -v busybox)" "$R/bin/busybox"
for a in $("$R/bin/busybox" --list); do [ "$a" = busybox ] || ln -sf busybox "$R/bin/$a"; done
ln -sf ../bin/busybox "$R/sbin/modprobe"
# The package's modules tree has no modules.dep: index it once, then take each module's deps.
[ -e "$KPKG/lib/modules/$KVER/modules.dep" ] || depmod -b "$KPKG" "$KVER"
MODS="crc32_generic rdma_rxe rdma_ucm ib_uverbs dummy vsock_loopback"
for m in $MODS; do
  deps=$(modprobe -S "$KVER" -d "$KPKG" --show-depends $m) || { echo "kernel $KVER has no $m"; exit 1; }
  for f in $(echo "$deps" | awk '/^insmod/{print $2}'); do
    rel=${f#$KPKG/}; mkdir -p "$R/$(dirname "$rel")"; cp "$f" "$R/$rel"
  done
done
MSRC=$KPKG/lib/modules/$KVER
cp "$MSRC"/modules.builtin "$MSRC"/modules.builtin.modinfo "$MSRC"/modules.order "$R/lib/modules/$KVER/"
depmod -b "$R" "$KVER"

# Copies a file to the same path in the guest (binaries stripped of debug info: a smaller image).
stage() {
  local src=$1 dst=$R$1
  mkdir -p "$(dirname "$dst")"
  cp -L "$src" "$dst"
  case $(head -c 4 "$dst" | od -An -c | tr -d ' ') in
    177ELF) chmod u+w "$dst"; strip --strip-debug "$dst" 2>/dev/null || true ;;
  esac
}
OURS=("$BUILD/tests/transport_tests" "$BUILD/bin/gvirtus-backend" "$BUILD/bin/gvirtus-run"
      "$BUILD/bin/gvirtus-bench" "$BUILD/bin/gvirtus-ping" "$BUILD"/lib/gvirtus/*.so "$BUILD"/lib/stub/*.so*)
[ -e "$BUILD/tests/e2e/e2e_tests" ] && OURS+=("$BUILD/tests/e2e/e2e_tests" "$BUILD"/tests/e2e/programs/*)
# The copy path's every-byte test (tests/cudart/copy_bytes_test.cpp) and what it runs: the copy
# check and the managed memory check.
[ -e "$BUILD/tests/cudart/cudart_fault_tests" ] &&
  OURS+=("$BUILD/tests/cudart/cudart_fault_tests" "$BUILD/tests/cudart/gvirtus-test-copy-check"
         "$BUILD/tests/cudart/gvirtus-test-managed-check" "$BUILD/bin/libgvirtus-accepting-device.so")
# gvirtus-bench copy's workload (--bench-copy).
[ -e "$BUILD/bin/gvirtus-copy-workload" ] &&
  OURS+=("$BUILD/bin/gvirtus-copy-workload" "$BUILD/bin/libgvirtus-accepting-device.so")
for f in "${OURS[@]}"; do stage "$f"; done
# The guest runs them from /usr/bin, whatever their path here.
for tool in rdma ibv_devices; do
  mkdir -p "$R/usr/bin"; cp -L "$(command -v $tool)" "$R/usr/bin/$tool"
done
SYSTEM=("$(command -v rdma)" "$(command -v ibv_devices)" "$PROVIDER")
stage "$PROVIDER"
mkdir -p "$R/etc/libibverbs.d"
cp /etc/libibverbs.d/rxe.driver "$R/etc/libibverbs.d/"
# Every library anything loads, at its own path and in the default search path (the guest has
# no ld.so.cache; the native CUDA runs find libcudart.so.13 there, as on the host).
for lib in $(ldd "${OURS[@]}" "${SYSTEM[@]}" 2>/dev/null |
             awk '$2=="=>" && $3 ~ /^\// {print $3} $1 ~ /^\/lib64/ {print $1}' | sort -u); do
  [ -e "$R$lib" ] || stage "$lib"
  base=$(basename "$lib")
  [ -e "$R/lib/x86_64-linux-gnu/$base" ] || cp -L "$R$lib" "$R/lib/x86_64-linux-gnu/$base"
done
cp -L /lib/x86_64-linux-gnu/libgcc_s.so.1 "$R/lib/x86_64-linux-gnu/"  # glibc dlopens it
echo "root:x:0:0:root:/:/bin/sh" > "$R/etc/passwd"
cat > "$R/etc/gvirtus-vm.env" <<ENV
BUILD=$BUILD
PARITY_FILTER='$PARITY_FILTER'
BENCH=$BENCH_MODE
BENCH_ARGS='${GVIRTUS_VM_BENCH_ARGS:-}'
ENV
cp "$HERE/guest_init.sh" "$R/init"; chmod +x "$R/init"
cp "$HERE/survives_killed_client.sh" "$R/bin/"; chmod +x "$R/bin/survives_killed_client.sh"
(cd "$R" && find . | cpio -o -H newc --quiet | gzip -1) > "$WORK/initrd.gz"

# ---- ivshmem: a backend on this host, in the shm communicator's file mode, serving the guest's
# clients through the file that the guest sees as its ivshmem device's BAR 2 (docs/shm.md) ----
IVSHMEM_FILE=/dev/shm/gvirtus-vm-$$
HOST_PLUGINS='[]'
[ -e "$BUILD/lib/gvirtus/libgvirtus-plugin-cudart.so" ] && HOST_PLUGINS='["cudart"]'
truncate -s 64M "$IVSHMEM_FILE"
cat > "$WORK/ivshmem-host.json" <<JSON
{"communicator":[{"endpoint":{"suite":"shm","protocol":"shm","file":"$IVSHMEM_FILE",
  "dead_after_ms":10000},"plugins":$HOST_PLUGINS}]}
JSON
HOST_LOG=$WORK/ivshmem-backend.log
GVIRTUS_LOGLEVEL=info "$BUILD/bin/gvirtus-backend" --config "$WORK/ivshmem-host.json" 2> "$HOST_LOG" &
HOST_BACKEND=$!
stop_host_backend() {  # idempotent, and never fails (this script runs under set -e)
  kill "$HOST_BACKEND" 2>/dev/null || true
  wait "$HOST_BACKEND" 2>/dev/null || true
}
trap 'stop_host_backend; rm -f "$IVSHMEM_FILE"' EXIT

# ---- boot ----
LOG=$WORK/serial.log
START=$(date +%s)
set +e
timeout "${GVIRTUS_VM_TIMEOUT:-1500}" qemu-system-x86_64 -accel tcg,thread=multi -cpu max \
  -m 2048 -smp 2 -nographic -no-reboot -kernel "$VMLINUX" -initrd "$WORK/initrd.gz" \
  -object memory-backend-file,id=ivshmem,share=on,mem-path="$IVSHMEM_FILE",size=64M \
  -device ivshmem-plain,memdev=ivshmem \
  -append "console=ttyS0 quiet panic=-1" > "$LOG" 2>&1
QEMU_RC=$?
set -e
# The host's side of the ivshmem steps: every guest client that ran reached this backend.
stop_host_backend
host_check() {
  local missing=""
  grep -aq '^### PASS ivshmem-ping' "$LOG" && ! grep -q 'session with gvirtus-ping' "$HOST_LOG" &&
    missing="gvirtus-ping"
  for t in $(tr -d '\r' < "$LOG" | sed -n 's/^  \[ *OK *\] Programs\/Parity\.[a-z_]*\/\([A-Za-z0-9_]*\)_over_external.*/\1/p'); do
    grep -q "session with $t " "$HOST_LOG" || missing="$missing $t"
  done
  if [ -n "$missing" ]; then
    echo "### FAIL ivshmem-host: no session on the host's backend for:$missing (log $HOST_LOG)"
  else
    echo "### PASS ivshmem-host: $(grep -c 'session with .* started' "$HOST_LOG") sessions from the guest reached the host's backend"
  fi
}
HOST_VERDICT=$(host_check)
# The guest's summary: each step's PASS/FAIL with its time, one line per test. Also kept in
# summary.txt, which scripts/test.sh prints after ctest so that CI logs show what ran inside.
{
  echo "== VM harness: qemu exit $QEMU_RC after $(( $(date +%s) - START )) s (kernel $KVER, serial log $LOG)"
  tr -d '\r' < "$LOG" | awk '/^### FILE BEGIN/{skip=1} /^### FILE END/{skip=0; next} !skip' |
    grep -a -E '^###|^  \[ *(OK|FAILED|SKIPPED|PASSED) *\]|^  \[====' || true
  echo "$HOST_VERDICT"
} | tee "$WORK/summary.txt"
if [ -n "$BENCH_OUT" ]; then
  mkdir -p "$BENCH_OUT"
  tr -d '\r' < "$LOG" | awk -v out="$BENCH_OUT" '
    /^### FILE BEGIN /{f=out "/" $4; printf "" > f; next}
    /^### FILE END/{close(f); f=""; next}
    f!=""{print >> f}'
fi
grep -aq '^### ALL DONE' "$LOG" || { echo "the guest did not finish (see $LOG)"; tail -40 "$LOG"; exit 1; }
if grep -aq '^### FAIL' "$LOG"; then tail -200 "$LOG"; exit 1; fi
case $HOST_VERDICT in *"### FAIL"*) tail -40 "$HOST_LOG"; exit 1 ;; esac
exit 0
