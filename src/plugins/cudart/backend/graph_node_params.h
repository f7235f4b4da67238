// Graph nodes' parameters from the wire (common/graph_node_wire.h), for the backend's node calls
// (graph_node_calls.cpp): each kind's record made into the runtime's structure, with what it
// names vetted first - a memset or copy node's memory as device memory over its whole extent (the
// node dereferences it each time the graph runs), an event as the session's - the result in
// `vetted`. A malformed record (an enum out of range, a kernel never resolved, too many access
// descriptors) throws Error{kInvalidInput}, which ends the session.
#pragma once

#include <cuda_runtime_api.h>

#include <vector>

#include "common/wire.h"
#include "plugins/cudart/common/graph_node_wire.h"

namespace gvirtus::cudart {

// The kernel's handle and argument pointers point into the calling thread's launch buffer
// (modules.h), valid until its next call: the runtime copies them before it returns.
cudaKernelNodeParams get_kernel_params(WireReader& in);
cudaMemsetParams get_memset_params(WireReader& in, cudaError_t& vetted);
cudaMemcpy3DParms get_memcpy_params(WireReader& in, cudaError_t& vetted);
Memcpy1DNodeWire get_memcpy_1d(WireReader& in, cudaError_t& vetted);
// The access descriptors land in `access`, which the parameters point into.
void get_alloc_params(WireReader& in, cudaMemAllocNodeParams& params,
                      std::vector<cudaMemAccessDesc>& access);
// The generic form: the node type, then that kind's parameters, vetted as its own call vets them.
cudaGraphNodeParams get_node_params(WireReader& in, std::vector<cudaMemAccessDesc>& access,
                                    cudaError_t& vetted);

}  // namespace gvirtus::cudart
