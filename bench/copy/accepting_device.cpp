// The accepting device: a test double preloaded into gvirtus-backend on a machine without a GPU,
// so that the copy path can be measured (gvirtus-bench copy) and tested (tests/cudart) end to
// end. It is never GPU evidence, and everything that uses it says so.
//
// Why it is needed: NVIDIA's runtime answers the stub's first call (cudaFree(nullptr)) with
// cudaErrorInsufficientDriver on such a machine, after which the stub answers every copy with
// that error itself and sends no bytes. These definitions interpose the runtime's few functions
// that a copy reaches on the backend, so that its bytes travel as they do on a GPU machine.
//
// Its memory is a 64 GiB address range (below): cudaMalloc hands out addresses there, and the
// backend's vetting finds them to be device memory through cudaPointerGetAttributes. What a copy
// does with the bytes depends on GVIRTUS_ACCEPTING_DEVICE:
//   unset or "drop"  the device side of a copy is not touched: bytes sent to the device are
//                    dropped and bytes read from it are whatever the reply buffer held. The
//                    bandwidth measured is then gvirtus's alone, as a GPU's DMA costs the CPU
//                    nothing.
//   "keep"           the range is backed by host memory (reserved without commitment, so only
//                    what is written costs memory): copies to the device store the bytes, copies
//                    from it return them, so a test can check every byte of a round trip.
// Host-to-host copies are always done for real. Registered host memory (cudaHostRegister: the
// shm arena's blocks, staging blocks) is the device's to reach at its own address. 3D copies
// between pitched pointers are copies of their rows. In "keep" mode cudaMallocManaged places
// page-aligned memory of its own from kManagedBase (a client mirrors it at the same address:
// docs/managed-memory.md); it is device memory to copies, and managed to cudaPointerGetAttributes.
// CUDA arrays are accepting_arrays.cpp's: rows of the device's memory. "keep" mode also counts
// one device and loads libraries (cudaLibraryLoadData takes any image), whose managed variables it
// places packed in managed memory (cudaLibraryGetManaged), sizes read from the image's symbol
// tables. Its memory pools, shareable between sessions, are accepting_pools.cpp's; its error log,
// which an invalid cudaSetDevice writes to, accepting_logs.cpp's.
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "elf_symbols.h"

// An array's storage as a pitched pointer and its element's bytes; false for no array of the
// device's (accepting_arrays.cpp).
bool accepting_array_rows(cudaArray_const_t array, cudaPitchedPtr& rows, uint64_t& element);
// Writes a failure into the device's error log (accepting_logs.cpp).
void accepting_log(const std::string& line);
// With GVIRTUS_ACCEPTING_MEMORY_BUDGET (bytes) set: when `allocated` exceeds it, the registered
// device notification callbacks are told by how much, on a thread of their own
// (accepting_logs.cpp).
void accepting_notify_if_over_budget(uint64_t allocated);

namespace {

// In "drop" mode the device's memory is the address range [kDeviceBase, kDeviceBase +
// kDeviceBytes): nothing is mapped there, the addresses only name device memory (programs that
// do not allocate, tests/cudart/programs/copy_loop.cpp, copy to kDeviceBase directly). In "keep"
// mode the range is host memory mapped wherever the kernel finds room for it, near kDeviceBase
// when that is free (an ASan runtime keeps its allocator there).
constexpr uintptr_t kDeviceBase = uintptr_t{0x600000000000};
constexpr uintptr_t kDeviceBytes = uintptr_t{64} << 30;
constexpr uintptr_t kAlignment = 512;  // as cudaMalloc's, at least 256

struct Device {
  uintptr_t base;  // 0: "keep" mode without memory (cudaMalloc fails)
  bool keep;
};

// Decided on first use, from GVIRTUS_ACCEPTING_DEVICE; in "keep" mode the memory is reserved
// then, without commitment, so only what is written costs memory.
const Device& device() {
  static const Device d = [] {
    const char* mode = std::getenv("GVIRTUS_ACCEPTING_DEVICE");
    if (mode == nullptr || std::strcmp(mode, "keep") != 0) return Device{kDeviceBase, false};
    void* at = ::mmap(reinterpret_cast<void*>(kDeviceBase), kDeviceBytes, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return Device{at == MAP_FAILED ? 0 : reinterpret_cast<uintptr_t>(at), true};
  }();
  return d;
}

// Managed memory ("keep" mode): below the device's range, far from a client's own mappings.
constexpr uintptr_t kManagedBase = uintptr_t{0x5d0000000000};
std::mutex managed_mutex;
std::vector<std::pair<uintptr_t, size_t>> managed_ranges;  // start, bytes
uintptr_t next_managed = kManagedBase;

bool in_managed(const void* ptr, size_t count = 1) {
  const auto address = reinterpret_cast<uintptr_t>(ptr);
  std::lock_guard lock(managed_mutex);
  for (const auto& [start, bytes] : managed_ranges) {
    if (address >= start && address - start < bytes && count <= bytes - (address - start)) {
      return true;
    }
  }
  return false;
}

// Page-locked host memory (cudaHostRegister): mapped, so the device reaches it at its own
// address (cudaHostGetDevicePointer), as with unified addressing.
std::mutex registered_mutex;
std::map<uintptr_t, size_t> registered;  // start, bytes

bool in_registered(const void* ptr, size_t count) {
  const auto address = reinterpret_cast<uintptr_t>(ptr);
  std::lock_guard lock(registered_mutex);
  auto it = registered.upper_bound(address);
  if (it == registered.begin()) return false;
  --it;
  return address - it->first < it->second && count <= it->second - (address - it->first);
}

bool in_device(const void* ptr, size_t count = 1) {
  if (in_registered(ptr, count)) return true;
  const uintptr_t base = device().base;
  const auto address = reinterpret_cast<uintptr_t>(ptr);
  if (base != 0 && address >= base && address - base < kDeviceBytes &&
      count <= kDeviceBytes - (address - base)) {
    return true;
  }
  return in_managed(ptr, count);
}

std::atomic<uintptr_t> allocated{0};  // bytes handed out by cudaMalloc

bool host_side(cudaMemcpyKind kind, bool source) {
  if (source) return kind == cudaMemcpyHostToDevice || kind == cudaMemcpyHostToHost;
  return kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyHostToHost;
}

cudaError_t copy(void* dst, const void* src, size_t count, cudaMemcpyKind kind) {
  if (kind == cudaMemcpyDefault) {
    kind = in_device(dst) ? (in_device(src) ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice)
                          : (in_device(src) ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost);
  }
  if ((!host_side(kind, false) && !in_device(dst, count)) ||
      (!host_side(kind, true) && !in_device(src, count))) {
    return cudaErrorInvalidValue;
  }
  if (kind == cudaMemcpyHostToHost || device().keep) std::memmove(dst, src, count);
  return cudaSuccess;
}

// A user object of the device's (cudaUserObjectCreate): the backend's ledger guarantees that
// only references held are released.
struct UserObject {
  void* ptr;
  cudaHostFn_t destroy;
  uint64_t references;
};

std::mutex& user_objects_mutex() {
  static std::mutex* const kept = new std::mutex;
  return *kept;
}

// Libraries ("keep" mode; the others leave them to the runtime): an image accepted as it is, and
// its managed variables placed side by side in a managed region of the library's own, as a
// driver packs them - several share a page - with the sizes its symbol tables give.
struct Library {
  std::map<std::string, uint64_t> sizes;
  std::map<std::string, uintptr_t> placed;
  uintptr_t region = 0;
  size_t used = 0;
};
constexpr size_t kLibraryManagedBytes = size_t{8} << 20;
std::mutex& libraries_mutex() {
  static std::mutex* const kept = new std::mutex;
  return *kept;
}

// A fatbinary's bytes, from its own header (magic, version, header size, then the size of what
// follows it), or none for anything else.
std::span<const std::byte> fatbin_image(const void* code) {
  constexpr uint32_t kFatbinMagic = 0xBA55ED50;
  uint32_t magic = 0;
  uint16_t header_bytes = 0;
  uint64_t body_bytes = 0;
  std::memcpy(&magic, code, sizeof magic);
  if (magic != kFatbinMagic) return {};
  std::memcpy(&header_bytes, static_cast<const std::byte*>(code) + 6, sizeof header_bytes);
  std::memcpy(&body_bytes, static_cast<const std::byte*>(code) + 8, sizeof body_bytes);
  return {static_cast<const std::byte*>(code), header_bytes + body_bytes};
}

template <typename Function>
Function next_definition(const char* name) {
  return reinterpret_cast<Function>(::dlsym(RTLD_NEXT, name));
}

}  // namespace

extern "C" {

#define ACCEPTING_DEVICE_EXPORT __attribute__((visibility("default")))

ACCEPTING_DEVICE_EXPORT cudaError_t cudaFree(void*) {
  return cudaSuccess;
}

// One device, 0.
ACCEPTING_DEVICE_EXPORT cudaError_t cudaGetDevice(int* device) {
  if (device == nullptr) return cudaErrorInvalidValue;
  *device = 0;
  return cudaSuccess;
}
// One device in "keep" mode, which has memory; the others leave the count to the runtime.
ACCEPTING_DEVICE_EXPORT cudaError_t cudaGetDeviceCount(int* count) {
  if (!device().keep) {
    using Count = cudaError_t (*)(int*);
    const auto next = next_definition<Count>("cudaGetDeviceCount");
    return next != nullptr ? next(count) : cudaErrorNoDevice;
  }
  if (count == nullptr) return cudaErrorInvalidValue;
  *count = 1;
  return cudaSuccess;
}
ACCEPTING_DEVICE_EXPORT cudaError_t cudaSetDevice(int device) {
  if (device == 0) return cudaSuccess;
  accepting_log("accepting device: cudaSetDevice(" + std::to_string(device) + "): no such device");
  return cudaErrorInvalidDevice;
}

ACCEPTING_DEVICE_EXPORT cudaError_t cudaMalloc(void** ptr, size_t size) {
  if (ptr == nullptr) return cudaErrorInvalidValue;
  if (device().base == 0) return cudaErrorMemoryAllocation;
  const uintptr_t rounded =
      std::max<uintptr_t>(kAlignment, (size + kAlignment - 1) / kAlignment * kAlignment);
  const uintptr_t offset = allocated.fetch_add(rounded);
  if (offset + rounded > kDeviceBytes) return cudaErrorMemoryAllocation;
  *ptr = reinterpret_cast<void*>(device().base + offset);
  accepting_notify_if_over_budget(offset + rounded);
  return cudaSuccess;
}

// Page-aligned memory of its own, in "keep" mode only (the others have no memory to give).
ACCEPTING_DEVICE_EXPORT cudaError_t cudaMallocManaged(void** ptr, size_t size, unsigned int) {
  if (ptr == nullptr || size == 0) return cudaErrorInvalidValue;
  if (!device().keep) return cudaErrorMemoryAllocation;
  const size_t mapped = (size + 4095) / 4096 * 4096;
  std::lock_guard lock(managed_mutex);
  void* at = ::mmap(reinterpret_cast<void*>(next_managed), mapped, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  if (at != reinterpret_cast<void*>(next_managed)) {
    if (at != MAP_FAILED) ::munmap(at, mapped);
    return cudaErrorMemoryAllocation;
  }
  managed_ranges.emplace_back(next_managed, size);
  next_managed += mapped + (uintptr_t{2} << 20);
  *ptr = at;
  return cudaSuccess;
}

ACCEPTING_DEVICE_EXPORT cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attributes,
                                                             const void* ptr) {
  const bool device = in_device(ptr);
  *attributes = cudaPointerAttributes{};
  attributes->type = in_managed(ptr) ? cudaMemoryTypeManaged
                     : device        ? cudaMemoryTypeDevice
                                     : cudaMemoryTypeUnregistered;
  attributes->devicePointer = device ? const_cast<void*>(ptr) : nullptr;
  return cudaSuccess;
}

ACCEPTING_DEVICE_EXPORT cudaError_t cudaMemcpy(void* dst, const void* src, size_t count,
                                               cudaMemcpyKind kind) {
  return copy(dst, src, count, kind);
}

// Done at once: the stream has nothing else in it to wait for.
ACCEPTING_DEVICE_EXPORT cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count,
                                                    cudaMemcpyKind kind, cudaStream_t) {
  return copy(dst, src, count, kind);
}

// Page-locked memory (the shm arena's blocks): the device reads and writes it where it is.
// 3D copies: row by row, each a copy of the copy's kind. An array side is its storage's rows
// (accepting_arrays.cpp), device memory; with an array taking part the extent's width and both
// sides' positions x count its elements, as the runtime counts them, else bytes.
ACCEPTING_DEVICE_EXPORT cudaError_t cudaMemcpy3D(const cudaMemcpy3DParms* p) {
  if (p == nullptr) return cudaErrorInvalidValue;
  cudaPitchedPtr from = p->srcPtr, to = p->dstPtr;
  uint64_t element = 1;
  if (p->srcArray != nullptr || p->dstArray != nullptr) {
    uint64_t src_element = 0, dst_element = 0;
    if ((p->srcArray != nullptr && !accepting_array_rows(p->srcArray, from, src_element)) ||
        (p->dstArray != nullptr && !accepting_array_rows(p->dstArray, to, dst_element))) {
      return cudaErrorInvalidResourceHandle;
    }
    element = src_element != 0 ? src_element : dst_element;
    // An array is device memory: a kind naming it host memory is the runtime's error.
    if ((p->srcArray != nullptr && host_side(p->kind, true)) ||
        (p->dstArray != nullptr && host_side(p->kind, false))) {
      return cudaErrorInvalidMemcpyDirection;
    }
  }
  const size_t row = p->extent.width * element;
  for (size_t z = 0; z < p->extent.depth; ++z) {
    for (size_t y = 0; y < p->extent.height; ++y) {
      const auto* src = static_cast<const char*>(from.ptr) +
                        (p->srcPos.z + z) * from.pitch * from.ysize +
                        (p->srcPos.y + y) * from.pitch + p->srcPos.x * element;
      auto* dst = static_cast<char*>(to.ptr) + (p->dstPos.z + z) * to.pitch * to.ysize +
                  (p->dstPos.y + y) * to.pitch + p->dstPos.x * element;
      if (const cudaError_t rc = copy(dst, src, row, p->kind); rc != cudaSuccess) return rc;
    }
  }
  return cudaSuccess;
}

ACCEPTING_DEVICE_EXPORT cudaError_t cudaMemcpy3DAsync(const cudaMemcpy3DParms* p, cudaStream_t) {
  return cudaMemcpy3D(p);
}

ACCEPTING_DEVICE_EXPORT cudaError_t cudaHostRegister(void* ptr, size_t size, unsigned int) {
  if (ptr == nullptr || size == 0) return cudaErrorInvalidValue;
  std::lock_guard lock(registered_mutex);
  registered[reinterpret_cast<uintptr_t>(ptr)] = size;
  return cudaSuccess;
}
ACCEPTING_DEVICE_EXPORT cudaError_t cudaHostUnregister(void* ptr) {
  std::lock_guard lock(registered_mutex);
  registered.erase(reinterpret_cast<uintptr_t>(ptr));
  return cudaSuccess;
}
ACCEPTING_DEVICE_EXPORT cudaError_t cudaHostGetDevicePointer(void** device, void* host,
                                                             unsigned int) {
  *device = host;
  return cudaSuccess;
}

// Batches of managed prefetches and discards ("keep" mode, managed memory only): a prefetch moves
// nothing (the memory is one); a discard leaves its ranges indeterminate, here 0xdd bytes, so that
// a test sees a client that read them afterwards got the device's bytes, not a stale copy.
ACCEPTING_DEVICE_EXPORT cudaError_t cudaMemPrefetchBatchAsync(void** dptrs, size_t* sizes,
                                                              size_t count, cudaMemLocation*,
                                                              size_t*, size_t, unsigned long long,
                                                              cudaStream_t) {
  for (size_t i = 0; i < count; ++i) {
    if (!in_managed(dptrs[i], sizes[i])) return cudaErrorInvalidValue;
  }
  return cudaSuccess;
}
ACCEPTING_DEVICE_EXPORT cudaError_t cudaMemDiscardBatchAsync(void** dptrs, size_t* sizes,
                                                             size_t count, unsigned long long,
                                                             cudaStream_t) {
  for (size_t i = 0; i < count; ++i) {
    if (!in_managed(dptrs[i], sizes[i])) return cudaErrorInvalidValue;
    std::memset(dptrs[i], 0xdd, sizes[i]);
  }
  return cudaSuccess;
}

ACCEPTING_DEVICE_EXPORT cudaError_t cudaDeviceSynchronize() {
  return cudaSuccess;
}
ACCEPTING_DEVICE_EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t) {
  return cudaSuccess;
}

// Host functions and stream callbacks run as they are enqueued: the device's streams never have
// work in flight. No stream captures.
ACCEPTING_DEVICE_EXPORT cudaError_t cudaLaunchHostFunc(cudaStream_t, cudaHostFn_t fn, void* data) {
  if (fn == nullptr) return cudaErrorInvalidValue;
  fn(data);
  return cudaSuccess;
}
ACCEPTING_DEVICE_EXPORT cudaError_t cudaStreamAddCallback(cudaStream_t stream,
                                                          cudaStreamCallback_t callback, void* data,
                                                          unsigned int flags) {
  if (callback == nullptr || flags != 0) return cudaErrorInvalidValue;
  callback(stream, cudaSuccess, data);
  return cudaSuccess;
}
ACCEPTING_DEVICE_EXPORT cudaError_t cudaStreamIsCapturing(cudaStream_t,
                                                          cudaStreamCaptureStatus* status) {
  if (status == nullptr) return cudaErrorInvalidValue;
  *status = cudaStreamCaptureStatusNone;
  return cudaSuccess;
}

// User objects: counted references, the destructor run as the last one goes.
ACCEPTING_DEVICE_EXPORT cudaError_t cudaUserObjectCreate(cudaUserObject_t* object, void* ptr,
                                                         cudaHostFn_t destroy, unsigned int count,
                                                         unsigned int flags) {
  if (object == nullptr || destroy == nullptr || count == 0 ||
      flags != cudaUserObjectNoDestructorSync) {
    return cudaErrorInvalidValue;
  }
  std::lock_guard lock(user_objects_mutex());
  auto* made = new UserObject{ptr, destroy, count};
  *object = reinterpret_cast<cudaUserObject_t>(made);
  return cudaSuccess;
}
ACCEPTING_DEVICE_EXPORT cudaError_t cudaUserObjectRetain(cudaUserObject_t object,
                                                         unsigned int count) {
  std::lock_guard lock(user_objects_mutex());
  reinterpret_cast<UserObject*>(object)->references += count;
  return cudaSuccess;
}
ACCEPTING_DEVICE_EXPORT cudaError_t cudaUserObjectRelease(cudaUserObject_t object,
                                                          unsigned int count) {
  auto* o = reinterpret_cast<UserObject*>(object);
  {
    std::lock_guard lock(user_objects_mutex());
    o->references -= std::min<uint64_t>(count, o->references);
    if (o->references != 0) return cudaSuccess;
  }
  o->destroy(o->ptr);
  delete o;
  return cudaSuccess;
}

ACCEPTING_DEVICE_EXPORT cudaError_t cudaMallocManaged(void** ptr, size_t size, unsigned int);

ACCEPTING_DEVICE_EXPORT cudaError_t cudaLibraryLoadData(cudaLibrary_t* library, const void* code,
                                                        cudaJitOption* jit_options,
                                                        void** jit_values, unsigned int jit_count,
                                                        cudaLibraryOption* options, void** values,
                                                        unsigned int count) {
  if (!device().keep) {
    using Load = cudaError_t (*)(cudaLibrary_t*, const void*, cudaJitOption*, void**, unsigned,
                                 cudaLibraryOption*, void**, unsigned);
    const auto next = next_definition<Load>("cudaLibraryLoadData");
    return next != nullptr
               ? next(library, code, jit_options, jit_values, jit_count, options, values, count)
               : cudaErrorNotSupported;
  }
  if (library == nullptr || code == nullptr) return cudaErrorInvalidValue;
  auto made = std::make_unique<Library>();
  const auto image = fatbin_image(code);
  if (!image.empty()) {
    try {
      for (const auto& v : gvirtus::fatbin::fatbin_variables(image)) made->sizes[v.name] = v.bytes;
    } catch (...) {
      return cudaErrorInvalidKernelImage;
    }
  }
  std::lock_guard lock(libraries_mutex());
  *library = reinterpret_cast<cudaLibrary_t>(made.release());
  return cudaSuccess;
}

ACCEPTING_DEVICE_EXPORT cudaError_t cudaLibraryGetManaged(void** dptr, size_t* bytes,
                                                          cudaLibrary_t library, const char* name) {
  if (!device().keep) {
    using Get = cudaError_t (*)(void**, size_t*, cudaLibrary_t, const char*);
    const auto next = next_definition<Get>("cudaLibraryGetManaged");
    return next != nullptr ? next(dptr, bytes, library, name) : cudaErrorNotSupported;
  }
  if (library == nullptr || name == nullptr) return cudaErrorInvalidValue;
  std::lock_guard lock(libraries_mutex());
  auto& l = *reinterpret_cast<Library*>(library);
  const auto size = l.sizes.find(name);
  if (size == l.sizes.end()) return cudaErrorSymbolNotFound;
  auto placed = l.placed.find(name);
  if (placed == l.placed.end()) {
    constexpr size_t kAlign = 16;
    const size_t offset = (l.used + kAlign - 1) / kAlign * kAlign;
    if (l.region == 0) {
      void* region = nullptr;
      if (cudaMallocManaged(&region, kLibraryManagedBytes, 0) != cudaSuccess) {
        return cudaErrorMemoryAllocation;
      }
      l.region = reinterpret_cast<uintptr_t>(region);
    }
    if (offset > kLibraryManagedBytes || size->second > kLibraryManagedBytes - offset) {
      return cudaErrorMemoryAllocation;
    }
    l.used = offset + size->second;
    placed = l.placed.emplace(name, l.region + offset).first;
  }
  if (dptr != nullptr) *dptr = reinterpret_cast<void*>(placed->second);
  if (bytes != nullptr) *bytes = size->second;
  return cudaSuccess;
}

ACCEPTING_DEVICE_EXPORT cudaError_t cudaLibraryUnload(cudaLibrary_t library) {
  if (!device().keep) {
    using Unload = cudaError_t (*)(cudaLibrary_t);
    const auto next = next_definition<Unload>("cudaLibraryUnload");
    return next != nullptr ? next(library) : cudaErrorNotSupported;
  }
  if (library == nullptr) return cudaErrorInvalidValue;
  std::lock_guard lock(libraries_mutex());
  delete reinterpret_cast<Library*>(library);  // its managed region stays: no free of it here
  return cudaSuccess;
}

}  // extern "C"
