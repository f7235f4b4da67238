// Socket rendezvous of the shm communicator (the default mode), for processes and containers that
// share a kernel.
//
//   backend: binds a Unix stream socket at `path` (a stale socket of a killed daemon is replaced;
//            one that still answers is an error). accept(): accepts a connection, creates a sealed
//            memfd segment and passes its fd with SCM_RIGHTS, after a small hello (magic,
//            version, ring size, the backend's mapping address).
//   client:  connects, receives the hello and fd, checks and maps the segment.
// Doorbells are futexes on the segment's waiting words (shm_futex.h). The Unix connection stays
// open as the liveness channel and carries nothing else: a sleeping side wakes at least every
// few tens of milliseconds and polls it, so a dead peer (even SIGKILL) shows as POLLHUP/EOF soon.
// The memfd is anonymous, so the segment vanishes with its last mapping; nothing is created under
// /dev/shm.
#pragma once

#include <chrono>
#include <memory>

#include "communicators/communicator.h"
#include "communicators/shm/shm_options.h"

namespace gvirtus::shm {

std::unique_ptr<Listener> serve_socket(const ShmOptions& options, size_t max_message_bytes);

std::unique_ptr<Connection> connect_socket(const ShmOptions& options, size_t max_message_bytes,
                                           std::chrono::milliseconds timeout);

}  // namespace gvirtus::shm
