// File rendezvous of the shm communicator (ivshmem): no socket exists between the sides, only a
// file both map. On the host it is a file QEMU also maps (memory-backend-file, share=on); in the
// guest, the ivshmem device's BAR 2 (/sys/bus/pci/devices/<bdf>/resource2).
//
//   backend: serve() locks and initialises the segment (it owns the layout) and sets the state
//            to kListening. A watcher thread bumps the listener heartbeat, signals wait_fd() (an
//            eventfd) when a client claimed the segment, and resets the segment for the next
//            client once a session has ended (both sides closed, or one gone for dead_after).
//   client:  waits for kListening, claims the segment (kListening -> kClaimed, atomically),
//            and waits until the backend accepts (kConnected).
// During a session each side bumps its heartbeat from a helper thread; a side that sees the
// other's closed flag, a reset (new generation) or a heartbeat stopped for dead_after fails with
// kDisconnected. Waiting is spin, then sleeps growing from 50 us to 1 ms (futex waits, which a
// peer on the same host cuts short; a guest, which cannot wait on its BAR, sleeps plainly). One
// session at a time.
#pragma once

#include <chrono>
#include <memory>

#include "communicators/communicator.h"
#include "communicators/shm/shm_options.h"

namespace gvirtus::shm {

std::unique_ptr<Listener> serve_file(const ShmOptions& options, size_t max_message_bytes);

std::unique_ptr<Connection> connect_file(const ShmOptions& options, size_t max_message_bytes,
                                         std::chrono::milliseconds timeout);

}  // namespace gvirtus::shm
