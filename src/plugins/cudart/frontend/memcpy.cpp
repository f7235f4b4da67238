// cudaMemcpy: host data travels in the request (to the device) or in the reply (from it).
#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>

#include "common/wire_record.h"
#include "plugins/cudart/common/memcpy_wire.h"
#include "plugins/cudart/frontend/memcpy_kind.h"
#include "plugins/cudart/frontend/memcpy_staged.h"
#include "plugins/cudart/frontend/shared_host.h"
#include "plugins/cudart/frontend/stub_call.h"

namespace gvirtus::cudart {
namespace {

// One chunk of a copy, on the wire.
struct Chunk {
  char* dst;
  const char* src;
  size_t count;
  cudaMemcpyKind kind;
  const cudaStream_t* stream;  // present for cudaMemcpyAsync

  void encode(WireWriter& w) const {
    put_record(w, MemcpyRequest{dst, src, count, kind, stream != nullptr ? *stream : nullptr});
    if (host_is_source(kind)) w.put_raw(src, count);
  }
  void decode(WireReader& r) const {
    if (!host_is_destination(kind) || r.remaining() == 0) return;  // no data after a failure
    const auto data = r.get_blob(count);
    if (data.size() != count) raise(ErrorKind::kInvalidInput, "short cudaMemcpy reply");
    std::memcpy(dst, data.data(), count);
  }
  // cudaMemcpyAsync's copies that bring no data back, into memory the stub knows is a device
  // allocation, are sent without waiting; every other chunk waits for its result.
  bool waits() const {
    if (stream == nullptr || host_is_destination(kind)) return true;
    const bool device_side_known =
        within_device_allocation(dst, count) &&
        (kind == cudaMemcpyHostToDevice || within_device_allocation(src, count));
    return !device_side_known;
  }
};

// The chunks of a large copy, pipelined: the next chunk's request leaves before the previous
// chunk's reply is read, so the backend copies one chunk while the client sends (to the device)
// or takes in (from it) the next, and a copy costs about one round trip however many chunks it
// has. Two chunks are in flight at most: memory stays bounded and a failure stops the copy one
// chunk later at worst (its result is read and dropped; the first failure is returned, and the
// backend's runtime has recorded it as the last error, as natively).
cudaError_t copy_chunks(const Chunk& whole) {
  // A copy of 0 bytes is still one call: the runtime checks its arguments all the same.
  const size_t chunks =
      std::max<size_t>(1, (whole.count + kMemcpyChunkBytes - 1) / kMemcpyChunkBytes);
  auto chunk = [&](size_t k) {
    Chunk c = whole;
    c.dst += k * kMemcpyChunkBytes;
    c.src += k * kMemcpyChunkBytes;
    c.count = std::min(kMemcpyChunkBytes, whole.count - k * kMemcpyChunkBytes);
    return c;
  };
  if (!whole.waits()) {
    for (size_t k = 0; k < chunks; ++k) {
      const Chunk c = chunk(k);
      const cudaError_t rc = remote_async(Fn::cudaMemcpyAsync, [&](WireWriter& w) { c.encode(w); });
      if (rc != cudaSuccess) return rc;
    }
    return cudaSuccess;
  }
  const Fn fn = whole.stream == nullptr ? Fn::cudaMemcpy : Fn::cudaMemcpyAsync;
  std::optional<std::pair<Chunk, RemotePending>> in_flight;
  auto finish = [&]() {
    const Chunk& c = in_flight->first;
    const cudaError_t rc = remote_finish(in_flight->second, [&](WireReader& r) { c.decode(r); });
    in_flight.reset();
    return rc;
  };
  for (size_t k = 0; k < chunks; ++k) {
    const Chunk c = chunk(k);
    RemotePending sent = remote_begin(fn, [&](WireWriter& w) { c.encode(w); });
    if (in_flight) {
      if (const cudaError_t rc = finish(); rc != cudaSuccess) {
        (void)remote_finish(sent, [](WireReader& r) { (void)r.get_raw(r.remaining()); });
        return rc;
      }
    }
    in_flight.emplace(c, sent);
  }
  return finish();
}

// A copy between the device and page-locked memory in the shared arena: the backend's runtime
// reads or writes that memory itself, so no bytes travel and no chunking is needed. As natively,
// an asynchronous one completes with its stream, and the application synchronises before it reads.
cudaError_t copy_shared(void* device, uint64_t offset, size_t count, cudaMemcpyKind kind,
                        const cudaStream_t* stream) {
  auto encode = [&](WireWriter& w) { put_shared_copy(w, device, offset, count, kind, stream); };
  if (stream == nullptr) return remote_sync(Fn::cudaMemcpyShared, encode, [](WireReader&) {});
  if (!within_device_allocation(device, count)) {
    return remote_sync(Fn::cudaMemcpySharedAsync, encode, [](WireReader&) {});
  }
  return remote_async(Fn::cudaMemcpySharedAsync, encode);
}

cudaError_t copy(void* dst, const void* src, size_t count, cudaMemcpyKind kind,
                 const cudaStream_t* stream) {
  if (!kind_in_range(kind)) return cudaErrorInvalidMemcpyDirection;
  kind = resolve_kind(kind, dst, src);
  if (const cudaError_t rc = check_host_side(dst, src, count, kind); rc != cudaSuccess) return rc;
  if (kind == cudaMemcpyHostToDevice) {
    if (const auto offset = shared_host_offset(src, count)) {
      return copy_shared(dst, *offset, count, kind, stream);
    }
  } else if (kind == cudaMemcpyDeviceToHost) {
    if (const auto offset = shared_host_offset(dst, count)) {
      return copy_shared(const_cast<void*>(src), *offset, count, kind, stream);
    }
  }
  // Ordinary client memory, synchronously: through pinned staging in the arena when there is one.
  if (stream == nullptr && (kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToHost)) {
    const bool to_device = kind == cudaMemcpyHostToDevice;
    if (const auto rc = copy_staged(to_device ? dst : const_cast<void*>(src),
                                    const_cast<void*>(to_device ? src : dst), count, kind)) {
      return *rc;
    }
  }
  return copy_chunks(
      Chunk{static_cast<char*>(dst), static_cast<const char*>(src), count, kind, stream});
}

}  // namespace
}  // namespace gvirtus::cudart

GVIRTUS_CUDART_EXPORT cudaError_t cudaMemcpy(void* dst, const void* src, size_t count,
                                             cudaMemcpyKind kind) {
  return gvirtus::cudart::copy(dst, src, count, kind, nullptr);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count,
                                                  cudaMemcpyKind kind, cudaStream_t stream) {
  return gvirtus::cudart::copy(dst, src, count, kind, &stream);
}
