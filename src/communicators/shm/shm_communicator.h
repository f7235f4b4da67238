// The shm communicator: shared-memory rings between co-located processes, containers, or a VM
// and its host (ivshmem). See docs/shm.md.
//
// properties.json endpoint fields:
//   "suite": "shm", "protocol": "shm"
//   "path": Unix socket for the socket rendezvous (default "/tmp/gvirtus-shm.sock"; "@name" is
//           the abstract namespace), or
//   "file": a shared file for the ivshmem rendezvous (host: e.g. /dev/shm/gvirtus-vm1; guest:
//           /sys/bus/pci/devices/<bdf>/resource2);
//   "ring_bytes" (4 MiB), "spin_us" (50), "dead_after_ms" (3000, file mode).
#pragma once

#include "communicators/factory.h"

namespace gvirtus {

// The shm transport's factory entry.
TransportInfo shm_transport_info();

}  // namespace gvirtus
