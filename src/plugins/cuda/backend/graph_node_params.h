// Graph nodes' parameters from and to the wire (common/graph_node_wire.h), for the backend's node
// calls (graph_node_calls.cpp): each kind's record made into the driver's structure, with what it
// names vetted first - a memset's or copy's memory as the session's device memory over its whole
// extent (the node dereferences it each time its graph runs), an event, a context, a function as
// the session's - the result in `vetted`. A malformed record (a copy side of a kind nodes do not
// take, too many access descriptors) throws Error{kInvalidInput}, which ends the session.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/wire.h"
#include "plugins/cuda/common/graph_node_wire.h"

namespace gvirtus::cuda {

// A kernel node's parameters, pointing into `arguments` (each argument at its offset by the
// kernel's layout, one pointer per argument in `pointers`): the driver copies them before it
// returns.
struct KernelNodeArguments {
  CUDA_KERNEL_NODE_PARAMS params{};
  std::vector<uint64_t> buffer;  // aligned as the driver's parameter space is
  std::vector<void*> pointers;
};
void get_kernel_params(WireReader& in, KernelNodeArguments& arguments, CUresult& vetted);
// The driver's kernel node parameters as the wire carries them: the record, and the arguments
// packed by the kernel's layout (from its argument pointers or its `extra` buffer).
struct PackedKernelNode {
  KernelNodeRecord record{};
  std::vector<std::byte> arguments;
};
CUresult pack_kernel_params(const CUDA_KERNEL_NODE_PARAMS& params, PackedKernelNode& packed);
void put_kernel_node(WireWriter& out, const PackedKernelNode& packed);

CUDA_MEMSET_NODE_PARAMS get_memset_params(WireReader& in, CUcontext& context, CUresult& vetted);
void put_memset_params(WireWriter& out, const CUDA_MEMSET_NODE_PARAMS& params);

CUDA_MEMCPY3D get_memcpy_params(WireReader& in, CUcontext& context, CUresult& vetted);
void put_memcpy_params(WireWriter& out, const CUDA_MEMCPY3D& params);

// The access descriptors land in `access`, which the parameters point into.
CUDA_MEM_ALLOC_NODE_PARAMS get_alloc_params(WireReader& in, std::vector<CUmemAccessDesc>& access,
                                            CUresult& vetted);
void put_alloc_params(WireWriter& out, const CUDA_MEM_ALLOC_NODE_PARAMS& params);

}  // namespace gvirtus::cuda
