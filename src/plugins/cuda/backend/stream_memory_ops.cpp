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

namespace gvirtus::cuda {
namespace {

// The bytes of the word an operation touches; 0 for one without a word; nullopt for one the
// driver does not define.
std::optional<uint64_t> word_bytes(uint32_t operation) {
  switch (operation) {
    case CU_STREAM_MEM_OP_WAIT_VALUE_32:
    case CU_STREAM_MEM_OP_WRITE_VALUE_32:
      return 4;
    case CU_STREAM_MEM_OP_WAIT_VALUE_64:
    case CU_STREAM_MEM_OP_WRITE_VALUE_64:
      return 8;
    case CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES:
    case CU_STREAM_MEM_OP_BARRIER:
      return 0;
    default:
      return std::nullopt;
  }
}

// A wait's or a write's part of the union (the two have one layout): its word, value and flags.
template <typename Part>
void set_word(Part& part, const MemOpRecord& r, bool wide) {
  part.address = r.address;
  part.value64 = r.value;
  if (!wide) part.value = static_cast<cuuint32_t>(r.value);
  part.flags = r.flags;
}

CUstreamBatchMemOpParams params_of(const MemOpRecord& r) {
  CUstreamBatchMemOpParams p{};
  p.operation = static_cast<CUstreamBatchMemOpType>(r.operation);
  switch (r.operation) {
    case CU_STREAM_MEM_OP_WAIT_VALUE_32:
    case CU_STREAM_MEM_OP_WAIT_VALUE_64:
      set_word(p.waitValue, r, r.operation == CU_STREAM_MEM_OP_WAIT_VALUE_64);
      break;
    case CU_STREAM_MEM_OP_WRITE_VALUE_32:
    case CU_STREAM_MEM_OP_WRITE_VALUE_64:
      set_word(p.writeValue, r, r.operation == CU_STREAM_MEM_OP_WRITE_VALUE_64);
      break;
    case CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES:
      p.flushRemoteWrites.flags = r.flags;
      break;
    default:  // CU_STREAM_MEM_OP_BARRIER
      p.memoryBarrier.flags = r.flags;
      break;
  }
  return p;
}

}  // namespace

bool run_stream_memory_ops(Fn fn, WireReader& in, WireWriter& out, CUresult& result) {
  if (fn != Fn::cuStreamBatchMemOp_v2) return false;
  const auto stream = marshal::get_value<CUstream>(in);
  const auto flags = in.get<uint32_t>();
  const auto count = in.get<uint32_t>();
  if (count > kMaxBatchMemOps) {
    raise(ErrorKind::kInvalidInput,
          "cuStreamBatchMemOp: " + std::to_string(count) + " operations exceed the limit");
  }
  std::vector<CUstreamBatchMemOpParams> params;
  params.reserve(count);
  result = vet(stream);
  for (uint32_t i = 0; i < count; ++i) {
    const auto record = get_record<MemOpRecord>(in);
    const auto bytes = word_bytes(record.operation);
    if (!bytes) {
      raise(ErrorKind::kInvalidInput, "cuStreamBatchMemOp: operation " +
                                          std::to_string(record.operation) +
                                          " is not the driver's");
    }
    if (result == CUDA_SUCCESS && *bytes != 0) result = vet_device_pointer(record.address, *bytes);
    params.push_back(params_of(record));
  }
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
