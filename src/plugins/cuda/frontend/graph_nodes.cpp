// Graphs built node by node in the client libcuda.so.1 (rows 211-238 of cuda_calls.txt; wire:
// common/graph_node_wire.h). Nodes live in the backend's process, as graphs do; the stub hands
// out the driver's node handles, which the backend vets as the session's. Every call waits: each
// returns a node, a value, or an immediate error of the driver's.
//
// Kernel nodes carry their arguments packed as a launch's (kernel_arguments.h).
// cuGraphKernelNodeGetParams gives the program an argument array of the stub's: the copies stay
// valid until the node's parameters are set again, the node is destroyed or its graph is (as the
// driver's own), a child graph's nodes' copies until the process ends.
//
// Copy nodes run each time their graph does, on the backend's GPU: a side in the client's own
// memory (pageable memory, or page-locked memory over a transport without shared memory) is
// staged through a block on the backend by a host function of the stub's (host_staging.h); a
// copy with both sides here is that host function alone, copying here. Page-locked memory in
// shm's arena is the GPU's to reach and travels as its device pointer.
//
// An allocation node's address is recorded as device memory (memory_ranges.h) until its graph is
// destroyed. A host node's function runs in this process, on the session's callback thread, each
// time the graph reaches the node on the backend (host_functions.h): it travels as a token.
#include <cuda.h>

#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "common/call_marshal.h"
#include "common/conditional_bodies.h"
#include "common/error.h"
#include "common/log.h"
#include "common/wire_record.h"
#include "cuda_remote_calls.h"
#include "frontend/route_scope.h"
#include "plugins/cuda/common/graph_node_wire.h"
#include "plugins/cuda/common/mem_op_records.h"
#include "plugins/cuda/frontend/graph_nodes.h"
#include "plugins/cuda/frontend/host_functions.h"
#include "plugins/cuda/frontend/host_staging.h"
#include "plugins/cuda/frontend/kernel_arguments.h"
#include "plugins/cuda/frontend/memory_ranges.h"
#include "plugins/cuda/frontend/pool_routes.h"

namespace gvirtus::cuda {
namespace {

// An argument array handed out by cuGraphKernelNodeGetParams.
struct ArgumentsCopy {
  CUgraph graph;
  std::vector<std::byte> bytes;  // the packed arguments (new[]'s alignment suits any of them)
  std::vector<void*> pointers;   // one per parameter, into bytes
};

// The access descriptors cuGraphMemAllocNodeGetParams handed out.
struct AccessCopy {
  CUgraph graph;
  std::vector<CUmemAccessDesc> descriptors;
};

// The operations cuGraphBatchMemOpNodeGetParams handed out.
struct MemOpsCopy {
  CUgraph graph;
  std::vector<CUstreamBatchMemOpParams> operations;
};

// What the getters handed out for each node, kept until its parameters change, it is destroyed
// or its graph is (never destroyed: exit handlers may still ask).
template <typename Copy>
using HandedOut = std::unordered_map<CUgraphNode, std::vector<std::unique_ptr<Copy>>>;
std::mutex& copies_mutex = *new std::mutex;
auto& argument_copies = *new HandedOut<ArgumentsCopy>;
auto& access_copies = *new HandedOut<AccessCopy>;
auto& mem_ops_copies = *new HandedOut<MemOpsCopy>;

// With copies_mutex held: forgets what was handed out for the nodes of `graph`.
template <typename Copy>
void forget_graph_of(HandedOut<Copy>& copies, CUgraph graph) {
  std::erase_if(copies, [&](const auto& entry) {
    return !entry.second.empty() && entry.second.front()->graph == graph;
  });
}
auto& graph_allocations = *new std::unordered_map<CUgraph, std::vector<CUdeviceptr>>;
// Conditional nodes' bodies (never destroyed: exit handlers may still ask).
auto& conditional_bodies = *new ConditionalBodies<CUgraphNode, CUgraph>;

void put_nodes(WireWriter& w, const CUgraphNode* nodes, size_t n) {
  for (size_t i = 0; i < n; ++i) marshal::put_value(w, nodes[i]);
}

// An "add" call: the head, the kind's parameters (`kind`), the new node; `extra` reads what a
// kind's reply adds after it.
CUresult add_node(
    Fn fn, CUgraphNode* node, CUgraph graph, const CUgraphNode* dependencies, size_t n,
    stub::Encoder kind, stub::Decoder extra = [](WireReader&) {}) {
  if (node == nullptr || graph == nullptr || (dependencies == nullptr && n > 0) ||
      n > kMaxNodeEdges) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const stub::RouteScope route(pool_backend_of_handle("graph", graph));
  CUgraphNode added = nullptr;
  const CUresult result = remote_sync(
      fn,
      [&](WireWriter& w) {
        marshal::put_value(w, graph);
        w.put<uint32_t>(static_cast<uint32_t>(n));
        put_nodes(w, dependencies, n);
        kind(w);
      },
      [&](WireReader& r) {
        added = marshal::get_value<CUgraphNode>(r);
        extra(r);
      });
  if (result == CUDA_SUCCESS) *node = added;
  return result;
}

// A call that names a node (an executable graph first for the exec forms) and replies with its
// result only.
CUresult set_node(Fn fn, CUgraphExec executable, bool exec_form, CUgraphNode node,
                  stub::Encoder params) {
  if (node == nullptr || (exec_form && executable == nullptr)) return CUDA_ERROR_INVALID_VALUE;
  return remote_sync(
      fn,
      [&](WireWriter& w) {
        if (exec_form) marshal::put_value(w, executable);
        marshal::put_value(w, node);
        params(w);
      },
      [](WireReader&) {});
}

// A call that names a node and, on success, replies with what `read` reads.
CUresult get_node(Fn fn, CUgraphNode node, stub::Decoder read) {
  if (node == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return remote_sync(
      fn, [&](WireWriter& w) { marshal::put_value(w, node); },
      [&](WireReader& r) {
        if (r.remaining() != 0) read(r);
      });
}

// The argument copies of a node whose parameters changed are the driver's no longer.
void drop_copies(CUgraphNode node) {
  std::lock_guard lock(copies_mutex);
  argument_copies.erase(node);
  access_copies.erase(node);
  mem_ops_copies.erase(node);
  conditional_bodies.node_gone(node);
}

// A batch memory operation node's parameters (graph_node_wire.h); false for an operation the
// driver does not define, or a batch over kMaxBatchMemOps.
bool encode_mem_ops(const CUDA_BATCH_MEM_OP_NODE_PARAMS& p, std::vector<MemOpRecord>& records) {
  if (p.count > kMaxBatchMemOps || (p.count > 0 && p.paramArray == nullptr)) return false;
  records.resize(p.count);
  for (unsigned i = 0; i < p.count; ++i) {
    if (!mem_op_record(p.paramArray[i], true, records[i])) return false;
  }
  return true;
}

void put_mem_ops(WireWriter& w, const CUDA_BATCH_MEM_OP_NODE_PARAMS& p,
                 const std::vector<MemOpRecord>& records) {
  marshal::put_value(w, p.ctx);
  w.put<uint32_t>(p.flags);
  w.put<uint32_t>(static_cast<uint32_t>(records.size()));
  for (const MemOpRecord& r : records) put_record(w, r);
}

// A kernel node's parameters: the record, then the packed arguments.
CUresult encode_kernel(const CUDA_KERNEL_NODE_PARAMS& p, KernelNodeRecord& record,
                       std::vector<std::byte>& packed, const void*& buffer, size_t& bytes) {
  CUfunction code = p.func != nullptr ? p.func : reinterpret_cast<CUfunction>(p.kern);
  if (code == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (p.kernelParams != nullptr && p.extra != nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (const CUresult r = arguments_buffer(code, p.kernelParams, p.extra, packed, buffer, bytes);
      r != CUDA_SUCCESS) {
    return r;
  }
  record = KernelNodeRecord{p.func,     p.kern,      p.ctx,       p.gridDimX,  p.gridDimY,
                            p.gridDimZ, p.blockDimX, p.blockDimY, p.blockDimZ, p.sharedMemBytes};
  return CUDA_SUCCESS;
}

// Encodes a kernel node's parameters, or says why it cannot.
struct KernelEncoding {
  KernelNodeRecord record{};
  std::vector<std::byte> packed;
  const void* buffer = nullptr;
  size_t bytes = 0;
  CUresult status = CUDA_SUCCESS;

  explicit KernelEncoding(const CUDA_KERNEL_NODE_PARAMS* p)
      : status(p == nullptr ? CUDA_ERROR_INVALID_VALUE
                            : encode_kernel(*p, record, packed, buffer, bytes)) {}
  void operator()(WireWriter& w) const {
    put_record(w, record);
    w.put_blob(buffer, bytes);
  }
};

// One side of a copy node: device memory (or page-locked memory in the shared arena, by its
// device pointer) or an array. False when the side is the client's own memory.
bool put_copy_side(uint32_t type, const void* host, CUdeviceptr device, CUarray array,
                   uint32_t& kind, CUdeviceptr& device_out, CUarray& array_out) {
  switch (type) {
    case CU_MEMORYTYPE_ARRAY:
      kind = static_cast<uint32_t>(BoxSide::kArray), array_out = array;
      return true;
    case CU_MEMORYTYPE_DEVICE:
      kind = static_cast<uint32_t>(BoxSide::kDevice), device_out = device;
      return true;
    case CU_MEMORYTYPE_UNIFIED:
      // Device memory the stub knows, or an address not mapped here (device memory another plugin
      // of the session allocated, in runtime mode): the backend vets it as the session's, and the
      // driver gets it as unified, as the program named it (BoxSide::kUnified).
      if (device_ranges().find(as_pointer(device)).has_value() ||
          !host_mapped(as_pointer(device), 1)) {
        kind = static_cast<uint32_t>(BoxSide::kUnified), device_out = device;
        return true;
      }
      host = as_pointer(device);
      break;
    case CU_MEMORYTYPE_HOST:
      break;
    default:
      return false;
  }
  const CUdeviceptr shared = shared_device_pointer(host);
  if (shared == 0) return false;
  kind = static_cast<uint32_t>(BoxSide::kDevice), device_out = shared;
  return true;
}

// A copy node's parameters as the wire carries them; CUDA_ERROR_NOT_SUPPORTED for a side in the
// client's own memory.
CUresult copy_box(const CUDA_MEMCPY3D* c, ArrayBoxRequest& r) {
  if (c == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (c->srcLOD != 0 || c->dstLOD != 0) return CUDA_ERROR_INVALID_VALUE;
  r = ArrayBoxRequest{};
  uint32_t src_type, dst_type;
  std::memcpy(&src_type, &c->srcMemoryType, sizeof src_type);
  std::memcpy(&dst_type, &c->dstMemoryType, sizeof dst_type);
  if (!put_copy_side(src_type, c->srcHost, c->srcDevice, c->srcArray, r.src_side, r.src_device,
                     r.src_array) ||
      !put_copy_side(dst_type, c->dstHost, c->dstDevice, c->dstArray, r.dst_side, r.dst_device,
                     r.dst_array)) {
    if (src_type > CU_MEMORYTYPE_UNIFIED || dst_type > CU_MEMORYTYPE_UNIFIED ||
        src_type < CU_MEMORYTYPE_HOST || dst_type < CU_MEMORYTYPE_HOST) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    static std::once_flag logged;
    std::call_once(logged, [] {
      GVIRTUS_LOG(kWarning) << "libcuda.so.1: a graph's copy node with a side in this process's "
                               "own memory is not supported: the graph runs on the backend's GPU, "
                               "which cannot reach it (page-locked memory in shm's arena can)";
    });
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  r.src_x = c->srcXInBytes, r.src_y = c->srcY, r.src_z = c->srcZ;
  r.src_pitch = c->srcPitch, r.src_height = c->srcHeight;
  r.dst_x = c->dstXInBytes, r.dst_y = c->dstY, r.dst_z = c->dstZ;
  r.dst_pitch = c->dstPitch, r.dst_height = c->dstHeight;
  r.width = c->WidthInBytes, r.height = c->Height, r.depth = c->Depth;
  return CUDA_SUCCESS;
}

// A get whose reply is one value (an event, a graph, an address).
template <typename T>
CUresult get_node_value(Fn fn, CUgraphNode node, T* out) {
  if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return get_node(fn, node, [&](WireReader& r) { *out = marshal::get_value<T>(r); });
}

void put_copy(WireWriter& w, const ArrayBoxRequest& box, CUcontext context) {
  put_record(w, box);
  marshal::put_value(w, context);
}

// A copy node's parameters back from the wire: device memory and arrays (what the stub sent).
void get_copy(WireReader& r, CUDA_MEMCPY3D& c) {
  const auto box = get_record<ArrayBoxRequest>(r);
  (void)marshal::get_value<CUcontext>(r);
  c = CUDA_MEMCPY3D{};
  auto side = [](uint32_t kind, CUdeviceptr device, CUarray array, CUmemorytype& type,
                 CUdeviceptr& device_out, CUarray& array_out) {
    if (kind == static_cast<uint32_t>(BoxSide::kArray)) {
      type = CU_MEMORYTYPE_ARRAY, array_out = array;
    } else if (kind == static_cast<uint32_t>(BoxSide::kDevice)) {
      type = CU_MEMORYTYPE_DEVICE, device_out = device;
    } else if (kind == static_cast<uint32_t>(BoxSide::kUnified)) {
      type = CU_MEMORYTYPE_UNIFIED, device_out = device;
    } else {
      type = CU_MEMORYTYPE_HOST;  // the backend's own memory: nothing this process can name
    }
  };
  side(box.src_side, box.src_device, box.src_array, c.srcMemoryType, c.srcDevice, c.srcArray);
  side(box.dst_side, box.dst_device, box.dst_array, c.dstMemoryType, c.dstDevice, c.dstArray);
  c.srcXInBytes = box.src_x, c.srcY = box.src_y, c.srcZ = box.src_z;
  c.srcPitch = box.src_pitch, c.srcHeight = box.src_height;
  c.dstXInBytes = box.dst_x, c.dstY = box.dst_y, c.dstZ = box.dst_z;
  c.dstPitch = box.dst_pitch, c.dstHeight = box.dst_height;
  c.WidthInBytes = box.width, c.Height = box.height, c.Depth = box.depth;
}

MemsetNodeRecord memset_record(const CUDA_MEMSET_NODE_PARAMS& p, CUcontext context) {
  return MemsetNodeRecord{p.dst, p.pitch, p.value, p.elementSize, p.width, p.height, context};
}

}  // namespace

// The kernel node calls (graph_nodes.h).
CUresult add_kernel_node(CUgraphNode* node, CUgraph graph, const CUgraphNode* dependencies,
                         size_t n, const CUDA_KERNEL_NODE_PARAMS* params) {
  const KernelEncoding encoding(params);
  if (encoding.status != CUDA_SUCCESS) return encoding.status;
  return add_node(Fn::cuGraphAddKernelNode_v2, node, graph, dependencies, n, encoding);
}

CUresult set_kernel_node(CUgraphExec executable, CUgraphNode node,
                         const CUDA_KERNEL_NODE_PARAMS* params) {
  const KernelEncoding encoding(params);
  if (encoding.status != CUDA_SUCCESS) return encoding.status;
  const bool exec_form = executable != nullptr;
  const CUresult result = set_node(
      exec_form ? Fn::cuGraphExecKernelNodeSetParams_v2 : Fn::cuGraphKernelNodeSetParams_v2,
      executable, exec_form, node, encoding);
  if (result == CUDA_SUCCESS && !exec_form) drop_copies(node);
  return result;
}

CUresult get_kernel_node(CUgraphNode node, CUDA_KERNEL_NODE_PARAMS* params) {
  if (params == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return get_node(Fn::cuGraphKernelNodeGetParams_v2, node, [&](WireReader& r) {
    const auto record = get_record<KernelNodeRecord>(r);
    auto copy = std::make_unique<ArgumentsCopy>();
    const auto bytes = r.get_blob(kMaxParamBytes);
    copy->bytes.assign(bytes.begin(), bytes.end());
    copy->graph = marshal::get_value<CUgraph>(r);
    CUfunction code =
        record.function != nullptr ? record.function : reinterpret_cast<CUfunction>(record.kernel);
    std::shared_ptr<const Layout> layout;
    if (kernel_layout(code, layout) != CUDA_SUCCESS || layout->bytes != copy->bytes.size()) {
      raise(ErrorKind::kInvalidInput, "a kernel node's arguments unlike its kernel's layout");
    }
    for (const Param& p : layout->params) copy->pointers.push_back(copy->bytes.data() + p.offset);
    *params = CUDA_KERNEL_NODE_PARAMS{};
    params->func = record.function, params->kern = record.kernel, params->ctx = record.context;
    params->gridDimX = record.grid_x, params->gridDimY = record.grid_y;
    params->gridDimZ = record.grid_z, params->blockDimX = record.block_x;
    params->blockDimY = record.block_y, params->blockDimZ = record.block_z;
    params->sharedMemBytes = record.shared_bytes;
    params->kernelParams = copy->pointers.empty() ? nullptr : copy->pointers.data();
    std::lock_guard lock(copies_mutex);
    argument_copies[node].push_back(std::move(copy));
  });
}

CUresult add_memset_node(CUgraphNode* node, CUgraph graph, const CUgraphNode* dependencies,
                         size_t n, const CUDA_MEMSET_NODE_PARAMS* params, CUcontext context) {
  if (params == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return add_node(Fn::cuGraphAddMemsetNode, node, graph, dependencies, n,
                  [&](WireWriter& w) { put_record(w, memset_record(*params, context)); });
}

CUresult set_memset_node(CUgraphExec executable, CUgraphNode node,
                         const CUDA_MEMSET_NODE_PARAMS* params, CUcontext context) {
  if (params == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const bool exec_form = executable != nullptr;
  return set_node(exec_form ? Fn::cuGraphExecMemsetNodeSetParams : Fn::cuGraphMemsetNodeSetParams,
                  executable, exec_form, node,
                  [&](WireWriter& w) { put_record(w, memset_record(*params, context)); });
}

CUresult add_memcpy_node(CUgraphNode* node, CUgraph graph, const CUgraphNode* dependencies,
                         size_t n, const CUDA_MEMCPY3D* copy, CUcontext context) {
  // A side in this process's memory: staged through the backend when the graph runs.
  if (copy != nullptr && copy->srcLOD == 0 && copy->dstLOD == 0) {
    if (const SidesHere here = sides_here(*copy); here.any()) {
      return add_staged_copy_node(node, graph, dependencies, n, *copy, context, here);
    }
  }
  ArrayBoxRequest box;
  if (const CUresult r = copy_box(copy, box); r != CUDA_SUCCESS) return r;
  return add_node(Fn::cuGraphAddMemcpyNode, node, graph, dependencies, n,
                  [&](WireWriter& w) { put_copy(w, box, context); });
}

CUresult set_memcpy_node(CUgraphExec executable, CUgraphNode node, const CUDA_MEMCPY3D* copy,
                         CUcontext context) {
  if (copy != nullptr) {
    if (const auto staged = set_staged_copy_node(executable, node, *copy, context)) return *staged;
  }
  ArrayBoxRequest box;
  if (const CUresult r = copy_box(copy, box); r != CUDA_SUCCESS) return r;
  const bool exec_form = executable != nullptr;
  return set_node(exec_form ? Fn::cuGraphExecMemcpyNodeSetParams : Fn::cuGraphMemcpyNodeSetParams,
                  executable, exec_form, node, [&](WireWriter& w) { put_copy(w, box, context); });
}

CUresult add_child_node(CUgraphNode* node, CUgraph graph, const CUgraphNode* dependencies, size_t n,
                        CUgraph child, uint32_t ownership) {
  return add_node(Fn::cuGraphAddChildGraphNode, node, graph, dependencies, n, [&](WireWriter& w) {
    marshal::put_value(w, child);
    w.put<uint32_t>(ownership);
  });
}

CUresult add_empty_node(CUgraphNode* node, CUgraph graph, const CUgraphNode* dependencies,
                        size_t n) {
  return add_node(Fn::cuGraphAddEmptyNode, node, graph, dependencies, n, [](WireWriter&) {});
}

CUresult add_free_node(CUgraphNode* node, CUgraph graph, const CUgraphNode* dependencies, size_t n,
                       CUdeviceptr address) {
  return add_node(Fn::cuGraphAddMemFreeNode, node, graph, dependencies, n,
                  [&](WireWriter& w) { w.put<uint64_t>(address); });
}

CUresult add_event_node(Fn fn, CUgraphNode* node, CUgraph graph, const CUgraphNode* dependencies,
                        size_t n, CUevent event) {
  return add_node(fn, node, graph, dependencies, n,
                  [&](WireWriter& w) { marshal::put_value(w, event); });
}

CUresult set_event_node(Fn fn, CUgraphExec executable, CUgraphNode node, CUevent event) {
  const bool exec_form =
      fn == Fn::cuGraphExecEventRecordNodeSetEvent || fn == Fn::cuGraphExecEventWaitNodeSetEvent;
  return set_node(fn, executable, exec_form, node,
                  [&](WireWriter& w) { marshal::put_value(w, event); });
}

CUresult set_child_node(CUgraphExec executable, CUgraphNode node, CUgraph child) {
  return set_node(Fn::cuGraphExecChildGraphNodeSetParams, executable, true, node,
                  [&](WireWriter& w) { marshal::put_value(w, child); });
}

CUresult add_alloc_node(CUgraphNode* node, CUgraph graph, const CUgraphNode* dependencies, size_t n,
                        CUDA_MEM_ALLOC_NODE_PARAMS* params) {
  if (params == nullptr || (params->accessDescCount > 0 && params->accessDescs == nullptr) ||
      params->accessDescCount > kMaxAccessDescs) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  MemAllocNodeRecord record{};
  std::memcpy(&record.alloc_type, &params->poolProps.allocType, sizeof record.alloc_type);
  std::memcpy(&record.handle_types, &params->poolProps.handleTypes, sizeof record.handle_types);
  std::memcpy(&record.location_type, &params->poolProps.location.type, sizeof record.location_type);
  record.location_id = params->poolProps.location.id;
  record.bytes = params->bytesize;
  CUdeviceptr address = 0;
  const CUresult result = add_node(
      Fn::cuGraphAddMemAllocNode, node, graph, dependencies, n,
      [&](WireWriter& w) {
        put_record(w, record);
        w.put<uint32_t>(static_cast<uint32_t>(params->accessDescCount));
        if (params->accessDescCount > 0) {
          w.put_raw(params->accessDescs, params->accessDescCount * sizeof(CUmemAccessDesc));
        }
      },
      [&](WireReader& r) { address = r.get<uint64_t>(); });
  if (result != CUDA_SUCCESS) return result;
  params->dptr = address;
  note_allocated(Fn::cuGraphAddMemAllocNode, address, params->bytesize);
  std::lock_guard lock(copies_mutex);
  graph_allocations[graph].push_back(address);
  return result;
}

CUresult get_alloc_node(CUgraphNode node, CUDA_MEM_ALLOC_NODE_PARAMS* params) {
  if (params == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return get_node(Fn::cuGraphMemAllocNodeGetParams, node, [&](WireReader& r) {
    const auto record = get_record<MemAllocNodeRecord>(r);
    const auto n = r.get<uint32_t>();
    if (n > kMaxAccessDescs) raise(ErrorKind::kInvalidInput, "too many access descriptors");
    auto copy = std::make_unique<AccessCopy>();
    copy->descriptors.resize(n);
    if (n > 0) {
      std::memcpy(copy->descriptors.data(), r.get_raw(n * sizeof(CUmemAccessDesc)).data(),
                  n * sizeof(CUmemAccessDesc));
    }
    const auto address = r.get<uint64_t>();
    copy->graph = marshal::get_value<CUgraph>(r);
    *params = CUDA_MEM_ALLOC_NODE_PARAMS{};
    std::memcpy(&params->poolProps.allocType, &record.alloc_type, sizeof record.alloc_type);
    std::memcpy(&params->poolProps.handleTypes, &record.handle_types, sizeof record.handle_types);
    std::memcpy(&params->poolProps.location.type, &record.location_type,
                sizeof record.location_type);
    params->poolProps.location.id = record.location_id;
    params->bytesize = record.bytes;
    params->dptr = address;
    params->accessDescs = copy->descriptors.empty() ? nullptr : copy->descriptors.data();
    params->accessDescCount = copy->descriptors.size();
    std::lock_guard lock(copies_mutex);
    access_copies[node].push_back(std::move(copy));
  });
}

CUresult add_host_node(CUgraphNode* node, CUgraph graph, const CUgraphNode* dependencies, size_t n,
                       const CUDA_HOST_NODE_PARAMS* params) {
  if (params == nullptr || params->fn == nullptr || node == nullptr || graph == nullptr) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const stub::RouteScope route(pool_backend_of_handle("graph", graph));
  uint64_t token = 0;
  if (const CUresult r = host_function_token(params->fn, params->userData, token);
      r != CUDA_SUCCESS) {
    return r;
  }
  const CUresult added = add_node(Fn::cuGraphAddHostNode, node, graph, dependencies, n,
                                  [&](WireWriter& w) { w.put<uint64_t>(token); });
  if (added != CUDA_SUCCESS) drop_host_function(token);
  return added;
}

CUresult set_host_node(CUgraphExec executable, CUgraphNode node,
                       const CUDA_HOST_NODE_PARAMS* params) {
  if (params == nullptr || params->fn == nullptr || node == nullptr) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  uint64_t token = 0;
  if (const CUresult r = host_function_token(params->fn, params->userData, token);
      r != CUDA_SUCCESS) {
    return r;
  }
  const bool exec_form = executable != nullptr;
  const CUresult set =
      set_node(exec_form ? Fn::cuGraphExecHostNodeSetParams : Fn::cuGraphHostNodeSetParams,
               executable, exec_form, node, [&](WireWriter& w) { w.put<uint64_t>(token); });
  if (set != CUDA_SUCCESS) drop_host_function(token);
  return set;
}

CUresult get_host_node(CUgraphNode node, CUDA_HOST_NODE_PARAMS* params) {
  if (params == nullptr) return CUDA_ERROR_INVALID_VALUE;
  uint64_t token = 0;
  const CUresult got = get_node(Fn::cuGraphHostNodeGetParams, node,
                                [&](WireReader& r) { token = r.get<uint64_t>(); });
  if (got != CUDA_SUCCESS) return got;
  CUhostFn fn = nullptr;
  void* data = nullptr;
  // Every host node of the session names a function of this process's, unless it was made
  // before a fork (the child's session has no such node) or by another process.
  if (!host_function_of(token, fn, data)) return CUDA_ERROR_INVALID_VALUE;
  params->fn = fn;
  params->userData = data;
  return CUDA_SUCCESS;
}

void forget_node_copies(CUgraphNode node) {
  drop_copies(node);
  forget_staged_node(node);
}

void forget_graph_copies(CUgraph graph, uint64_t noted_by) {
  std::lock_guard lock(copies_mutex);
  if (const auto it = graph_allocations.find(graph); it != graph_allocations.end()) {
    for (const CUdeviceptr address : it->second)
      note_freed(Fn::cuGraphAddMemAllocNode, address, noted_by);
    graph_allocations.erase(it);
  }
  forget_graph_of(argument_copies, graph);
  forget_graph_of(access_copies, graph);
  forget_graph_of(mem_ops_copies, graph);
  conditional_bodies.graph_gone(graph);
  forget_staged_graph(graph);
}

CUresult add_mem_ops_node(CUgraphNode* node, CUgraph graph, const CUgraphNode* dependencies,
                          size_t n, const CUDA_BATCH_MEM_OP_NODE_PARAMS* params) {
  std::vector<MemOpRecord> records;
  if (params == nullptr || !encode_mem_ops(*params, records)) return CUDA_ERROR_INVALID_VALUE;
  return add_node(Fn::cuGraphAddBatchMemOpNode, node, graph, dependencies, n,
                  [&](WireWriter& w) { put_mem_ops(w, *params, records); });
}

CUresult set_mem_ops_node(CUgraphExec executable, CUgraphNode node,
                          const CUDA_BATCH_MEM_OP_NODE_PARAMS* params) {
  std::vector<MemOpRecord> records;
  if (params == nullptr || !encode_mem_ops(*params, records)) return CUDA_ERROR_INVALID_VALUE;
  const bool exec_form = executable != nullptr;
  const CUresult result = set_node(
      exec_form ? Fn::cuGraphExecBatchMemOpNodeSetParams : Fn::cuGraphBatchMemOpNodeSetParams,
      executable, exec_form, node, [&](WireWriter& w) { put_mem_ops(w, *params, records); });
  if (result == CUDA_SUCCESS && !exec_form) drop_copies(node);
  return result;
}

CUresult get_mem_ops_node(CUgraphNode node, CUDA_BATCH_MEM_OP_NODE_PARAMS* params) {
  if (params == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return get_node(Fn::cuGraphBatchMemOpNodeGetParams, node, [&](WireReader& r) {
    const auto context = marshal::get_value<CUcontext>(r);
    const auto flags = r.get<uint32_t>();
    const auto count = r.get<uint32_t>();
    if (count > kMaxBatchMemOps) raise(ErrorKind::kInvalidInput, "too many memory operations");
    auto copy = std::make_unique<MemOpsCopy>();
    copy->operations.reserve(count);
    for (uint32_t i = 0; i < count; ++i) {
      const auto record = get_record<MemOpRecord>(r);
      if (!mem_op_word_bytes(record.operation)) {
        raise(ErrorKind::kInvalidInput, "a memory operation the driver does not define");
      }
      copy->operations.push_back(mem_op_params(record));
    }
    copy->graph = marshal::get_value<CUgraph>(r);
    params->ctx = context;
    params->flags = flags;
    params->count = count;
    params->paramArray = copy->operations.empty() ? nullptr : copy->operations.data();
    std::lock_guard lock(copies_mutex);
    mem_ops_copies[node].push_back(std::move(copy));
  });
}

CUresult add_conditional_node(CUgraphNode* node, CUgraph graph, const CUgraphNode* dependencies,
                              size_t n, CUDA_CONDITIONAL_NODE_PARAMS& params) {
  if (params.size == 0 || params.size > kMaxConditionalBodies) return CUDA_ERROR_INVALID_VALUE;
  std::vector<CUgraph> bodies;
  const CUresult result = add_node(
      Fn::gvirtusGraphAddConditionalNode, node, graph, dependencies, n,
      [&](WireWriter& w) {
        w.put<uint64_t>(params.handle);
        w.put<uint32_t>(static_cast<uint32_t>(marshal::enum_bits(params.type)));
        w.put<uint32_t>(params.size);
        marshal::put_value(w, params.ctx);
      },
      [&](WireReader& r) { bodies = read_conditional_bodies<CUgraph>(r, params.size); });
  if (result != CUDA_SUCCESS) return result;
  // The bodies are graphs of the node's backend, filled through it.
  for (const CUgraph body : bodies) pool_note_handle("graph", body);
  params.phGraph_out = conditional_bodies.keep(*node, graph, std::move(bodies));
  return CUDA_SUCCESS;
}

}  // namespace gvirtus::cuda

namespace cr = gvirtus::cuda;
using cr::Fn;

extern "C" __attribute__((visibility("default"))) CUresult cuGraphAddBatchMemOpNode(
    CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
    size_t numDependencies, const CUDA_BATCH_MEM_OP_NODE_PARAMS* nodeParams) {
  return cr::add_mem_ops_node(phGraphNode, hGraph, dependencies, numDependencies, nodeParams);
}

// The operations handed out stay valid until the node's parameters change, it is destroyed or
// its graph is.
extern "C" __attribute__((visibility("default"))) CUresult cuGraphBatchMemOpNodeGetParams(
    CUgraphNode hNode, CUDA_BATCH_MEM_OP_NODE_PARAMS* nodeParams_out) {
  return cr::get_mem_ops_node(hNode, nodeParams_out);
}

extern "C" __attribute__((visibility("default"))) CUresult cuGraphBatchMemOpNodeSetParams(
    CUgraphNode hNode, const CUDA_BATCH_MEM_OP_NODE_PARAMS* nodeParams) {
  return cr::set_mem_ops_node(nullptr, hNode, nodeParams);
}

extern "C" __attribute__((visibility("default"))) CUresult cuGraphExecBatchMemOpNodeSetParams(
    CUgraphExec hGraphExec, CUgraphNode hNode, const CUDA_BATCH_MEM_OP_NODE_PARAMS* nodeParams) {
  if (hGraphExec == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return cr::set_mem_ops_node(hGraphExec, hNode, nodeParams);
}

extern "C" __attribute__((visibility("default"))) CUresult cuGraphConditionalHandleCreate(
    CUgraphConditionalHandle* pHandle_out, CUgraph hGraph, CUcontext ctx,
    unsigned int defaultLaunchValue, unsigned int flags) {
  if (pHandle_out == nullptr || hGraph == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const gvirtus::stub::RouteScope route(cr::pool_backend_of_handle("graph", hGraph));
  CUgraphConditionalHandle handle = 0;
  const CUresult result = cr::remote_sync(
      Fn::cuGraphConditionalHandleCreate,
      [&](gvirtus::WireWriter& w) {
        gvirtus::marshal::put_value(w, hGraph);
        gvirtus::marshal::put_value(w, ctx);
        w.put<uint32_t>(defaultLaunchValue);
        w.put<uint32_t>(flags);
      },
      [&](gvirtus::WireReader& r) { handle = r.get<uint64_t>(); });
  if (result == CUDA_SUCCESS) *pHandle_out = handle;
  return result;
}

extern "C" __attribute__((visibility("default"))) CUresult cuGraphAddKernelNode_v2(
    CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
    size_t numDependencies, const CUDA_KERNEL_NODE_PARAMS* nodeParams) {
  return cr::add_kernel_node(phGraphNode, hGraph, dependencies, numDependencies, nodeParams);
}

extern "C" __attribute__((visibility("default"))) CUresult cuGraphKernelNodeGetParams_v2(
    CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS* nodeParams) {
  return cr::get_kernel_node(hNode, nodeParams);
}

extern "C" __attribute__((visibility("default"))) CUresult cuGraphKernelNodeSetParams_v2(
    CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS* nodeParams) {
  if (hNode == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return cr::set_kernel_node(nullptr, hNode, nodeParams);
}

extern "C" __attribute__((visibility("default"))) CUresult cuGraphExecKernelNodeSetParams_v2(
    CUgraphExec hGraphExec, CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS* nodeParams) {
  if (hGraphExec == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return cr::set_kernel_node(hGraphExec, hNode, nodeParams);
}

extern "C" __attribute__((visibility("default"))) CUresult cuGraphAddMemsetNode(
    CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
    size_t numDependencies, const CUDA_MEMSET_NODE_PARAMS* memsetParams, CUcontext ctx) {
  return cr::add_memset_node(phGraphNode, hGraph, dependencies, numDependencies, memsetParams, ctx);
}

extern "C" __attribute__((visibility("default"))) CUresult cuGraphMemsetNodeGetParams(
    CUgraphNode hNode, CUDA_MEMSET_NODE_PARAMS* nodeParams) {
  if (nodeParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return cr::get_node(Fn::cuGraphMemsetNodeGetParams, hNode, [&](gvirtus::WireReader& r) {
    const auto record = gvirtus::get_record<cr::MemsetNodeRecord>(r);
    *nodeParams = CUDA_MEMSET_NODE_PARAMS{record.dst,          record.pitch, record.value,
                                          record.element_size, record.width, record.height};
  });
}

extern "C" __attribute__((visibility("default"))) CUresult cuGraphMemsetNodeSetParams(
    CUgraphNode hNode, const CUDA_MEMSET_NODE_PARAMS* nodeParams) {
  return cr::set_memset_node(nullptr, hNode, nodeParams, nullptr);
}

extern "C" __attribute__((visibility("default"))) CUresult cuGraphExecMemsetNodeSetParams(
    CUgraphExec hGraphExec, CUgraphNode hNode, const CUDA_MEMSET_NODE_PARAMS* memsetParams,
    CUcontext ctx) {
  if (hGraphExec == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return cr::set_memset_node(hGraphExec, hNode, memsetParams, ctx);
}

extern "C" __attribute__((visibility("default"))) CUresult cuGraphAddMemcpyNode(
    CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
    size_t numDependencies, const CUDA_MEMCPY3D* copyParams, CUcontext ctx) {
  return cr::add_memcpy_node(phGraphNode, hGraph, dependencies, numDependencies, copyParams, ctx);
}

extern "C" __attribute__((visibility("default"))) CUresult cuGraphMemcpyNodeGetParams(
    CUgraphNode hNode, CUDA_MEMCPY3D* nodeParams) {
  if (nodeParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (cr::staged_copy_params(hNode, *nodeParams)) return CUDA_SUCCESS;
  return cr::get_node(Fn::cuGraphMemcpyNodeGetParams, hNode,
                      [&](gvirtus::WireReader& r) { cr::get_copy(r, *nodeParams); });
}

extern "C" __attribute__((visibility("default"))) CUresult cuGraphMemcpyNodeSetParams(
    CUgraphNode hNode, const CUDA_MEMCPY3D* nodeParams) {
  return cr::set_memcpy_node(nullptr, hNode, nodeParams, nullptr);
}

extern "C" __attribute__((visibility("default"))) CUresult cuGraphExecMemcpyNodeSetParams(
    CUgraphExec hGraphExec, CUgraphNode hNode, const CUDA_MEMCPY3D* copyParams, CUcontext ctx) {
  if (hGraphExec == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return cr::set_memcpy_node(hGraphExec, hNode, copyParams, ctx);
}

extern "C" __attribute__((visibility("default"))) CUresult cuGraphAddEmptyNode(
    CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
    size_t numDependencies) {
  return cr::add_empty_node(phGraphNode, hGraph, dependencies, numDependencies);
}

extern "C" __attribute__((visibility("default"))) CUresult cuGraphAddChildGraphNode(
    CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
    size_t numDependencies, CUgraph childGraph) {
  return cr::add_child_node(phGraphNode, hGraph, dependencies, numDependencies, childGraph,
                            CU_GRAPH_CHILD_GRAPH_OWNERSHIP_CLONE);
}

extern "C" __attribute__((visibility("default"))) CUresult cuGraphChildGraphNodeGetGraph(
    CUgraphNode hNode, CUgraph* phGraph) {
  return cr::get_node_value(Fn::cuGraphChildGraphNodeGetGraph, hNode, phGraph);
}

extern "C" __attribute__((visibility("default"))) CUresult cuGraphExecChildGraphNodeSetParams(
    CUgraphExec hGraphExec, CUgraphNode hNode, CUgraph childGraph) {
  return cr::set_child_node(hGraphExec, hNode, childGraph);
}

extern "C" __attribute__((visibility("default"))) CUresult cuGraphAddEventRecordNode(
    CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
    size_t numDependencies, CUevent event) {
  return cr::add_event_node(Fn::cuGraphAddEventRecordNode, phGraphNode, hGraph, dependencies,
                            numDependencies, event);
}

extern "C" __attribute__((visibility("default"))) CUresult cuGraphAddEventWaitNode(
    CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
    size_t numDependencies, CUevent event) {
  return cr::add_event_node(Fn::cuGraphAddEventWaitNode, phGraphNode, hGraph, dependencies,
                            numDependencies, event);
}

extern "C" __attribute__((visibility("default"))) CUresult cuGraphEventRecordNodeGetEvent(
    CUgraphNode hNode, CUevent* event_out) {
  return cr::get_node_value(Fn::cuGraphEventRecordNodeGetEvent, hNode, event_out);
}

extern "C" __attribute__((visibility("default"))) CUresult cuGraphEventWaitNodeGetEvent(
    CUgraphNode hNode, CUevent* event_out) {
  return cr::get_node_value(Fn::cuGraphEventWaitNodeGetEvent, hNode, event_out);
}

extern "C" __attribute__((visibility("default"))) CUresult cuGraphEventRecordNodeSetEvent(
    CUgraphNode hNode, CUevent event) {
  return cr::set_event_node(Fn::cuGraphEventRecordNodeSetEvent, nullptr, hNode, event);
}

extern "C" __attribute__((visibility("default"))) CUresult cuGraphEventWaitNodeSetEvent(
    CUgraphNode hNode, CUevent event) {
  return cr::set_event_node(Fn::cuGraphEventWaitNodeSetEvent, nullptr, hNode, event);
}

extern "C" __attribute__((visibility("default"))) CUresult cuGraphExecEventRecordNodeSetEvent(
    CUgraphExec hGraphExec, CUgraphNode hNode, CUevent event) {
  return cr::set_event_node(Fn::cuGraphExecEventRecordNodeSetEvent, hGraphExec, hNode, event);
}

extern "C" __attribute__((visibility("default"))) CUresult cuGraphExecEventWaitNodeSetEvent(
    CUgraphExec hGraphExec, CUgraphNode hNode, CUevent event) {
  return cr::set_event_node(Fn::cuGraphExecEventWaitNodeSetEvent, hGraphExec, hNode, event);
}

extern "C" __attribute__((visibility("default"))) CUresult cuGraphAddMemAllocNode(
    CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
    size_t numDependencies, CUDA_MEM_ALLOC_NODE_PARAMS* nodeParams) {
  return cr::add_alloc_node(phGraphNode, hGraph, dependencies, numDependencies, nodeParams);
}

extern "C" __attribute__((visibility("default"))) CUresult cuGraphMemAllocNodeGetParams(
    CUgraphNode hNode, CUDA_MEM_ALLOC_NODE_PARAMS* params_out) {
  return cr::get_alloc_node(hNode, params_out);
}

extern "C" __attribute__((visibility("default"))) CUresult cuGraphAddMemFreeNode(
    CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
    size_t numDependencies, CUdeviceptr dptr) {
  return cr::add_free_node(phGraphNode, hGraph, dependencies, numDependencies, dptr);
}

extern "C" __attribute__((visibility("default"))) CUresult cuGraphMemFreeNodeGetParams(
    CUgraphNode hNode, CUdeviceptr* dptr_out) {
  return cr::get_node_value(Fn::cuGraphMemFreeNodeGetParams, hNode, dptr_out);
}

extern "C" __attribute__((visibility("default"))) CUresult cuGraphAddHostNode(
    CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
    size_t numDependencies, const CUDA_HOST_NODE_PARAMS* nodeParams) {
  return cr::add_host_node(phGraphNode, hGraph, dependencies, numDependencies, nodeParams);
}

extern "C" __attribute__((visibility("default"))) CUresult cuGraphHostNodeGetParams(
    CUgraphNode hNode, CUDA_HOST_NODE_PARAMS* nodeParams) {
  return cr::get_host_node(hNode, nodeParams);
}

extern "C" __attribute__((visibility("default"))) CUresult cuGraphHostNodeSetParams(
    CUgraphNode hNode, const CUDA_HOST_NODE_PARAMS* nodeParams) {
  return cr::set_host_node(nullptr, hNode, nodeParams);
}

extern "C" __attribute__((visibility("default"))) CUresult cuGraphExecHostNodeSetParams(
    CUgraphExec hGraphExec, CUgraphNode hNode, const CUDA_HOST_NODE_PARAMS* nodeParams) {
  if (hGraphExec == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return cr::set_host_node(hGraphExec, hNode, nodeParams);
}
