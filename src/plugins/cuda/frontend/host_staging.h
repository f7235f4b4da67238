// Graph copies of the application's own memory (host_staging.cpp; the backend's blocks:
// backend/host_staging.h). A graph runs on the backend's GPU, which cannot reach this process's
// pageable memory (nor its page-locked memory over a transport without shared memory), yet CUDA
// lets a copy node or a captured copy name such memory and reads or writes it each time the
// graph runs, when the node runs. So such a copy becomes a copy of a staging block on the
// backend, beside a host function of the stub's that runs in stream order like any other
// (host_functions.h): before a copy to the device it writes the application's bytes into the
// block, after a copy from the device it reads the block into the application's memory. Later
// work of the graph waits for it, as natively for the copy.
//
// A copy node becomes a child graph node of those two nodes; the stub answers for it as the
// copy node it is to the application (its type and its parameters), in the graph it was added
// to and in that graph's clones. A captured copy is captured as the host function and a copy of
// the block. Each range of the application's memory gets one block per backend, reused by every
// node and capture that names the range again; blocks last as long as the session (at most
// backend/host_staging.h's kMaxStagingBytes in all).
#pragma once

#include <cuda.h>

#include <cstddef>
#include <optional>

namespace gvirtus::cuda {

// Which sides of a copy node are this process's own memory (nothing the backend's GPU reaches).
struct SidesHere {
  bool source = false;
  bool destination = false;
};
SidesHere sides_here(const CUDA_MEMCPY3D& copy);

// A capturing stream's copy to device memory from this process's memory, or back.
CUresult capture_staged_to_device(CUdeviceptr dst, const void* src, size_t bytes, CUstream stream);
CUresult capture_staged_to_host(void* dst, CUdeviceptr src, size_t bytes, CUstream stream);

// A copy node with exactly one side here (`here`), as the application asked for it.
CUresult add_staged_copy_node(CUgraphNode* node, CUgraph graph, const CUgraphNode* dependencies,
                              size_t n, const CUDA_MEMCPY3D& copy, CUcontext context,
                              SidesHere here);
// New parameters for a staged copy node, in its graph (`executable` null) or in an executable
// graph: the application's own memory on the same side as before. nullopt when `node` is no
// staged copy node the stub knows.
std::optional<CUresult> set_staged_copy_node(CUgraphExec executable, CUgraphNode node,
                                             const CUDA_MEMCPY3D& copy, CUcontext context);
// The parameters the application gave a staged copy node; false when `node` is none.
bool staged_copy_params(CUgraphNode node, CUDA_MEMCPY3D& copy);
bool is_staged_copy_node(CUgraphNode node);

// Bookkeeping: a clone has its own nodes for the staged ones; a destroyed node or graph goes.
void staged_copies_cloned(CUgraph original, CUgraph clone);
void forget_staged_node(CUgraphNode node);
void forget_staged_graph(CUgraph graph);

}  // namespace gvirtus::cuda
