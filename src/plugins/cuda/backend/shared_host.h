// Page-locked host memory in the session's shared memory, on the cuda plugin's side
// (shared_host.cpp; wire: common/driver_wire.h's SharedHostRequest): the shared memory kept when
// the session opens, and the handlers of its custom rows, called by run_custom (true when `fn` is
// one of them).
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>

#include "backend/plugin.h"
#include "common/wire.h"
#include "cuda_calls.h"

namespace gvirtus::cuda {

// The descriptor's session_opened: one session per worker process.
void open_shared_memory(const SessionInfo& session);

bool run_shared_host(Fn fn, WireReader& in, WireWriter& out, CUresult& result);

// The host side of a copy in the shared memory (driver_wire.h's CopyRequest::shared_offset): the
// bytes [offset, offset + bytes) here, which must lie in one block the session registered;
// anything else is malformed (no stub sends it): Error{kInvalidInput}.
std::byte* registered_shared_span(uint64_t offset, uint64_t bytes);

}  // namespace gvirtus::cuda
