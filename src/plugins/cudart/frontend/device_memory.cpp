// Device allocations (the table's "alloc" and "free" rows), recorded (address_ranges.h) with the
// device they live on, so that cudaMemcpyDefault and cudaPointerGetAttributes know device pointers
// from host ones, and cudaDeviceReset forgets what it frees.
#include <atomic>

#include "plugins/cudart/frontend/address_ranges.h"
#include "plugins/cudart/frontend/stub_call.h"

namespace cr = gvirtus::cudart;

namespace {

// How many allocations were noted: the allocation clock (stub_call.h).
std::atomic<uint64_t> allocations_noted{0};

// The calling thread's current device (answered in the stub once known), -1 if it fails.
int current_device() {
  int device = -1;
  return cudaGetDevice(&device) == cudaSuccess ? device : -1;
}

}  // namespace

// The table's "alloc" and "free" rows, after they succeeded (allocation_hooks in
// cudart_descriptor.json; the generated stub calls these).
void cr::note_allocated(Fn fn, const void* address, uint64_t bytes) {
  if (address == nullptr) return;
  // A stream-ordered allocation lives on the stream's device, which may not be the current one,
  // another application's memory opened by IPC or imported from its pool is that application's
  // allocation, and a graph's
  // allocation node's memory is mapped only while the graph runs, and managed memory is the
  // runtime's to describe (its type, its host pointer): their attributes are asked remotely.
  const bool asked = fn == Fn::cudaMallocAsync || fn == Fn::cudaMallocFromPoolAsync ||
                     fn == Fn::cudaIpcOpenMemHandle || fn == Fn::cudaMemPoolImportPointer ||
                     fn == Fn::cudaGraphAddMemAllocNode || fn == Fn::cudaMallocManaged;
  cr::device_allocations().add(address, bytes, asked ? 0 : cr::kPlainDeviceMemory, current_device(),
                               ++allocations_noted);
}

void cr::note_freed(Fn, const void* address, uint64_t noted_by) {
  if (address != nullptr) cr::device_allocations().remove_noted_by(address, noted_by);
}

uint64_t cr::allocation_clock() {
  return allocations_noted.load();
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaDeviceReset() {
  const int device = current_device();
  const cudaError_t rc = cr::remote::cudaDeviceReset();
  // Every allocation of the device is gone, whatever the result says: forget them all, so that a
  // stale record never makes a later copy of that address look like a valid device copy.
  cr::device_allocations().remove_device(device);
  return rc;
}
