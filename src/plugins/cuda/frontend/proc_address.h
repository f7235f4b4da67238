// cuGetProcAddress for the client libcuda.so.1: which of the driver's exports a (base name,
// CUDA version, flags) request means, as NVIDIA's driver answers it.
//
// NVIDIA's runtimes (static and shared) and libraries fetch nearly every driver function this
// way, by base name ("cuMemAlloc") and the CUDA version whose ABI they were built for (3020:
// cuMemAlloc_v2; 2000: the old cuMemAlloc). The table is generated from NVIDIA's PFN typedefs
// and the driver's export list (tools/gen/gen_proc_address.py). The rules, from cuda.h:
//   - the newest ABI introduced at or before the requested version;
//   - with CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, a function that has per-thread default
//     stream variants (_ptds/_ptsz) gets only those (below the first: VERSION_NOT_SUFFICIENT, no
//     legacy fallback, as a real driver answers); one without gets its legacy ABI.
//     CU_GET_PROC_ADDRESS_DEFAULT means legacy (this library is not built for per-thread streams);
//   - a name no ABI has: CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND; one whose first ABI is newer
//     than the requested version: CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <string_view>

namespace gvirtus::cuda {

struct ProcAddress {
  CUdriverProcAddressQueryResult status;
  const char* symbol;  // the export, when status is CU_GET_PROC_ADDRESS_SUCCESS; else null
};

ProcAddress resolve_proc_address(std::string_view name, int cuda_version, uint64_t flags);

}  // namespace gvirtus::cuda
