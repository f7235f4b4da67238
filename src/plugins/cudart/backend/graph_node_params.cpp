// Graph nodes' parameters from the wire (graph_node_params.h).
#include "plugins/cudart/backend/graph_node_params.h"
#include "plugins/cudart/backend/host_functions.h"

#include <cstring>
#include <string>

#include "common/wire_record.h"
#include "plugins/cudart/backend/graph_nodes.h"
#include "plugins/cudart/backend/memcpy_3d.h"
#include "plugins/cudart/backend/modules.h"
#include "plugins/cudart/backend/vetting.h"
#include "plugins/cudart/common/marshal.h"
#include "plugins/cudart/common/module_wire.h"

namespace gvirtus::cudart {
namespace {

// The extent in bytes a pitched side of `rows` rows of `width` bytes reaches from its pointer,
// or nullopt when it overflows.
std::optional<uint64_t> pitched_extent(uint64_t pitch, uint64_t x, uint64_t width, uint64_t rows) {
  if (rows == 0 || width == 0) return uint64_t{0};
  const unsigned __int128 end = static_cast<unsigned __int128>(pitch) * (rows - 1) + x + width;
  if (end > UINT64_MAX) return std::nullopt;
  return static_cast<uint64_t>(end);
}

cudaError_t vet_range(uint64_t address, std::optional<uint64_t> bytes) {
  if (!bytes) {
    return static_cast<cudaError_t>(services::refuse(
        cudaErrorInvalidValue, "cudart", "device range", reinterpret_cast<const void*>(address),
        "extent overflows the address space"));
  }
  return vet_device_pointer(reinterpret_cast<const void*>(address), *bytes);
}

cudaPitchedPtr pitched(const CopySideWire& side) {
  return cudaPitchedPtr{reinterpret_cast<void*>(side.ptr), side.pitch, side.xsize, side.ysize};
}

}  // namespace

// A kernel node's parameters from the wire: the handle and argument pointers point into the
// calling thread's launch buffer (modules.h), which the runtime copies before it returns.
cudaKernelNodeParams get_kernel_params(WireReader& in) {
  const auto wire = get_record<KernelNodeWire>(in);
  const auto bytes = in.get_blob(kMaxParamBytes);
  const auto [function, args] = kernel_arguments(wire.kernel, bytes);
  cudaKernelNodeParams params{};
  params.func = const_cast<void*>(function);
  params.gridDim = dim3(wire.grid.x, wire.grid.y, wire.grid.z);
  params.blockDim = dim3(wire.block.x, wire.block.y, wire.block.z);
  params.sharedMemBytes = wire.shared_bytes;
  params.kernelParams = args;
  return params;
}

cudaMemsetParams get_memset_params(WireReader& in, cudaError_t& vetted) {
  const auto wire = get_record<MemsetNodeWire>(in);
  cudaMemsetParams params{};
  params.dst = reinterpret_cast<void*>(wire.dst);
  params.pitch = wire.pitch;
  params.value = wire.value;
  params.elementSize = wire.element_size;
  params.width = wire.width;
  params.height = wire.height;
  const std::optional<uint64_t> row = wire.element_size <= 4 && wire.width <= UINT64_MAX / 4
                                          ? std::optional<uint64_t>(wire.width * wire.element_size)
                                          : std::nullopt;
  vetted = row ? vet_range(wire.dst, pitched_extent(wire.pitch, 0, *row, wire.height))
               : vet_range(wire.dst, std::nullopt);
  return params;
}

cudaMemcpy3DParms get_memcpy_params(WireReader& in, cudaError_t& vetted) {
  const auto wire = get_record<MemcpyNodeWire>(in);
  cudaMemcpy3DParms params{};
  params.srcArray = handle_from_wire<cudaArray_t>(wire.src_array);
  params.srcPtr = pitched(wire.src);
  params.srcPos = cudaPos{wire.src.x, wire.src.y, wire.src.z};
  params.dstArray = handle_from_wire<cudaArray_t>(wire.dst_array);
  params.dstPtr = pitched(wire.dst);
  params.dstPos = cudaPos{wire.dst.x, wire.dst.y, wire.dst.z};
  params.extent = cudaExtent{wire.width, wire.height, wire.depth};
  params.kind = wire.kind;
  // Arrays must be the session's. Pointer sides must be memory the GPU reaches in the session
  // (the arena's host memory is) over the rows the copy reaches, in bytes (elements of an array
  // taking part): client memory the graph would copy from or into at replay time never is.
  vetted = first_failure(vet(params.srcArray), vet(params.dstArray));
  if (vetted != cudaSuccess) return params;
  const uint64_t element = copy_element_bytes(params.srcArray, params.dstArray);
  auto reach = [&](const CopySideWire& side) {
    return copy_side_extent(side, wire.width, wire.height, wire.depth, element);
  };
  vetted = first_failure(vet_range(wire.src.ptr, reach(wire.src)),
                         vet_range(wire.dst.ptr, reach(wire.dst)));
  return params;
}

Memcpy1DNodeWire get_memcpy_1d(WireReader& in, cudaError_t& vetted) {
  const auto wire = get_record<Memcpy1DNodeWire>(in);
  vetted = first_failure(vet_range(wire.src, wire.count), vet_range(wire.dst, wire.count));
  return wire;
}

// A memory allocation node's parameters from the wire, its access descriptors in `access`.
void get_alloc_params(WireReader& in, cudaMemAllocNodeParams& params,
                      std::vector<cudaMemAccessDesc>& access) {
  std::memcpy(&params.poolProps, in.get_raw(sizeof params.poolProps).data(),
              sizeof params.poolProps);
  params.poolProps.win32SecurityAttributes = nullptr;
  const uint32_t n = in.get<uint32_t>();
  if (n > kMaxAccessDescs) {
    raise(ErrorKind::kInvalidInput,
          std::to_string(n) + " access descriptors in an allocation node");
  }
  access.resize(n);
  if (n > 0) {
    std::memcpy(access.data(), in.get_raw(n * sizeof(cudaMemAccessDesc)).data(),
                n * sizeof(cudaMemAccessDesc));
  }
  params.accessDescs = n > 0 ? access.data() : nullptr;
  params.accessDescCount = n;
  params.bytesize = in.get<uint64_t>();
}

// The generic form's parameters (graph_node_wire.h): the node type, then that kind's parameters,
// vetted as the kind's own call vets them (`vetted`). Pointers inside point into `access` and the
// calling thread's launch buffer.
cudaGraphNodeParams get_node_params(WireReader& in, std::vector<cudaMemAccessDesc>& access,
                                    cudaError_t& vetted) {
  cudaGraphNodeParams params{};
  const int32_t type = in.get<int32_t>();
  vetted = cudaSuccess;
  switch (type) {
    case cudaGraphNodeTypeKernel: {
      const cudaKernelNodeParams kernel = get_kernel_params(in);
      params.kernel.func = kernel.func;
      params.kernel.gridDim = kernel.gridDim;
      params.kernel.blockDim = kernel.blockDim;
      params.kernel.sharedMemBytes = kernel.sharedMemBytes;
      params.kernel.kernelParams = kernel.kernelParams;
      break;
    }
    case cudaGraphNodeTypeMemcpy:
      params.memcpy.copyParams = get_memcpy_params(in, vetted);
      break;
    case cudaGraphNodeTypeMemset: {
      const cudaMemsetParams memset = get_memset_params(in, vetted);
      params.memset.dst = memset.dst;
      params.memset.pitch = memset.pitch;
      params.memset.value = memset.value;
      params.memset.elementSize = memset.elementSize;
      params.memset.width = memset.width;
      params.memset.height = memset.height;
      break;
    }
    case cudaGraphNodeTypeEmpty:
      break;
    case cudaGraphNodeTypeWaitEvent:
    case cudaGraphNodeTypeEventRecord: {
      const auto event = handle_from_wire<cudaEvent_t>(in.get<uint64_t>());
      vetted = vet(event);
      if (type == cudaGraphNodeTypeWaitEvent) {
        params.eventWait.event = event;
      } else {
        params.eventRecord.event = event;
      }
      break;
    }
    case cudaGraphNodeTypeGraph: {
      params.graph.graph = handle_from_wire<cudaGraph_t>(in.get<uint64_t>());
      const uint32_t ownership = in.get<uint32_t>();
      if (ownership > cudaGraphChildGraphOwnershipMove) {
        raise(ErrorKind::kInvalidInput, "child graph ownership " + std::to_string(ownership));
      }
      params.graph.ownership = static_cast<cudaGraphChildGraphNodeOwnership>(ownership);
      // A graph already a node's cannot be moved again: the runtime would own it twice.
      vetted = first_failure(
          vet(params.graph.graph),
          ownership == cudaGraphChildGraphOwnershipMove && is_child_graph(params.graph.graph)
              ? static_cast<cudaError_t>(services::refuse(cudaErrorInvalidValue, "cudart", "graph",
                                                          params.graph.graph,
                                                          "already owned by a child graph node"))
              : cudaSuccess);
      break;
    }
    case cudaGraphNodeTypeMemAlloc: {
      cudaMemAllocNodeParams alloc{};
      get_alloc_params(in, alloc, access);
      params.alloc.poolProps = alloc.poolProps;
      params.alloc.accessDescs = alloc.accessDescs;
      params.alloc.accessDescCount = alloc.accessDescCount;
      params.alloc.bytesize = alloc.bytesize;
      break;
    }
    case cudaGraphNodeTypeMemFree:
      params.free.dptr = reinterpret_cast<void*>(in.get<uint64_t>());
      vetted = vet_device_pointer(params.free.dptr);
      break;
    case cudaGraphNodeTypeHost: {
      // A gate of the session's for the client's token (host_functions.h), kept for the
      // session's life, as a graph's node may run any number of times.
      const uint64_t token = in.get<uint64_t>();
      services::Gate* gate = token != 0 ? services::host_gates().make(token, false) : nullptr;
      vetted = token == 0        ? cudaErrorInvalidValue
               : gate == nullptr ? cudaErrorMemoryAllocation
                                 : cudaSuccess;
      params.host.fn = reach_host_gate;
      params.host.userData = gate;
      break;
    }
    case cudaGraphNodeTypeConditional: {
      // The handle is vetted against the node's graph by the add (conditional_handles.h).
      params.conditional.handle = in.get<uint64_t>();
      const uint32_t kind = in.get<uint32_t>();
      std::memcpy(&params.conditional.type, &kind, sizeof kind);  // the runtime judges its bits
      params.conditional.size = in.get<uint32_t>();
      if (params.conditional.size == 0 || params.conditional.size > kMaxConditionalBodies) {
        vetted = static_cast<cudaError_t>(
            services::refuse(cudaErrorInvalidValue, "cudart", "conditional node size",
                             reinterpret_cast<const void*>(uintptr_t{params.conditional.size}),
                             "outside 1 to kMaxConditionalBodies"));
      }
      break;
    }
    default:
      raise(ErrorKind::kInvalidInput, "graph node type " + std::to_string(type) + " on the wire");
  }
  params.type = static_cast<cudaGraphNodeType>(type);
  return params;
}

}  // namespace gvirtus::cudart
