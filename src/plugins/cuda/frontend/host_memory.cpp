// Host memory in driver mode. Over a transport that shares memory with the backend (shm's arena),
// cuMemHostAlloc and cuMemAllocHost place their blocks there (through the process's frontend,
// which places every stub's blocks) and the backend registers them with its GPU, mapped: their
// device pointer (cuMemHostGetDevicePointer) reaches the very pages this process writes. Elsewhere
// page-locked host memory is the client's own page-aligned memory, recorded so that copies and
// queries know it, and it has no device pointer (CUDA_ERROR_NOT_SUPPORTED: the backend's GPU
// cannot reach another machine's memory); so has memory registered with cuMemHostRegister, which
// is the application's own wherever it lies. The client's own page-locked memory, allocated or
// registered, is named to the transport too (gvirtus_host_memory_register), so that rdma sends
// copies from it without a staging copy; it is taken back before the memory goes.
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>

#include <map>
#include <mutex>
#include <new>
#include <optional>

#include "common/host_mapped.h"
#include "common/log.h"
#include "common/wire_record.h"
#include "cuda_remote_calls.h"
#include "frontend/process_session.h"
#include "plugins/cuda/common/driver_wire.h"
#include "plugins/cuda/frontend/memory_ranges.h"
#include "plugins/cuda/frontend/pool_routes.h"

namespace gvirtus::cuda {

bool host_mapped(const void* address, size_t bytes) {
  return gvirtus::host_mapped(address, bytes);
}

AddressRanges& device_ranges() {
  static auto* ranges = new AddressRanges;  // never destroyed: used until the process ends
  return *ranges;
}
AddressRanges& host_allocations() {
  static auto* ranges = new AddressRanges;
  return *ranges;
}
AddressRanges& host_registrations() {
  static auto* ranges = new AddressRanges;
  return *ranges;
}

// How many allocations were noted: the allocation clock (memory_ranges.h).
std::atomic<uint64_t>& allocations_noted = *new std::atomic<uint64_t>(0);

void note_allocated(Fn, CUdeviceptr address, uint64_t bytes) {
  const uint64_t noted = ++allocations_noted;
  // One another backend of the pool holds is not this process's yet: it is given back.
  if (!pool_note_address(address, bytes, noted)) return;
  device_ranges().add(as_pointer(address), bytes, 0, -1, noted);
}

void note_freed(Fn, CUdeviceptr address, uint64_t noted_by) {
  device_ranges().remove_noted_by(as_pointer(address), noted_by);
  pool_forget_address(address, noted_by);
}

uint64_t allocation_clock() {
  return allocations_noted.load();
}

namespace {

constexpr unsigned kHostAllocFlags =
    CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED;
constexpr unsigned kHostRegisterFlags = CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP |
                                        CU_MEMHOSTREGISTER_IOMEMORY | CU_MEMHOSTREGISTER_READ_ONLY;

// A block of the shared memory, registered by the backend: where it is, and its device pointer.
struct SharedBlock {
  uint64_t offset;
  CUdeviceptr device;
};
std::mutex& shared_mutex = *new std::mutex;
std::map<uintptr_t, SharedBlock>* g_shared_blocks = nullptr;

// The blocks by host address; never destroyed. A forked child's session has shared memory of its
// own: the parent's blocks, still mapped in the child, are forgotten there (they are then the
// child's own host memory; naming them to the child's backend would name nothing it registered).
std::map<uintptr_t, SharedBlock>& shared_blocks() {
  static auto* blocks = [] {
    g_shared_blocks = new std::map<uintptr_t, SharedBlock>;
    ::pthread_atfork(nullptr, nullptr, [] {
      new (&shared_mutex) std::mutex;  // only the forking thread exists in the child
      g_shared_blocks->clear();
    });
    return g_shared_blocks;
  }();
  return *blocks;
}

// Places `bytes` in the shared memory, registered by the backend: nullopt when there is none or it
// is full (the caller allocates its own memory), else the backend's answer.
std::optional<CUresult> shared_alloc(void** pp, size_t bytes, unsigned flags) {
  // In a pool, page-locked memory is any backend's to copy with: it cannot live in one backend's
  // shared memory (docs/cluster.md).
  if (pooled()) return std::nullopt;
  std::span<std::byte> memory;
  std::optional<process_session::SharedBlock> block;
  try {
    memory = process_session::shared_memory();
    if (memory.empty()) return std::nullopt;
    block = process_session::take_shared(bytes);
  } catch (...) {
    return std::nullopt;  // no session: the next remote call says why
  }
  if (!block) return std::nullopt;
  uint64_t device = 0;
  const CUresult result = remote_sync(
      Fn::cuMemHostRegister_v2,
      [&](WireWriter& w) {
        put_record(w, SharedHostRequest{block->offset, block->bytes, flags});
      },
      [&](WireReader& r) { device = r.get<uint64_t>(); });
  if (result != CUDA_SUCCESS) {
    process_session::give_back_shared(block->offset);
    return result;
  }
  std::byte* host = memory.data() + block->offset;
  {
    std::lock_guard lock(shared_mutex);
    shared_blocks()[reinterpret_cast<uintptr_t>(host)] = SharedBlock{block->offset, device};
  }
  host_allocations().add(host, bytes, flags);
  *pp = host;
  return CUDA_SUCCESS;
}

// Frees a shared block that starts at `p`: nullopt when none does.
std::optional<CUresult> shared_free(void* p) {
  SharedBlock block{};
  {
    std::lock_guard lock(shared_mutex);
    const auto found = shared_blocks().find(reinterpret_cast<uintptr_t>(p));
    if (found == shared_blocks().end()) return std::nullopt;
    block = found->second;
    shared_blocks().erase(found);
  }
  host_allocations().remove(p);
  const CUresult result = remote_sync(
      Fn::cuMemHostUnregister, [&](WireWriter& w) { w.put<uint64_t>(block.offset); },
      [](WireReader&) {});
  try {
    process_session::give_back_shared(block.offset);
  } catch (...) {  // the session is gone, and its shared memory with it
  }
  return result;
}

CUresult host_alloc(void** pp, size_t bytes, unsigned flags) {
  if (pp == nullptr || (flags & ~kHostAllocFlags) != 0) return CUDA_ERROR_INVALID_VALUE;
  if (bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  if (const auto placed = shared_alloc(pp, bytes, flags)) return *placed;
  void* memory = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
  host_allocations().add(memory, bytes, flags);
  process_session::register_host_memory(memory, bytes);  // rdma sends straight from it
  *pp = memory;
  return CUDA_SUCCESS;
}

}  // namespace

CUdeviceptr shared_device_pointer(const void* address) {
  const auto allocation = host_allocations().find(address);
  if (!allocation) return 0;
  std::lock_guard lock(shared_mutex);
  const auto block = shared_blocks().find(allocation->start);
  if (block == shared_blocks().end()) return 0;
  return block->second.device + (reinterpret_cast<uintptr_t>(address) - allocation->start);
}

std::optional<uint64_t> shared_offset(const void* address, size_t bytes) {
  if (bytes == 0) return std::nullopt;
  const auto allocation = host_allocations().find(address);
  if (!allocation) return std::nullopt;
  const uintptr_t at = reinterpret_cast<uintptr_t>(address) - allocation->start;
  if (bytes > allocation->bytes || at > allocation->bytes - bytes) return std::nullopt;
  std::lock_guard lock(shared_mutex);
  const auto block = shared_blocks().find(allocation->start);
  if (block == shared_blocks().end()) return std::nullopt;
  return block->second.offset + at;
}

std::byte* shared_block(size_t bytes) {
  void* block = nullptr;
  const auto placed = shared_alloc(&block, bytes, 0);
  return placed && *placed == CUDA_SUCCESS ? static_cast<std::byte*>(block) : nullptr;
}

void free_shared_block(std::byte* block) {
  (void)shared_free(block);
}

const void* shared_arena() {
  if (pooled()) return nullptr;  // page-locked memory is no one backend's in a pool
  try {
    const std::span<std::byte> memory = process_session::shared_memory();
    return memory.empty() ? nullptr : memory.data();
  } catch (...) {
    return nullptr;  // no session: the next remote call says why
  }
}

}  // namespace gvirtus::cuda

namespace cr = gvirtus::cuda;

extern "C" __attribute__((visibility("default"))) CUresult cuMemAllocHost_v2(void** pp,
                                                                             size_t bytesize) {
  return cr::host_alloc(pp, bytesize, 0);
}

extern "C" __attribute__((visibility("default"))) CUresult cuMemHostAlloc(void** pp,
                                                                          size_t bytesize,
                                                                          unsigned int Flags) {
  return cr::host_alloc(pp, bytesize, Flags);
}

extern "C" __attribute__((visibility("default"))) CUresult cuMemFreeHost(void* p) {
  if (p == nullptr) return CUDA_SUCCESS;  // as the driver (and so cudaFreeHost(nullptr)) answers
  if (const auto freed = cr::shared_free(p)) return *freed;
  const auto range = cr::host_allocations().take(p);
  if (!range) return CUDA_ERROR_INVALID_VALUE;
  gvirtus::process_session::unregister_host_memory(p, range->bytes);
  ::munmap(p, range->bytes);
  return CUDA_SUCCESS;
}

extern "C" __attribute__((visibility("default"))) CUresult cuMemHostGetFlags(unsigned int* pFlags,
                                                                             void* p) {
  if (pFlags == nullptr) return CUDA_ERROR_INVALID_VALUE;
  auto range = cr::host_allocations().find(p);
  if (!range) range = cr::host_registrations().find(p);
  if (!range) return CUDA_ERROR_INVALID_VALUE;
  *pFlags = range->flags;
  return CUDA_SUCCESS;
}

extern "C" __attribute__((visibility("default"))) CUresult cuMemHostRegister_v2(
    void* p, size_t bytesize, unsigned int Flags) {
  if (p == nullptr || bytesize == 0 || (Flags & ~cr::kHostRegisterFlags) != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (cr::host_registrations().overlaps(p, bytesize) ||
      cr::host_allocations().overlaps(p, bytesize)) {
    return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
  }
  cr::host_registrations().add(p, bytesize, Flags);
  gvirtus::process_session::register_host_memory(p, bytesize);
  return CUDA_SUCCESS;
}

extern "C" __attribute__((visibility("default"))) CUresult cuMemHostUnregister(void* p) {
  const auto range = cr::host_registrations().take(p);
  if (!range) return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
  gvirtus::process_session::unregister_host_memory(p, range->bytes);
  return CUDA_SUCCESS;
}

extern "C" __attribute__((visibility("default"))) CUresult cuMemHostGetDevicePointer_v2(
    CUdeviceptr* pdptr, void* p, unsigned int Flags) {
  if (pdptr == nullptr || Flags != 0) return CUDA_ERROR_INVALID_VALUE;
  if (!cr::host_allocations().find(p) && !cr::host_registrations().find(p)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (const CUdeviceptr device = cr::shared_device_pointer(p); device != 0) {
    *pdptr = device;
    return CUDA_SUCCESS;
  }
  static std::atomic<bool> logged{false};
  if (!logged.exchange(true)) {
    GVIRTUS_LOG(kWarning) << "libcuda.so.1: host memory outside the memory shared with the "
                             "backend (shm) has no device pointer: the backend's GPU cannot "
                             "reach this machine's memory";
  }
  return CUDA_ERROR_NOT_SUPPORTED;
}
