// A stub's staging rows and host function for graph copies of the program's own memory
// (common/staged_copies.h), over the stub's own generated calls: the same in the driver and the
// runtime stub, each instantiating it with its table's rows (gvirtusStagingAlloc, Write, Read;
// wire: backend/services/staging_blocks.h) and its remote_sync and remote_async.
#pragma once

#include <cstdint>
#include <cstring>
#include <exception>
#include <span>

#include "common/error.h"
#include "common/log.h"
#include "common/staged_copies.h"
#include "common/wire.h"
#include "frontend/route_scope.h"

namespace gvirtus::staging {

template <auto kAlloc, auto kWrite, auto kRead, auto kRemoteSync, auto kRemoteAsync>
class StubRows {
 public:
  // The stub's blocks and transfers (never destroyed: exit handlers may still run graphs).
  static Staging& staging() {
    static auto& kept = *new Staging(Calls{allocate, write, read});
    return kept;
  }

  // The block for `region` on the calling thread's route, and the data of the host function that
  // moves its bytes in that direction (run's): the library's status, 0 when both are had.
  static int stage(const Region& region, bool to_device, uint64_t& block, void*& transfer) {
    const uint32_t route = gvirtus_route_get();
    if (const int status = staging().block_for(route, region, block); status != 0) return status;
    transfer = const_cast<Transfer*>(staging().transfer_for(region, block, to_device, route));
    return 0;
  }

  // The data of the host function (run_host_copy) that copies `source` to `destination`, both
  // this process's memory: no block.
  static void* host_copy(const Region& source, const Region& destination) {
    return const_cast<HostCopy*>(staging().host_copy_for(source, destination));
  }

  // The stub's host function for a transfer: on the session's callback thread, while the stream
  // waits for it; a failure is logged (nothing may leave a host function).
  static void run(void* data) {
    const auto& t = *static_cast<const Transfer*>(data);
    const stub::RouteScope route(t.route);
    try {
      if (const int result = staging().run(t); result != 0) {
        GVIRTUS_LOG(kError) << "gvirtus: a graph's copy of this process's memory failed (" << result
                            << "): the " << (t.to_device ? "device" : "host")
                            << " did not get the copy's bytes";
      }
    } catch (const std::exception& e) {  // a malformed reply
      GVIRTUS_LOG(kError) << "gvirtus: a graph's copy of this process's memory failed: "
                          << e.what();
    }
  }

 private:
  static int allocate(uint64_t bytes, uint64_t& block) {
    return kRemoteSync(
        kAlloc, [&](WireWriter& w) { w.put<uint64_t>(bytes); },
        [&](WireReader& r) { block = r.get<uint64_t>(); });
  }

  static int write(uint64_t at, const std::byte* from, uint64_t bytes) {
    return kRemoteAsync(
        kWrite,
        [&](WireWriter& w) {
          w.put<uint64_t>(at);
          w.put<uint64_t>(bytes);
        },
        std::span<const std::byte>(from, bytes));
  }

  static int read(uint64_t at, std::byte* to, uint64_t bytes) {
    return kRemoteSync(
        kRead,
        [&](WireWriter& w) {
          w.put<uint64_t>(at);
          w.put<uint64_t>(bytes);
        },
        [&](WireReader& r) {
          const auto data = r.get_blob(bytes);
          if (data.size() != bytes) raise(ErrorKind::kInvalidInput, "a short staging read");
          std::memcpy(to, data.data(), bytes);
        });
  }
};

}  // namespace gvirtus::staging
