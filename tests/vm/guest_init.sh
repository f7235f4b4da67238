#!/bin/busybox sh
# /init of the VM harness's guest (see run_vm.sh): brings up Soft-RoCE on a dummy interface and
# vsock loopback, then runs our suites. Every step prints "### PASS name" or "### FAIL name";
# "### ALL DONE" ends the run. Files for the host go out between "### FILE BEGIN/END" lines.
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /tmp && mount -t devpts devpts /dev/pts
echo /sbin/modprobe > /proc/sys/kernel/modprobe
. /etc/gvirtus-vm.env
export TMPDIR=/tmp HOME=/tmp GVIRTUS_LOGLEVEL=warning
say() { echo "### $*"; }
uptime_s() { cut -d' ' -f1 /proc/uptime; }
step() { # step NAME LIMIT_S cmd...: runs it, prints its output and PASS/FAIL with its time
  n=$1; limit=$2; shift 2; a=$(uptime_s)
  timeout "$limit" "$@" > /tmp/step.log 2>&1; rc=$?
  b=$(uptime_s); t=$(awk "BEGIN{print $b-$a}")
  if grep -q '^\[==========\]' /tmp/step.log; then  # gtest: one line per test
    grep -aE '^\[ *(OK|PASSED|FAILED|SKIPPED) *\]|^\[==========\]' /tmp/step.log | sed 's/^/  /'
  elif [ $rc = 0 ]; then
    sed 's/^/  /' /tmp/step.log
  fi
  if [ $rc = 0 ]; then say "PASS $n (${t}s)"; else tail -60 /tmp/step.log; say "FAIL $n (rc=$rc after ${t}s)"; fi
}
say "guest up at $(uptime_s)s, kernel $(uname -r)"
for m in crc32_generic rdma_rxe rdma_ucm ib_uverbs dummy vsock_loopback; do
  modprobe $m || say "FAIL modprobe $m"
done
ip link set lo up
ip link show dummy0 >/dev/null 2>&1 || say "FAIL no dummy0"
ip addr add 10.0.0.1/24 dev dummy0
ip link set dummy0 up
rdma link add rxe0 type rxe netdev dummy0 || say "FAIL rdma link add"
ibv_devices | sed 's/^/  /'

export GVIRTUS_TEST_RDMA_ADDR=10.0.0.1 GVIRTUS_BENCH_RDMA_ADDR=10.0.0.1

RDMA_ENDPOINT='{"suite":"infiniband-rdma","protocol":"ib","server_address":"10.0.0.1","port":"0"}'
VSOCK_ENDPOINT='{"suite":"vsock","protocol":"vsock","cid":"local","listen_cid":"local","port":"0"}'

# --bench-copy runs gvirtus-bench copy alone (the tests would only add emulated time).
if [ "$BENCH" = copy ]; then
  step bench-copy 1500 "$BUILD/bin/gvirtus-bench" copy --transport tcp --transport vsock \
    --transport ib --accepting drop --max-bytes 64M $BENCH_ARGS --json /tmp/bench-copy.json
  say "FILE BEGIN bench-copy.json"; cat /tmp/bench-copy.json; echo; say "FILE END"
  say "FILE BEGIN bench-copy.txt"; cat /tmp/step.log; say "FILE END"
  say "tests done at $(uptime_s)s"
  say "ALL DONE"
  poweroff -f
fi

step backend-survives-killed-client-rdma 120 /bin/survives_killed_client.sh "$RDMA_ENDPOINT"
step backend-survives-killed-client-vsock 120 /bin/survives_killed_client.sh "$VSOCK_ENDPOINT"
step conformance-rdma-vsock 900 env GVIRTUS_TEST_TRANSPORTS=rdma,rdma_block,vsock \
  GVIRTUS_TEST_LARGEST_MESSAGE=16777216 \
  "$BUILD/tests/transport_tests" --gtest_filter='AllTransports/*'

if [ -x "$BUILD/tests/e2e/e2e_tests" ]; then
  step parity-rdma 600 env GVIRTUS_PARITY_ENDPOINT="$RDMA_ENDPOINT" \
    "$BUILD/tests/e2e/e2e_tests" --gtest_filter="$PARITY_FILTER"
  step parity-vsock 600 env GVIRTUS_PARITY_ENDPOINT="$VSOCK_ENDPOINT" \
    "$BUILD/tests/e2e/e2e_tests" --gtest_filter="$PARITY_FILTER"
else
  say "FAIL parity: e2e_tests was not built (no CUDA toolkit at configure time)"
fi

# Every byte of copies through the stub over rdma and vsock, up to 8 MiB and 3 bytes (messages
# far over the transports' buffers; larger sizes only add emulated time): the data sent from the
# application's buffer and the replies landing in it (docs/architecture.md, the copy path).
if [ -x "$BUILD/tests/cudart/cudart_fault_tests" ]; then
  for t in rdma vsock; do
    [ $t = rdma ] && endpoint=$RDMA_ENDPOINT || endpoint=$VSOCK_ENDPOINT
    step copy-bytes-$t 600 env GVIRTUS_COPY_ENDPOINT="$endpoint" GVIRTUS_COPY_MAX_BYTES=9000000 \
      "$BUILD/tests/cudart/cudart_fault_tests" --gtest_filter='Paths/CopyBytes.*'
  done
fi

# ivshmem: the host's backend (run_vm.sh) listens on the file behind this PCI device; the client
# here maps the device's BAR 2. Calls cross the VM boundary through shared memory only.
IVSHMEM=""
for d in /sys/bus/pci/devices/*; do
  [ "$(cat $d/vendor)" = 0x1af4 ] && [ "$(cat $d/device)" = 0x1110 ] && IVSHMEM=$d
done
if [ -z "$IVSHMEM" ]; then
  say "FAIL ivshmem: no ivshmem-plain device (1af4:1110) on the PCI bus"
else
  echo 1 > "$IVSHMEM/enable"
  cat > /tmp/ivshmem.json <<JSON
{"communicator":[{"endpoint":{"suite":"shm","protocol":"shm","file":"$IVSHMEM/resource2",
  "dead_after_ms":10000},"plugins":[]}],"connect_timeout_ms":30000}
JSON
  say "ivshmem device $(basename $IVSHMEM), BAR 2 of $(stat -c %s $IVSHMEM/resource2) bytes"
  # Small calls, then messages of 16 MiB: four times the 4 MiB rings, streamed through them.
  step ivshmem-ping 300 sh -c "'$BUILD/bin/gvirtus-ping' --config /tmp/ivshmem.json --count 2000 &&
    '$BUILD/bin/gvirtus-ping' --config /tmp/ivshmem.json --count 20 --bytes 16777216"
  if [ -x "$BUILD/tests/e2e/e2e_tests" ]; then
    step parity-ivshmem 900 env GVIRTUS_PARITY_CLIENT_CONFIG=/tmp/ivshmem.json \
      "$BUILD/tests/e2e/e2e_tests" --gtest_filter='Programs/*'
  fi
fi

if [ "$BENCH" = comm ]; then
  # rdma twice: busy-polled completions (the default) and blocking ones.
  for name in tcp vsock ib ib-block; do
    case $name in
      ib-block) transport=ib; export GVIRTUS_BENCH_RDMA_COMPLETION=block ;;
      *) transport=$name; unset GVIRTUS_BENCH_RDMA_COMPLETION ;;
    esac
    step bench-$name 900 "$BUILD/bin/gvirtus-bench" comm --transport $transport $BENCH_ARGS \
      --json /tmp/bench-$name.json
    say "FILE BEGIN bench-$name.json"; cat /tmp/bench-$name.json; echo; say "FILE END"
    say "FILE BEGIN bench-$name.txt"; cat /tmp/step.log; say "FILE END"
  done
fi
say "tests done at $(uptime_s)s"
dmesg | grep -iE 'rxe|vsock|error|oops' | tail -10 | sed 's/^/  dmesg: /'
say "ALL DONE"
poweroff -f
