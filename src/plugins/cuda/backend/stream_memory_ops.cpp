#include "plugins/cuda/backend/stream_memory_ops.h"

#include <optional>
#include <string>
#include <vector>

#include "common/call_marshal.h"
#include "common/error.h"
#include "common/wire_record.h"
#include "cuda_real.h"
#include "cuda_vetting.h"
#include "plugins/cuda/common/driver_wire.h"
#include "plugins/cuda/common/mem_op_records.h"

namespace gvirtus::cuda {
std::vector<CUstreamBatchMemOpParams> get_mem_ops(WireReader& in, uint32_t count, CUresult& vetted,
                                                  const char* what) {
  if (count > kMaxBatchMemOps) {
    raise(ErrorKind::kInvalidInput,
          std::string(what) + ": " + std::to_string(count) + " operations exceed the limit");
  }
  std::vector<CUstreamBatchMemOpParams> params;
  params.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    const auto record = get_record<MemOpRecord>(in);
    const auto bytes = mem_op_word_bytes(record.operation);
    if (!bytes) {
      raise(ErrorKind::kInvalidInput, std::string(what) + ": operation " +
                                          std::to_string(record.operation) +
                                          " is not the driver's");
    }
    if (vetted == CUDA_SUCCESS && *bytes != 0) vetted = vet_device_pointer(record.address, *bytes);
    params.push_back(mem_op_params(record));
  }
  return params;
}

bool run_stream_memory_ops(Fn fn, WireReader& in, WireWriter& out, CUresult& result) {
  if (fn != Fn::cuStreamBatchMemOp_v2) return false;
  const auto stream = marshal::get_value<CUstream>(in);
  const auto flags = in.get<uint32_t>();
  const auto count = in.get<uint32_t>();
  result = vet(stream);
  std::vector<CUstreamBatchMemOpParams> params =
      get_mem_ops(in, count, result, "cuStreamBatchMemOp");
  in.expect_end();
  if (result == CUDA_SUCCESS && real().cuStreamBatchMemOp_v2 == nullptr) {
    result = CUDA_ERROR_NOT_SUPPORTED;
  }
  if (result == CUDA_SUCCESS) {
    result =
        real().cuStreamBatchMemOp_v2(stream, count, count == 0 ? nullptr : params.data(), flags);
  }
  out.put<int32_t>(result);
  return true;
}

}  // namespace gvirtus::cuda
