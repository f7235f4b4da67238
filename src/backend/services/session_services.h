// The shared backend services of one plugin in one session: its handle table and its allocation
// ledger (handle_table.h, allocation_ledger.h).
//
// One session runs per worker process, and this library is linked into each plugin with hidden
// visibility, so session_services() is one instance per plugin per session: two plugins of one
// session never see each other's handles. A plugin resets it when its session opens.
#pragma once

#include <atomic>
#include <cstdint>

#include "backend/services/allocation_ledger.h"
#include "backend/services/handle_table.h"

namespace gvirtus::services {

struct SessionServices {
  HandleTable handles;
  AllocationLedger allocations;

  // A new session: empty tables; the ledger publishes into `device_bytes` (may be null).
  void reset(std::atomic<uint64_t>* device_bytes) {
    handles.clear();
    allocations.reset(device_bytes);
  }
};

SessionServices& session_services();

}  // namespace gvirtus::services
