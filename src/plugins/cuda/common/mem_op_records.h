// Stream memory operations (CUstreamBatchMemOpParams) as they travel (driver_wire.h's
// MemOpRecord), both ways, for the stub and the backend: cuStreamBatchMemOp's batches and batch
// memory operation graph nodes.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <cstring>
#include <optional>

#include "plugins/cuda/common/driver_wire.h"

namespace gvirtus::cuda {

// The record of one operation, or false for one the driver does not define (or, in the first
// ABI, the barrier it lacks).
inline bool mem_op_record(const CUstreamBatchMemOpParams& p, bool barrier_allowed, MemOpRecord& r) {
  // The operation read as the integer it is: an application's value may be none of the enum's.
  uint32_t operation = 0;
  std::memcpy(&operation, &p, sizeof operation);
  r = MemOpRecord{operation, 0, 0, 0};
  switch (operation) {
    case CU_STREAM_MEM_OP_WAIT_VALUE_32:
      r.address = p.waitValue.address, r.value = p.waitValue.value, r.flags = p.waitValue.flags;
      return true;
    case CU_STREAM_MEM_OP_WAIT_VALUE_64:
      r.address = p.waitValue.address, r.value = p.waitValue.value64, r.flags = p.waitValue.flags;
      return true;
    case CU_STREAM_MEM_OP_WRITE_VALUE_32:
      r.address = p.writeValue.address, r.value = p.writeValue.value, r.flags = p.writeValue.flags;
      return true;
    case CU_STREAM_MEM_OP_WRITE_VALUE_64:
      r.address = p.writeValue.address, r.value = p.writeValue.value64;
      r.flags = p.writeValue.flags;
      return true;
    case CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES:
      r.flags = p.flushRemoteWrites.flags;
      return true;
    case CU_STREAM_MEM_OP_BARRIER:
      r.flags = p.memoryBarrier.flags;
      return barrier_allowed;
    default:
      return false;
  }
}

// The bytes of the word an operation touches; 0 for one without a word; nullopt for one the
// driver does not define.
inline std::optional<uint64_t> mem_op_word_bytes(uint32_t operation) {
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

// The driver's form of a record of an operation it defines (mem_op_word_bytes has a value).
inline CUstreamBatchMemOpParams mem_op_params(const MemOpRecord& r) {
  CUstreamBatchMemOpParams p{};
  std::memcpy(&p, &r.operation, sizeof r.operation);  // the operation's bits, as given
  // A wait's or a write's part of the union (the two have one layout): its word, value and flags.
  const auto set_word = [&](auto& part, bool wide) {
    part.address = r.address;
    part.value64 = r.value;
    if (!wide) part.value = static_cast<cuuint32_t>(r.value);
    part.flags = r.flags;
  };
  switch (r.operation) {
    case CU_STREAM_MEM_OP_WAIT_VALUE_32:
    case CU_STREAM_MEM_OP_WAIT_VALUE_64:
      set_word(p.waitValue, r.operation == CU_STREAM_MEM_OP_WAIT_VALUE_64);
      break;
    case CU_STREAM_MEM_OP_WRITE_VALUE_32:
    case CU_STREAM_MEM_OP_WRITE_VALUE_64:
      set_word(p.writeValue, r.operation == CU_STREAM_MEM_OP_WRITE_VALUE_64);
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

}  // namespace gvirtus::cuda
