// The simulated CUDA device (libgvirtus-simulated-cuda.so): a test double for machines without a
// GPU, which the cuda-simulated backend plugin opens in place of NVIDIA's libcuda.so.1. It exports
// the driver functions the cuda plugin calls, by their ABI names, and serves them from host
// memory: allocations are host allocations, copies and memsets are memcpy and memset, streams and
// events complete at once, modules are parsed for their kernels and parameter layouts (by
// gvirtus's own fatbinary, cubin and PTX parsers), and launches are recorded, never executed.
// It computes nothing, says "simulated" in everything it writes, and is never GPU evidence.
//
// This header is its shared state: the devices cuInit found (GVIRTUS_SIMULATED_DEVICES of them,
// as CUDA_VISIBLE_DEVICES selects: visible_devices.h), a primary context per device, every live
// handle. The devices share one host-memory space and one set of handles (it is a test double):
// what tells them apart is their identity, their contexts and their pools, and which device made
// each object (what a reset of its primary context frees). Every
// export runs its body through guarded(), under one lock, and returns a CUresult; no exception
// leaves the library.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/address_ranges.h"
#include "common/error.h"
#include "device_memory.h"
#include "elf_symbols.h"
#include "fatbin.h"
#include "graph_model.h"
#include "identity.h"
#include "kernel_launch.h"
#include "visible_devices.h"

namespace gvirtus::simulated {

struct Module {
  std::vector<fatbin::KernelLayout> kernels;
  std::map<std::string, size_t, std::less<>> kernel_index;  // name -> place in kernels
  // name -> size and initial value, from the cubins' symbol tables or the PTX's declarations
  std::map<std::string, fatbin::Variable> variables;
  std::map<std::string, uintptr_t> placed;  // the variables asked for, placed in memory
  // Its managed variables (cuLibraryGetManaged), packed side by side in managed regions of the
  // module's own, as a driver packs them: several share a page.
  std::map<std::string, uintptr_t> placed_managed;
  std::vector<uintptr_t> managed_regions;
  size_t managed_used = 0;  // in the last region
  bool library = false;     // loaded as a CUlibrary: context-independent, it outlives a reset
};

struct Function {
  CUmodule module;
  const fatbin::KernelLayout* layout;  // in the module's kernels
  std::map<int, int> attributes;       // set by cuFuncSetAttribute
  // The function's kernel (CUkernel) is this member's address: a handle of its own, as the
  // driver's kernels and functions are distinct objects.
  char kernel_tag = 0;
};

// Device memory (device_memory.h), given back where it came from.
struct FreeMemory {
  void operator()(std::byte* memory) const { free_device_memory(memory); }
};
using HostBuffer = std::unique_ptr<std::byte[], FreeMemory>;

struct Event {
  bool recorded = false;
  // Recorded on a capturing stream: the capture (its origin stream and id) and the nodes the
  // stream's next work depended on then. A stream that waits for it joins the capture, its next
  // work depending on those nodes (fork and join, as natively).
  struct InCapture {
    CUstream origin = nullptr;
    uint64_t id = 0;  // Capture::id
    std::vector<Node*> nodes;
  };
  std::optional<InCapture> in_capture;
};

// Virtual memory management (virtual_memory.cpp): a physical allocation is a memory file; a
// reservation an inaccessible mapping of the process's own address space, into which physical
// allocations are mapped shared, so that every mapping of one allocation shows the same bytes.
struct Physical {
  int fd = -1;
  uint64_t bytes = 0;
  CUmemAllocationProp prop{};  // as created
  // The references to it (cuMemCreate's and each cuMemRetainAllocationHandle's, each given back
  // by a cuMemRelease) and its mappings: it goes when neither is left.
  uint64_t references = 1;
  uint64_t mappings = 0;
  Physical() = default;
  Physical(int f, uint64_t b) : fd(f), bytes(b) {}
  Physical(const Physical&) = delete;
  Physical& operator=(const Physical&) = delete;
  ~Physical();
};

struct Mapping {
  uint64_t bytes;
  bool accessible;                      // cuMemSetAccess gave the device access
  CUmemGenericAllocationHandle handle;  // the physical allocation mapped
};

// A CUDA array (arrays.cpp): its descriptor and its bytes, in row order, each element
// Format x NumChannels.
struct Array {
  CUDA_ARRAY3D_DESCRIPTOR descriptor;
  std::vector<std::byte> bytes;
  CUmipmappedArray owner = nullptr;  // the mipmapped array whose level it is, if any
};

// A mipmapped array (arrays.cpp): its levels, arrays made with it and destroyed with it.
struct Mipmapped {
  std::vector<CUarray> levels;
};

// A texture object (textures.cpp): its descriptors, as given.
struct TextureObject {
  CUDA_RESOURCE_DESC resource;
  CUDA_TEXTURE_DESC texture;
  CUDA_RESOURCE_VIEW_DESC view;
  bool has_view;
};

// A JIT link (links.cpp): its inputs, and the image cuLinkComplete made of them.
struct Link {
  std::vector<std::string> ptx;                // PTX inputs' texts, without their NULs
  std::vector<std::vector<std::byte>> images;  // cubin and fatbinary inputs
  std::vector<std::byte> linked;
  // The info log cuLinkCreate was given (its buffer and its size option, which the driver
  // overwrites with the bytes filled after each call), written as a real linker writes it.
  char* info_log = nullptr;
  size_t info_capacity = 0;
  void** info_filled = nullptr;
  std::string info;
};

// A device's primary context: one object per device, retained and released.
struct Primary {
  int references = 0;
  unsigned flags = 0;
  bool active = false;
};

// A context of one's own (cuCtxCreate): a handle of its own over its device.
struct OwnContext {
  CUdevice device;
  unsigned flags;
  unsigned long long id;  // cuCtxGetId's
};

struct State {
  std::mutex mutex;
  bool initialized = false;
  // The visible devices' physical indexes, by ordinal, and each one's primary context and current
  // memory pool (null: its own), by ordinal; set by cuInit.
  std::vector<int> devices;
  std::vector<Primary> primaries;
  std::vector<CUmemoryPool> current_pools;
  std::map<uintptr_t, HostBuffer> allocations;  // by address
  std::map<uintptr_t, uint64_t> allocation_bytes;
  uint64_t allocated = 0;             // what cuMemAlloc* took (modules' variables not)
  std::set<uintptr_t> module_memory;  // allocations that are modules' variables
  std::set<uintptr_t> ipc_opened;     // allocations standing for other processes' (ipc.cpp)
  std::map<CUmodule, std::unique_ptr<Module>> modules;
  std::map<CUfunction, std::unique_ptr<Function>> functions;
  // The same functions by kernel layout and by kernel handle (Function::kernel_tag): a library
  // such as cuDNN loads modules of thousands of kernels and asks for each.
  std::map<const fatbin::KernelLayout*, CUfunction> function_by_layout;
  std::map<const void*, CUfunction> function_by_kernel;
  std::map<CUstream, uint32_t> streams;  // a stream's number, as launch records name it
  // A stream's flags and priority as created (the priority clamped into the device's range).
  std::map<CUstream, std::pair<unsigned, int>> stream_properties;
  // Attributes set on streams (CUstreamAttrID -> value), by stream.
  std::map<CUstream, std::map<int, CUstreamAttrValue>> stream_attributes;
  uint32_t next_stream = 1;
  std::map<CUevent, std::unique_ptr<Event>> events;
  std::map<int, size_t> limits;
  std::map<uintptr_t, uint64_t> reservations;              // start -> bytes
  std::map<uintptr_t, Mapping> mappings;                   // start -> mapping
  std::map<uint64_t, std::unique_ptr<Physical>> physical;  // CUmemGenericAllocationHandle ->
  uint64_t next_physical = 1;
  // Stream capture (graphs.cpp): what each capturing stream builds so far.
  std::map<CUstream, Capture> capturing;
  // Captures an operation they cannot hold invalidated, as the driver invalidates them: their
  // cuStreamEndCapture gives no graph (CUDA_ERROR_STREAM_CAPTURE_INVALIDATED).
  std::set<CUstream> invalidated_captures;
  uint64_t next_capture_id = 1;
  // Graphs made (cuGraphCreate, captures, clones) and executable graphs, by handle; every live
  // graph and node, those child graph nodes embed and executables' copies too (graph_model.h).
  std::map<CUgraph, std::unique_ptr<Graph>> graphs;
  std::map<CUgraphExec, std::unique_ptr<Executable>> executables;
  std::set<const Graph*> live_graphs;
  std::set<const Node*> live_nodes;
  uint64_t next_graph_object = 1;  // ids of graphs and nodes
  // Conditional handles (graph_conditionals.cpp): the graph each was made for, its default
  // value and its flags (no kernel runs here to set a value).
  struct ConditionalHandle {
    CUgraph graph;
    unsigned value;
    unsigned flags;
  };
  std::map<CUgraphConditionalHandle, ConditionalHandle> conditional_handles;
  CUgraphConditionalHandle next_conditional_handle = 1;
  // Memory of graph allocation nodes (graph_memory_nodes.cpp), by address: the graph whose node
  // allocated it (its id; 0 once that graph is gone after an instantiation), which frees it when
  // destroyed unless cuMemFree did or an executable graph was instantiated from it, and whether a
  // free node (of any graph) frees it.
  struct GraphAllocation {
    uint64_t graph_id;
    bool freed_by_node;
  };
  std::map<uintptr_t, GraphAllocation> graph_allocations;
  // The most graph memory the device has held (cuDeviceGetGraphMemAttribute's high marks; reset
  // by cuDeviceSetGraphMemAttribute).
  uint64_t graph_memory_high = 0;
  // The device pool's settable attributes (CUmemPool_attribute -> value).
  // Every pool's settable attributes (CUmemPool_attribute -> value), by pool.
  std::map<CUmemoryPool, std::map<int, uint64_t>> pool_attributes;
  // Pools of one's own (cuMemPoolCreate).
  std::set<CUmemoryPool> own_pools;
  // Of those, the ones that may be exported as a POSIX descriptor, and the ones imported
  // (shareable.cpp), into which pointers may be imported.
  std::set<CUmemoryPool> exportable_pools;
  std::set<CUmemoryPool> imported_pools;
  // Contexts of one's own (cuCtxCreate): distinct handles sharing the devices' memory.
  std::map<CUcontext, OwnContext> contexts;
  // Green contexts (green_contexts.cpp): each resource descriptor's device and SM count, each
  // green context's (with the context made for it, one of `contexts`, and its id), and the green
  // context of each stream made in one.
  struct SmShare {
    CUdevice device;
    unsigned sms;
  };
  struct GreenContext {
    SmShare share;
    CUcontext context;
    unsigned long long id;
  };
  std::map<CUdevResourceDesc, SmShare> resource_descriptors;
  std::map<CUgreenCtx, GreenContext> green_contexts;
  std::map<CUstream, CUgreenCtx> green_streams;
  unsigned long long next_context_id = kMaxDevices + 1;  // ids 1..kMaxDevices: primary contexts
  // The context that made each allocation (by address), module, stream, event and array (by
  // handle), so that a reset of a device's primary context frees what that context made and
  // nothing else, not what contexts of one's own made (own() and disown()).
  std::map<const void*, CUcontext> owners;
  // Peer access enabled (cuCtxEnablePeerAccess): (context, peer context) pairs.
  std::set<std::pair<CUcontext, CUcontext>> peer_access;
  int cache_config = CU_FUNC_CACHE_PREFER_NONE;
  std::map<CUlinkState, std::unique_ptr<Link>> links;
  std::map<CUarray, std::unique_ptr<Array>> arrays;
  std::map<CUmipmappedArray, std::unique_ptr<Mipmapped>> mipmapped;
  // Texture and surface objects, numbered apart from 1 each, as the driver's may be.
  std::map<CUtexObject, TextureObject> textures;
  std::map<CUsurfObject, CUDA_RESOURCE_DESC> surfaces;
  uint64_t next_texture = 1;
  uint64_t next_surface = 1;
  // Host memory registered with cuMemHostRegister (start -> bytes): device memory too, at the
  // same address (unified addressing).
  AddressRanges registered_host;
  // Managed memory (managed_memory.cpp, cuMemAllocManaged): page-aligned mappings of its own,
  // device memory at their addresses, as registered host memory is.
  AddressRanges managed;
  // The hints each managed region (by start) was given, as cuMemRangeGetAttribute reports them:
  // read mostly, the preferred location's device and the last prefetch's (CU_DEVICE_CPU for the
  // host, CU_DEVICE_INVALID for none).
  struct ManagedHints {
    bool read_mostly = false;
    int preferred = CU_DEVICE_INVALID;
    int last_prefetch = CU_DEVICE_INVALID;
  };
  std::map<uintptr_t, ManagedHints> managed_hints;
};

// CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED for work the simulated device cannot capture (it
// captures kernel launches, host functions, linear device copies and linear memsets only) on a
// capturing stream, else CUDA_SUCCESS. A GPU's driver would
// capture that work, so the capture goes on.
CUresult not_captured(const State& s, CUstream stream);

// A stream waited for or asked whether it is done (cuStreamSynchronize, cuStreamQuery): on a
// capturing stream CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, and the capture is invalidated, as the
// driver invalidates it; else CUDA_SUCCESS.
CUresult waited_for(State& s, CUstream stream);

// A device's own memory pool, by ordinal: a fixed address of ours.
CUmemoryPool device_pool(CUdevice dev);

// Whether `pool` is a visible device's pool or one of one's own not destroyed.
bool known_pool(const State& s, CUmemoryPool pool);

// Whether `dev` is a visible device's ordinal.
bool valid_device(const State& s, CUdevice dev);

// The state, locked by the caller (guarded() does).
State& state();

// A device's primary context's handle, by ordinal: a fixed address of ours.
CUcontext primary_context(CUdevice dev);

// The calling thread's context owns what it makes: own() records it for `object` (an allocation's
// address or a handle), disown() forgets it when the object goes, and owning_context() says it
// (device 0's primary context for what has none).
void own(State& s, const void* object);
inline const void* memory_key(uintptr_t address) {
  return reinterpret_cast<const void*>(address);
}
void disown(State& s, const void* object);
CUcontext owning_context(const State& s, const void* object);

// Whether `ctx` is a visible device's primary context or one created and not destroyed.
bool known_context(const State& s, CUcontext ctx);

// The device of a known context, else -1.
CUdevice context_device(const State& s, CUcontext ctx);

// The stream priorities of every simulated device: cuCtxGetStreamPriorityRange's answer.
inline constexpr int kLeastStreamPriority = 0;
inline constexpr int kGreatestStreamPriority = -5;

// The calling thread's current context (cuCtxSetCurrent; the stub keeps each client thread's stack
// and the backend runs each client thread's calls on a thread of its own), null if none.
CUcontext& current_context();

// CUDA_ERROR_INVALID_CONTEXT where the calling thread has no current context, else CUDA_SUCCESS:
// what a driver answers to calls that work in the current context (an allocation, a memory
// query, a stream's creation) on a thread that never made one current. The backend runs a
// client thread's calls on several of its threads over a session's life, so the simulated device
// checks that the context went along (backend/services/client_threads.h).
CUresult needs_context();

// The current context, or device 0's primary context for a thread that has none (as the one
// device's was before there were several: the backend asks for the device of calls made before
// any cuCtxSetCurrent).
CUcontext effective_context();

// Writes a failure into the device's error log (logs.cpp), as a driver logs its failed calls,
// and hands it to the registered log callbacks, on the calling thread. Never throws.
void log_failure(CUresult result) noexcept;

// With GVIRTUS_SIMULATED_MEMORY_BUDGET (bytes) in the backend's environment: when `allocated`
// exceeds it, every registered device notification callback (cuDeviceRegisterAsyncNotification)
// is told by how much, on a thread of its own, as a driver sends CU_ASYNC_NOTIFICATION_TYPE_
// OVER_BUDGET. Callable under the state's lock. Never throws.
void notify_if_over_budget(uint64_t allocated) noexcept;

// Runs `body` (returning CUresult) under the state's lock, after checking that cuInit was called
// (unless `needs_init` is false); a gvirtus::Error from a parser is CUDA_ERROR_INVALID_IMAGE, any
// other exception CUDA_ERROR_UNKNOWN. A failure is logged (log_failure) once the lock is released.
template <typename Body>
CUresult guarded(Body&& body, bool needs_init = true) noexcept {
  CUresult result = CUDA_SUCCESS;
  try {
    std::lock_guard lock(state().mutex);
    result = needs_init && !state().initialized ? CUDA_ERROR_NOT_INITIALIZED : body(state());
  } catch (const Error&) {
    result = CUDA_ERROR_INVALID_IMAGE;
  } catch (...) {
    result = CUDA_ERROR_UNKNOWN;
  }
  if (result != CUDA_SUCCESS && result != CUDA_ERROR_NOT_READY) log_failure(result);
  return result;
}

// Whether [address, address + bytes) lies in one live allocation; where it starts, if so.
std::byte* device_range(State& s, CUdeviceptr address, uint64_t bytes);

// cuMemAlloc's and cuMemFree's work, under the caller's lock (graph allocation nodes do it too):
// allocate_memory takes `bytes` of the device's (CUDA_ERROR_OUT_OF_MEMORY beyond what it has
// left), free_memory gives an allocation back (CUDA_ERROR_INVALID_VALUE for what is none).
CUresult allocate_memory(State& s, size_t bytes, CUdeviceptr* out);
CUresult free_memory(State& s, CUdeviceptr address);
// Gives back the managed region starting at `address` (managed_memory.cpp); false when none does.
bool free_managed(State& s, CUdeviceptr address);
// Places a managed variable of `bytes` for `module` (managed_memory.cpp): its address, 0 when out
// of memory. Its regions go with free_managed.
uintptr_t place_managed_variable(State& s, Module& module, uint64_t bytes);
// One stream memory operation, done on `stream` at once (memory.cpp): a batch's, or a batch
// memory operation node's at its graph's launch.
CUresult mem_op(State& s, CUstream stream, const CUstreamBatchMemOpParams& operation);
// cuGraphAddNode_v2's conditional kind (graph_conditionals.cpp), with the state locked.
CUresult add_conditional_node(State& s, CUgraphNode* out, CUgraph graph,
                              const CUgraphNode* dependencies, size_t count,
                              CUDA_CONDITIONAL_NODE_PARAMS& params);
// The bodies of a conditional node a launch runs, by the handle's value (graph_conditionals.cpp).
std::vector<const Graph*> conditional_bodies_to_run(State& s, const ConditionalNode& node);
// cuLibraryGetManaged's answer for the module `hmod` (modules.cpp), with the state locked.
CUresult managed_variable(State& s, CUmodule hmod, const char* name, CUdeviceptr* dptr,
                          size_t* bytes);

// cuMemcpy3D's copy of a box (arrays.cpp), under the caller's lock, for graphs' memcpy nodes:
// check_box checks both sides as the copy does, copy_box checks them and copies.
CUresult check_box(State& s, const CUDA_MEMCPY3D& copy);
CUresult copy_box(State& s, const CUDA_MEMCPY3D& copy);

// The one function handle of a module's kernel, made the first time it is asked for.
CUfunction function_handle(State& s, CUmodule module, const fatbin::KernelLayout& kernel);

// Forgets the functions `doomed(function)` says go, with their indexes.
template <typename Doomed>
void forget_functions_if(State& s, Doomed doomed) {
  for (auto it = s.functions.begin(); it != s.functions.end();) {
    if (!doomed(*it->second)) {
      ++it;
      continue;
    }
    s.function_by_layout.erase(it->second->layout);
    s.function_by_kernel.erase(&it->second->kernel_tag);
    it = s.functions.erase(it);
  }
}

// The function a kernel handle names (kernels and functions both launch), or null.
Function* function_of(State& s, CUfunction handle);
CUkernel kernel_of(CUfunction function);

// Whether a resource descriptor names live objects and memory of the device: an array (for a
// surface, one made with CUDA_ARRAY3D_SURFACE_LDST), a mipmapped array, or device memory
// (arrays.cpp).
CUresult check_resource(State& s, const CUDA_RESOURCE_DESC& resource, bool surface);

// A stream is null, one of the predefined ones, or a live one of ours.
bool known_stream(const State& s, CUstream stream);

// A new stream of ours (streams_events.cpp), owned by the current context's device; flags beyond
// CU_STREAM_NON_BLOCKING are CUDA_ERROR_INVALID_VALUE.
CUresult create_stream(State& s, CUstream* stream, unsigned flags, int priority = 0);

}  // namespace gvirtus::simulated

#define GVIRTUS_SIMULATED_EXPORT extern "C" __attribute__((visibility("default")))
