// cudaMemcpy: host data travels in the request (to the device) or in the reply (from it).
#include <cstring>

#include "plugins/cudart/common/memcpy_wire.h"
#include "plugins/cudart/frontend/memcpy_kind.h"
#include "plugins/cudart/frontend/shared_host.h"
#include "plugins/cudart/frontend/stub_call.h"

namespace gvirtus::cudart {
namespace {

// One chunk of a copy. `stream` is present for cudaMemcpyAsync, whose copies that bring no data
// back, into memory the stub knows is a device allocation, are sent without waiting.
cudaError_t copy_chunk(char* dst, const char* src, size_t count, cudaMemcpyKind kind,
                       const cudaStream_t* stream) {
  auto encode = [&](WireWriter& w) {
    w.put<uint64_t>(reinterpret_cast<uintptr_t>(dst));
    w.put<uint64_t>(reinterpret_cast<uintptr_t>(src));
    w.put<uint64_t>(count);
    w.put<int32_t>(kind);
    if (stream != nullptr) put_value(w, *stream);
    if (host_is_source(kind)) w.put_raw(src, count);
  };
  auto decode = [&](WireReader& r) {
    if (!host_is_destination(kind) || r.remaining() == 0) return;  // no data after a failure
    const auto data = r.get_blob(count);
    if (data.size() != count) raise(ErrorKind::kInvalidInput, "short cudaMemcpy reply");
    std::memcpy(dst, data.data(), count);
  };
  if (stream == nullptr) return remote_sync(Fn::cudaMemcpy, encode, decode);
  // Sent without waiting when nothing comes back and the device side is surely valid.
  const bool device_side_known =
      within_device_allocation(dst, count) &&
      (kind == cudaMemcpyHostToDevice || within_device_allocation(src, count));
  if (host_is_destination(kind) || !device_side_known) {
    return remote_sync(Fn::cudaMemcpyAsyncPull, encode, decode);
  }
  return remote_async(Fn::cudaMemcpyAsyncPush, encode);
}

// A copy between the device and page-locked memory in the shared arena: the backend's runtime
// reads or writes that memory itself, so no bytes travel and no chunking is needed. As natively,
// an asynchronous one completes with its stream, and the application synchronises before it reads.
cudaError_t copy_shared(void* device, uint64_t offset, size_t count, cudaMemcpyKind kind,
                        const cudaStream_t* stream) {
  auto encode = [&](WireWriter& w) {
    w.put<uint64_t>(reinterpret_cast<uintptr_t>(device));
    w.put<uint64_t>(offset);
    w.put<uint64_t>(count);
    w.put<int32_t>(kind);
    if (stream != nullptr) put_value(w, *stream);
  };
  if (stream == nullptr) return remote_sync(Fn::cudaMemcpyShared, encode, [](WireReader&) {});
  if (!within_device_allocation(device, count)) {
    return remote_sync(Fn::cudaMemcpySharedAsyncPull, encode, [](WireReader&) {});
  }
  return remote_async(Fn::cudaMemcpySharedAsyncPush, encode);
}

cudaError_t copy(void* dst, const void* src, size_t count, cudaMemcpyKind kind,
                 const cudaStream_t* stream) {
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
  auto* d = static_cast<char*>(dst);
  const auto* s = static_cast<const char*>(src);
  if (count == 0) return copy_chunk(d, s, 0, kind, stream);
  for (size_t done = 0; done < count; done += kMemcpyChunkBytes) {
    const size_t n = std::min(kMemcpyChunkBytes, count - done);
    const cudaError_t rc = copy_chunk(d + done, s + done, n, kind, stream);
    if (rc != cudaSuccess) return rc;
  }
  return cudaSuccess;
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
