#!/bin/busybox sh
# Guest helper of the VM harness: a backend on the endpoint $1 (with "port":"0") serves a
# client that is killed mid-session (SIGKILL, large pings in flight), then still serves the next.
. /etc/gvirtus-vm.env
endpoint=$1
echo "{\"communicator\":[{\"endpoint\":$endpoint,\"plugins\":[]}]}" > /tmp/server.json
# Emptied here, not by the background job's redirection: that runs in the child, so a look at
# the log could still see the previous run's "listening on" line (and its port).
: > /tmp/backend.log
GVIRTUS_LOGLEVEL=info "$BUILD/bin/gvirtus-backend" --config /tmp/server.json 2>> /tmp/backend.log &
backend=$!
port=""
for i in $(seq 100); do
  port=$(sed -n 's/.*listening on [a-z]*:\/\/[^ ]*:\([0-9]*\) .*/\1/p' /tmp/backend.log)
  [ -n "$port" ] && break
  kill -0 $backend 2>/dev/null || break
  sleep 0.1
done
if [ -z "$port" ]; then
  echo "  the backend did not report a listening port:"; sed 's/^/  /' /tmp/backend.log
  kill $backend 2>/dev/null; wait $backend
  exit 1
fi
echo "{\"communicator\":[{\"endpoint\":$(echo "$endpoint" | sed "s/\"port\":\"0\"/\"port\":\"$port\"/"),\"plugins\":[]}]}" > /tmp/client.json
"$BUILD/bin/gvirtus-ping" --config /tmp/client.json --count 1000000 --bytes 100000 > /dev/null 2>&1 &
client=$!
sleep 2
kill -9 $client; wait $client 2>/dev/null
ok=0
"$BUILD/bin/gvirtus-ping" --config /tmp/client.json --count 20 > /tmp/ping.log 2>&1 && ok=1
kill -0 $backend 2>/dev/null || ok=0
kill $backend; wait $backend
sed 's/^/  /' /tmp/backend.log | tail -8
tail -3 /tmp/ping.log | sed 's/^/  /'
[ $ok = 1 ]
