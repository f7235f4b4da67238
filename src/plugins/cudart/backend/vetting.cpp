#include "plugins/cudart/backend/vetting.h"

#include <map>
#include <mutex>

#include "backend/services/staging_blocks.h"
#include "plugins/cudart/backend/shared_host_memory.h"

namespace gvirtus::cudart {
namespace {

cudaError_t refuse_pointer(const char* what, const void* address) {
  return static_cast<cudaError_t>(gvirtus::services::refuse(
      cudaErrorInvalidValue, "cudart", what, address, "not device memory of this session"));
}

struct GraphAllocation {
  uint64_t bytes;
  cudaGraph_t graph;
};

std::mutex& graph_allocations_mutex = *new std::mutex;
auto& graph_allocations = *new std::map<uintptr_t, GraphAllocation>;  // address -> allocation

bool in_graph_allocation(const void* address) {
  const auto at = reinterpret_cast<uintptr_t>(address);
  std::lock_guard lock(graph_allocations_mutex);
  auto it = graph_allocations.upper_bound(at);
  if (it == graph_allocations.begin()) return false;
  --it;
  return at - it->first < it->second.bytes;
}

// Whether the runtime's description of the memory at one address lets the client name it as
// device memory.
// cudaSuccess when it does, the runtime's own answer when it has one (no driver, a sticky
// error), cudaErrorInvalidValue when the memory is not the client's to name, unlogged.
cudaError_t describe_address(const void* address) {
  if (in_shared_memory(address)) return cudaSuccess;  // the client's own shared pages
  if (in_graph_allocation(address)) return cudaSuccess;
  // A staging block: page-locked memory of the backend's, its device range the session's.
  if (services::in_staging_block(reinterpret_cast<uintptr_t>(address))) return cudaSuccess;
  cudaPointerAttributes attributes{};
  const cudaError_t known = ::cudaPointerGetAttributes(&attributes, address);
  if (known != cudaSuccess) return known;
  const bool device_side =
      attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged;
  return device_side ? cudaSuccess : cudaErrorInvalidValue;
}

cudaError_t vet_one_address(const void* address) {
  const cudaError_t described = describe_address(address);
  return described != cudaErrorInvalidValue ? described : refuse_pointer("device pointer", address);
}

}  // namespace

void note_graph_allocation(cudaGraph_t graph, const void* address, uint64_t bytes) {
  if (address == nullptr || bytes == 0) return;
  std::lock_guard lock(graph_allocations_mutex);
  graph_allocations[reinterpret_cast<uintptr_t>(address)] = GraphAllocation{bytes, graph};
}

void forget_graph_allocations(cudaGraph_t graph) {
  std::lock_guard lock(graph_allocations_mutex);
  std::erase_if(graph_allocations, [&](const auto& entry) { return entry.second.graph == graph; });
}

int current_device() {
  int device = -1;
  if (::cudaGetDevice(&device) != cudaSuccess) device = -1;
  return device;
}

cudaError_t vet_device_pointer(const void* ptr, uint64_t bytes) {
  if (ptr == nullptr) return cudaSuccess;
  const auto first = reinterpret_cast<uintptr_t>(ptr);
  if (bytes == 0) {
    const cudaError_t described = describe_address(ptr);
    if (described != cudaErrorInvalidValue) return described;
    // Nothing of an allocation's end is touched by an empty range there (a copy of the last 0
    // elements: NVIDIA's mergeSort sample makes one).
    if (first > 0 && describe_address(reinterpret_cast<const void*>(first - 1)) == cudaSuccess) {
      return cudaSuccess;
    }
    return refuse_pointer("device pointer", ptr);
  }
  if (bytes > 1 && first > UINTPTR_MAX - (bytes - 1)) {
    return refuse_pointer("device range wrapping around at", ptr);
  }
  const cudaError_t start = vet_one_address(ptr);
  if (start != cudaSuccess || bytes <= 1) return start;
  return vet_one_address(reinterpret_cast<const void*>(first + (bytes - 1)));
}

cudaError_t vet_launch_attribute(int32_t id, const cudaLaunchAttributeValue& value) {
  if (id == cudaLaunchAttributeProgrammaticEvent) return vet(value.programmaticEvent.event);
  if (id == cudaLaunchAttributeLaunchCompletionEvent) return vet(value.launchCompletionEvent.event);
  return cudaSuccess;
}

cudaError_t vet_copy_stream(cudaStream_t stream, bool with_stream, bool our_buffer) {
  if (!with_stream) return cudaSuccess;
  if (const cudaError_t vetted = vet(stream); vetted != cudaSuccess || !our_buffer) return vetted;
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (const cudaError_t r = ::cudaStreamIsCapturing(stream, &status); r != cudaSuccess) return r;
  return status == cudaStreamCaptureStatusNone ? cudaSuccess : cudaErrorStreamCaptureUnsupported;
}

}  // namespace gvirtus::cudart
