// Staging blocks for graph copies of a client's own memory, shared by the plugins that serve them
// (the cuda plugin's rows 331-333, the cudart plugin's 313-315; the client's side:
// common/staged_copies.h). A graph runs on the backend's GPU, which cannot reach the client's
// pageable memory, yet a copy node or a captured copy may name it and CUDA reads or writes it
// each time the graph runs: the stub makes such a copy one of a staging block here, beside a host
// function of its own that moves the bytes between the block and the client's memory at that
// moment. The wire of the three rows:
//   alloc  u64 bytes. Reply: i32 result, u64 the block's device address. Page-locked memory of
//          this process, registered mapped and portable with the plugin's library
//          (`register_pages`), zeroed (nothing of this process's earlier memory reaches the
//          client), its device range the session's for every other call; it lives as long as the
//          session (its worker process). 0 bytes: the library's invalid value; beyond
//          kMaxStagingBytes held by the session: its out of memory, logged.
//   write  u64 device address, u64 bytes, the bytes (sent ahead): into a block.
//   read   u64 device address, u64 bytes. Reply: i32 result, blob.
// A write or read that is not one range inside one block, of 1 to kStagingChunkBytes bytes, is
// malformed (no stub sends it): Error{kInvalidInput}, which ends the session. Both are plain
// memory copies, never library calls: they come from the stub's callback thread while a stream
// waits for that host function, and a library call could wait for that very stream.
#pragma once

#include <cstdint>

#include "common/function_ref.h"
#include "common/staged_copies.h"
#include "common/wire.h"

namespace gvirtus::services {

inline constexpr uint64_t kMaxStagingBytes = uint64_t{1} << 30;

// The plugin's library's statuses for the answers the rows give themselves.
struct StagingStatuses {
  int32_t success;
  int32_t invalid_value;
  int32_t out_of_memory;
};

// Registers `bytes` at `host` mapped and portable and gives its device address: the library's
// status. `unregister` undoes it (a failure after registering).
using RegisterPages = FunctionRef<int32_t(void* host, uint64_t bytes, uint64_t& device)>;
using UnregisterPages = FunctionRef<void(void* host)>;

// The rows; each puts its reply (the status first) and sets `result`. `plugin` names the library
// in the log's refusals.
void staging_allocate(WireReader& in, WireWriter& out, int32_t& result,
                      const StagingStatuses& statuses, RegisterPages register_pages,
                      UnregisterPages unregister_pages, const char* plugin);
void staging_write(WireReader& in, WireWriter& out, int32_t& result, int32_t success);
void staging_read(WireReader& in, WireWriter& out, int32_t& result, int32_t success);

// Whether `device` lies in one of the session's blocks (device memory of the session's to name).
bool in_staging_block(uint64_t device);

}  // namespace gvirtus::services
