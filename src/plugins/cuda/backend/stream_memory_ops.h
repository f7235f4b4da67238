// cuStreamBatchMemOp on the backend (wire: common/driver_wire.h's MemOpRecord): the stream must be
// the session's and each wait's or write's word lie in the session's device memory (4 or 8 bytes);
// an operation the driver does not define, or a batch over kMaxBatchMemOps, is malformed. The
// batch then goes to the driver whole, as the application made it.
#pragma once

#include <cuda.h>

#include <vector>

#include "common/wire.h"
#include "cuda_calls.h"

namespace gvirtus::cuda {

// `count` operations' records from `in`, in the driver's form: each wait's or write's word vetted
// as the session's device memory (the first refusal in `vetted`, when it holds CUDA_SUCCESS);
// an operation the driver does not define, or more than kMaxBatchMemOps, is malformed (`what`
// names the call).
std::vector<CUstreamBatchMemOpParams> get_mem_ops(WireReader& in, uint32_t count, CUresult& vetted,
                                                  const char* what);

// Runs `fn` if it is cuStreamBatchMemOp_v2 (the reply written, `result` set); false otherwise.
bool run_stream_memory_ops(Fn fn, WireReader& in, WireWriter& out, CUresult& result);

}  // namespace gvirtus::cuda
