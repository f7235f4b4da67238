// The copies between host and device memory of the client libcuda.so.1. When the host side is
// page-locked memory in the memory shared with the backend (cuMemAllocHost, cuMemHostAlloc over
// shm), no bytes travel: the request names its place there and the backend's driver copies
// those very pages with its copy engine - of any size, and sent ahead when asynchronous in either
// direction (it completes with its stream, as natively). Otherwise the host side is the
// application's memory, so its bytes travel (common/driver_wire.h), in chunks of at most
// kCopyChunkBytes. Host to device is sent ahead when asynchronous: the data is in the request,
// so the application may reuse its buffer at once, as the driver allows for pageable memory; a
// synchronous one sends every chunk but the last ahead and waits for the last, whose reply
// answers for all (the backend runs them in order, and a failure of one sent ahead is the
// answer of the next it waits for).
#include <cuda.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/log.h"
#include "common/pinned_staging.h"
#include "common/wire_record.h"
#include "cuda_remote_calls.h"
#include "frontend/frontend_abi.h"
#include "frontend/process_session.h"
#include "frontend/route_scope.h"
#include "plugins/cuda/common/driver_wire.h"
#include "plugins/cuda/frontend/chunks.h"
#include "plugins/cuda/frontend/host_staging.h"
#include "plugins/cuda/frontend/memory_ranges.h"
#include "plugins/cuda/frontend/pool_routes.h"
#include "plugins/cuda/frontend/stream_capture.h"

namespace gvirtus::cuda {
namespace {

// Smaller synchronous copies go in one message: pinned staging would save little and costs a lease.
constexpr size_t kStagedMinBytes = size_t{256} << 10;

staging::PinnedPool& pinned_pool() {
  // Never destroyed: copies may run until the process ends.
  static auto& kept = *new staging::PinnedPool(staging::PinnedHooks{
      shared_arena, shared_block, free_shared_block,
      [](const void* block, size_t bytes) { return shared_offset(block, bytes); }});
  return kept;
}

// A synchronous copy of pageable memory through pinned blocks of the shared memory
// (common/pinned_staging.h): `fn` cuMemcpyHtoD_v2 or cuMemcpyDtoH_v2. nullopt when staging is not
// to be had (no shared memory, a small copy, every pair busy): the caller copies another way.
std::optional<CUresult> copy_pinned(Fn fn, CUdeviceptr device, std::byte* host, size_t bytes) {
  if (bytes < kStagedMinBytes) return std::nullopt;
  const staging::PinnedPool::Lease lease = pinned_pool().lease();
  if (!lease) return std::nullopt;
  return static_cast<CUresult>(staging::copy_through<RemotePending>(
      lease, host, bytes, fn == Fn::cuMemcpyHtoD_v2,
      [&](int b, size_t at, size_t chunk) {
        const CopyRequest request{device + at, chunk, nullptr, lease.offset(b)};
        return remote_begin(fn, [&](WireWriter& w) { put_record(w, request); });
      },
      [](const RemotePending& pending) {
        return static_cast<int>(remote_finish(pending, [](WireReader&) {}));
      }));
}

// A copy whose host side is at `offset` in the shared memory: one request, no bytes.
CUresult shared_copy(Fn fn, CUdeviceptr device, uint64_t offset, size_t bytes, CUstream stream,
                     bool ahead) {
  const CopyRequest request{device, bytes, stream, offset};
  auto encode = [&](WireWriter& w) { put_record(w, request); };
  return ahead ? remote_async(fn, encode) : remote_sync(fn, encode, [](WireReader&) {});
}

CUresult host_to_device(CUdeviceptr dst, const void* src, size_t bytes, CUstream stream,
                        bool ahead) {
  if (bytes == 0) return CUDA_SUCCESS;
  if (src == nullptr || dst == 0) return CUDA_ERROR_INVALID_VALUE;
  const stub::RouteScope route(pool_backend_of_address(dst));
  const Fn fn = ahead || stream != nullptr ? Fn::cuMemcpyHtoDAsync_v2 : Fn::cuMemcpyHtoD_v2;
  // Managed memory there is the backend's new bytes once sent (the send flushed the host's).
  struct Written {
    CUdeviceptr dst;
    size_t bytes;
    ~Written() { process_session::managed_invalidate_range(dst, bytes); }
  } const written{dst, bytes};
  if (const auto offset = shared_offset(src, bytes)) {
    return shared_copy(fn, dst, *offset, bytes, stream, ahead);
  }
  // Captured, the copy reads the application's bytes each time the graph runs (host_staging.h).
  if (stream != nullptr && capturing(stream)) {
    return capture_staged_to_device(dst, src, bytes, stream);
  }
  if (fn == Fn::cuMemcpyHtoD_v2) {
    auto* host = static_cast<std::byte*>(const_cast<void*>(src));
    if (const auto staged = copy_pinned(fn, dst, host, bytes)) return *staged;
  }
  const auto* from = static_cast<const std::byte*>(src);
  return in_chunks(bytes, [&](size_t done, size_t chunk) {
    const CopyRequest request{dst + done, chunk, stream};
    auto encode = [&](WireWriter& w) { put_record(w, request); };
    const ByteView data(from + done, chunk);  // sent from the application's buffer
    const bool last = done + chunk == bytes;
    if (ahead || !last) return remote_async(fn, encode, data);
    return remote_finish(remote_begin(fn, encode, data), [](WireReader&) {});
  });
}

CUresult device_to_host(void* dst, CUdeviceptr src, size_t bytes, CUstream stream, Fn fn) {
  if (bytes == 0) return CUDA_SUCCESS;
  if (dst == nullptr || src == 0) return CUDA_ERROR_INVALID_VALUE;
  const stub::RouteScope route(pool_backend_of_address(src));
  if (const auto offset = shared_offset(dst, bytes)) {
    return shared_copy(fn, src, *offset, bytes, stream, fn == Fn::cuMemcpyDtoHAsync_v2);
  }
  // Captured, the bytes land in the application's memory each time the graph runs
  // (host_staging.h).
  if (fn == Fn::cuMemcpyDtoHAsync_v2 && capturing(stream)) {
    return capture_staged_to_host(dst, src, bytes, stream);
  }
  if (fn == Fn::cuMemcpyDtoH_v2) {
    if (const auto staged = copy_pinned(fn, src, static_cast<std::byte*>(dst), bytes)) {
      return *staged;
    }
  }
  // Two chunks in flight: the next chunk's request leaves before the previous chunk's reply is
  // read, so the backend copies one while this side takes in the other. A failure stops the copy
  // one chunk later at worst (that chunk's reply is read and dropped).
  // The bytes land straight in the application's buffer as they arrive (chunk_landing); chunk k's
  // landing is landings[k % 2], which stays put while it is in flight.
  auto* to = static_cast<std::byte*>(dst);
  struct Flight {
    size_t done;
    size_t chunk;
    RemotePending pending;
    process_session::Landing* landing;
  };
  auto land = [&](const Flight& f) {
    return remote_finish(f.pending, [&](WireReader& r) {
      land_chunk(r, to + f.done, f.chunk, f.landing->landed != 0);
    });
  };
  process_session::Landing landings[2];
  std::optional<Flight> in_flight;
  for (size_t done = 0, k = 0; done < bytes; ++k) {
    const size_t chunk = std::min(kCopyChunkBytes, bytes - done);
    const CopyRequest request{src + done, chunk, stream};
    process_session::Landing* landing = &landings[k % 2];
    *landing = chunk_landing(to + done, chunk);
    const RemotePending sent = remote_begin(
        fn, [&](WireWriter& w) { put_record(w, request); }, {}, landing);
    if (in_flight) {
      if (const CUresult result = land(*in_flight); result != CUDA_SUCCESS) {
        (void)remote_finish(sent, [](WireReader& r) { (void)r.get_raw(r.remaining()); });
        return result;
      }
    }
    in_flight = Flight{done, chunk, sent, landing};
    done += chunk;
  }
  return land(*in_flight);
}

}  // namespace
}  // namespace gvirtus::cuda

namespace cr = gvirtus::cuda;

extern "C" __attribute__((visibility("default"))) CUresult cuMemcpyHtoD_v2(CUdeviceptr dstDevice,
                                                                           const void* srcHost,
                                                                           size_t ByteCount) {
  return cr::host_to_device(dstDevice, srcHost, ByteCount, nullptr, false);
}

extern "C" __attribute__((visibility("default"))) CUresult cuMemcpyHtoDAsync_v2(
    CUdeviceptr dstDevice, const void* srcHost, size_t ByteCount, CUstream hStream) {
  return cr::host_to_device(dstDevice, srcHost, ByteCount, hStream, true);
}

extern "C" __attribute__((visibility("default"))) CUresult cuMemcpyDtoH_v2(void* dstHost,
                                                                           CUdeviceptr srcDevice,
                                                                           size_t ByteCount) {
  return cr::device_to_host(dstHost, srcDevice, ByteCount, nullptr, cr::Fn::cuMemcpyDtoH_v2);
}

extern "C" __attribute__((visibility("default"))) CUresult cuMemcpyDtoHAsync_v2(
    void* dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream) {
  return cr::device_to_host(dstHost, srcDevice, ByteCount, hStream, cr::Fn::cuMemcpyDtoHAsync_v2);
}

namespace gvirtus::cuda {
namespace {

using Clock = std::chrono::steady_clock;

// The backends of a copy's two sides in a pool, when both are known and differ (neither backend's
// driver reaches the other's memory: copy_between_backends); nullopt when one backend serves it.
struct Sides {
  uint32_t dst;
  uint32_t src;
};
std::optional<Sides> across_backends(std::optional<uint32_t> dst, std::optional<uint32_t> src) {
  if (!dst || !src || *dst == *src) return std::nullopt;
  return Sides{*dst, *src};
}

// A copy between device memory of two backends of a pool, relayed through this process: each
// chunk read from the source's backend (landing in a buffer here) is sent on to the
// destination's, sent ahead but for the last, whose reply answers for all.
CUresult relayed_copy(CUdeviceptr dst, CUdeviceptr src, size_t bytes, Sides sides) {
  std::vector<std::byte> buffer(std::min(bytes, kCopyChunkBytes));
  for (size_t done = 0; done < bytes;) {
    const size_t chunk = std::min(kCopyChunkBytes, bytes - done);
    const bool last = done + chunk == bytes;
    CUresult result;
    {
      const stub::RouteScope route(sides.src);
      result = device_to_host(buffer.data(), src + done, chunk, nullptr, Fn::cuMemcpyDtoH_v2);
    }
    if (result != CUDA_SUCCESS) return result;
    {
      const stub::RouteScope route(sides.dst);
      result = host_to_device(dst + done, buffer.data(), chunk, nullptr, !last);
    }
    if (result != CUDA_SUCCESS) return result;
    done += chunk;
  }
  return CUDA_SUCCESS;
}

void note_copy(const char* how, Sides sides, size_t bytes, Clock::time_point start) {
  const std::string what = std::string("copy ") + how + " " + gvirtus_pool_backend_name(sides.src) +
                           " -> " + gvirtus_pool_backend_name(sides.dst);
  gvirtus_stats_note_work(
      what.c_str(), bytes,
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count());
}

// Whether copies between two backends go directly: GVIRTUS_POOL_COPIES=relayed relays every one
// (for comparison); otherwise a pair tries, and one that failed once is relayed from then on.
bool direct_copies_wanted() {
  static const bool wanted = [] {
    const char* mode = std::getenv("GVIRTUS_POOL_COPIES");
    return mode == nullptr || std::string_view(mode) != "relayed";
  }();
  return wanted;
}
std::mutex& unreachable_mutex = *new std::mutex;
auto& unreachable_pairs = *new std::set<std::pair<uint32_t, uint32_t>>;

// The tcp host the destination's backend was reached at: where the source's backend reaches it.
std::string tcp_host_of(uint32_t backend) {
  char host[kMaxPeerHost + 1] = "";
  if (gvirtus_pool_backend_host(backend, host, sizeof host) != GVIRTUS_OK) return "";
  return host;
}

// The direct copy (backend/peer_copies.h): the destination's backend listens, the source's sends
// there while the destination's takes the bytes in. nullopt when it could not be done (nothing
// failed that a relayed copy would not meet too: the caller relays).
std::optional<CUresult> direct_copy(CUdeviceptr dst, CUdeviceptr src, size_t bytes, Sides sides) {
  if (!direct_copies_wanted()) return std::nullopt;
  {
    std::lock_guard lock(unreachable_mutex);
    if (unreachable_pairs.contains({sides.src, sides.dst})) return std::nullopt;
  }
  const std::string host = tcp_host_of(sides.dst);
  auto give_up = [&](const char* why) -> std::optional<CUresult> {
    GVIRTUS_LOG(kWarning) << "copies from pool backend " << gvirtus_pool_backend_name(sides.src)
                          << " to " << gvirtus_pool_backend_name(sides.dst)
                          << " are relayed through this process: " << why;
    std::lock_guard lock(unreachable_mutex);
    unreachable_pairs.insert({sides.src, sides.dst});
    return std::nullopt;
  };
  if (host.empty() || tcp_host_of(sides.src).empty()) {
    return give_up("a direct copy needs both reached over tcp");
  }
  uint32_t port = 0;
  PeerToken token{};
  RemotePending receiving;
  {
    const stub::RouteScope route(sides.dst);
    const CUresult opened = remote_sync(
        Fn::gvirtusPeerReceiveOpen,
        [&](WireWriter& w) {
          put_record(w, PeerReceiveOpenRequest{dst, bytes});
        },
        [&](WireReader& r) {
          port = r.get<uint32_t>();
          token = get_record<PeerToken>(r);
        });
    if (opened == CUDA_ERROR_INVALID_VALUE) return opened;  // not this backend's memory
    if (opened != CUDA_SUCCESS) return give_up("the destination's backend cannot listen");
    receiving = remote_begin(Fn::gvirtusPeerReceive, [&](WireWriter& w) { put_record(w, token); });
  }
  CUresult sent;
  {
    const stub::RouteScope route(sides.src);
    sent = remote_sync(
        Fn::gvirtusPeerSend,
        [&](WireWriter& w) {
          put_record(w, PeerSendRequest{src, bytes, port});
          put_record(w, token);
          w.put_string(host);
        },
        [](WireReader&) {});
  }
  CUresult received;
  {
    const stub::RouteScope route(sides.dst);
    received = remote_finish(receiving, [](WireReader&) {});
  }
  if (sent == CUDA_SUCCESS && received == CUDA_SUCCESS) return CUDA_SUCCESS;
  if (sent == CUDA_ERROR_INVALID_VALUE) return sent;  // not the source backend's memory
  return give_up("the source's backend could not send to the destination's");
}

// A copy between device memory of two backends of a pool: direct when it can be, relayed
// otherwise. The stream's earlier work comes first, and the copy is done when this returns,
// asynchronous or not: a copy between backends is synchronous with respect to the host
// (docs/cluster.md).
CUresult copy_between_backends(CUdeviceptr dst, CUdeviceptr src, size_t bytes, Sides sides,
                               CUstream stream) {
  if (bytes == 0) return CUDA_SUCCESS;
  if (stream != nullptr) {
    if (capturing(stream)) return refuse_in_capture(stream);
    if (const CUresult r = cuStreamSynchronize(stream); r != CUDA_SUCCESS) return r;
  }
  const auto start = Clock::now();
  if (const auto direct = direct_copy(dst, src, bytes, sides)) {
    if (*direct == CUDA_SUCCESS) note_copy("direct", sides, bytes, start);
    return *direct;
  }
  const auto relay_start = Clock::now();
  const CUresult result = relayed_copy(dst, src, bytes, sides);
  if (result == CUDA_SUCCESS) note_copy("relayed", sides, bytes, relay_start);
  return result;
}

// cuMemcpy(Async) with unified addressing: which side each pointer is on, as far as the stub
// knows - its device allocations are device memory, everything else is the client's memory.
CUresult unified_copy(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream,
                      bool with_stream) {
  const bool dst_device = device_ranges().find(as_pointer(dst)).has_value();
  const bool src_device = device_ranges().find(as_pointer(src)).has_value();
  auto* host_dst = reinterpret_cast<void*>(static_cast<uintptr_t>(dst));
  const auto* host_src = reinterpret_cast<const void*>(static_cast<uintptr_t>(src));
  if (dst_device && src_device) {
    return with_stream ? cuMemcpyDtoDAsync_v2(dst, src, bytes, stream)
                       : cuMemcpyDtoD_v2(dst, src, bytes);
  }
  // The sides the stub does not know are taken for the client's memory: refused, not touched,
  // when they are not mapped here (a device address the stub never saw).
  if (bytes != 0 && ((!dst_device && !host_mapped(host_dst, bytes)) ||
                     (!src_device && !host_mapped(host_src, bytes)))) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (dst_device) return host_to_device(dst, host_src, bytes, stream, with_stream);
  if (src_device) {
    return device_to_host(host_dst, src, bytes, stream,
                          with_stream ? Fn::cuMemcpyDtoHAsync_v2 : Fn::cuMemcpyDtoH_v2);
  }
  // Host to host: the driver copies in the caller, after the stream's earlier work; a capture
  // takes it as a copy node, which copies here each time the graph runs (host_staging.h).
  if (bytes == 0) return CUDA_SUCCESS;
  if (host_dst == nullptr || host_src == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (with_stream) {
    if (capturing(stream)) return capture_host_copy(host_dst, host_src, bytes, stream);
    if (const CUresult r = cuStreamSynchronize(stream); r != CUDA_SUCCESS) return r;
  }
  std::memmove(host_dst, host_src, bytes);
  return CUDA_SUCCESS;
}

}  // namespace
}  // namespace gvirtus::cuda

extern "C" __attribute__((visibility("default"))) CUresult cuMemcpy(CUdeviceptr dst,
                                                                    CUdeviceptr src,
                                                                    size_t ByteCount) {
  return cr::unified_copy(dst, src, ByteCount, nullptr, false);
}

extern "C" __attribute__((visibility("default"))) CUresult cuMemcpyAsync(CUdeviceptr dst,
                                                                         CUdeviceptr src,
                                                                         size_t ByteCount,
                                                                         CUstream hStream) {
  return cr::unified_copy(dst, src, ByteCount, hStream, true);
}

// Device to device, and between contexts: one backend's driver copies when one backend holds
// both sides; in a pool, a copy between two backends' memory goes directly or is relayed
// (copy_between_backends).
extern "C" __attribute__((visibility("default"))) CUresult cuMemcpyDtoD_v2(CUdeviceptr dstDevice,
                                                                           CUdeviceptr srcDevice,
                                                                           size_t ByteCount) {
  if (const auto sides = cr::across_backends(cr::pool_backend_of_address(dstDevice),
                                             cr::pool_backend_of_address(srcDevice))) {
    return cr::copy_between_backends(dstDevice, srcDevice, ByteCount, *sides, nullptr);
  }
  const CUresult result = cr::remote::cuMemcpyDtoD_v2(dstDevice, srcDevice, ByteCount);
  gvirtus::process_session::managed_invalidate_range(dstDevice, ByteCount);
  return result;
}

extern "C" __attribute__((visibility("default"))) CUresult cuMemcpyDtoDAsync_v2(
    CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream) {
  if (const auto sides = cr::across_backends(cr::pool_backend_of_address(dstDevice),
                                             cr::pool_backend_of_address(srcDevice))) {
    return cr::copy_between_backends(dstDevice, srcDevice, ByteCount, *sides, hStream);
  }
  const CUresult result =
      cr::remote::ahead::cuMemcpyDtoDAsync_v2(dstDevice, srcDevice, ByteCount, hStream);
  gvirtus::process_session::managed_invalidate_range(dstDevice, ByteCount);
  return result;
}

namespace gvirtus::cuda {
namespace {

// A peer copy's sides: by its contexts' backends, or its addresses' when a context is not known.
std::optional<Sides> peer_sides(CUdeviceptr dst, CUcontext dst_context, CUdeviceptr src,
                                CUcontext src_context) {
  auto dst_backend = pool_backend_of_handle("context", dst_context);
  auto src_backend = pool_backend_of_handle("context", src_context);
  if (!dst_backend) dst_backend = pool_backend_of_address(dst);
  if (!src_backend) src_backend = pool_backend_of_address(src);
  return across_backends(dst_backend, src_backend);
}

}  // namespace
}  // namespace gvirtus::cuda

extern "C" __attribute__((visibility("default"))) CUresult cuMemcpyPeer(CUdeviceptr dstDevice,
                                                                        CUcontext dstContext,
                                                                        CUdeviceptr srcDevice,
                                                                        CUcontext srcContext,
                                                                        size_t ByteCount) {
  if (const auto sides = cr::peer_sides(dstDevice, dstContext, srcDevice, srcContext)) {
    return cr::copy_between_backends(dstDevice, srcDevice, ByteCount, *sides, nullptr);
  }
  return cr::remote::cuMemcpyPeer(dstDevice, dstContext, srcDevice, srcContext, ByteCount);
}

extern "C" __attribute__((visibility("default"))) CUresult cuMemcpyPeerAsync(
    CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice, CUcontext srcContext,
    size_t ByteCount, CUstream hStream) {
  if (const auto sides = cr::peer_sides(dstDevice, dstContext, srcDevice, srcContext)) {
    return cr::copy_between_backends(dstDevice, srcDevice, ByteCount, *sides, hStream);
  }
  return cr::remote::ahead::cuMemcpyPeerAsync(dstDevice, dstContext, srcDevice, srcContext,
                                              ByteCount, hStream);
}
