// JIT options on the wire (jit_options.h).
#include "plugins/cuda/common/jit_options.h"

#include <algorithm>
#include <cstring>

#include "common/error.h"

namespace gvirtus::cuda {
namespace {

bool is_log_buffer(CUjit_option option) {
  return option == CU_JIT_INFO_LOG_BUFFER || option == CU_JIT_ERROR_LOG_BUFFER;
}

CUjit_option size_option_of(CUjit_option log) {
  return log == CU_JIT_INFO_LOG_BUFFER ? CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES
                                       : CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES;
}

// Options whose value points into host memory that is not a log: meaningless on the backend.
bool names_host_memory(CUjit_option option) {
  switch (option) {
    case CU_JIT_GLOBAL_SYMBOL_NAMES:
    case CU_JIT_GLOBAL_SYMBOL_ADDRESSES:
    case CU_JIT_REFERENCED_KERNEL_NAMES:
    case CU_JIT_REFERENCED_VARIABLE_NAMES:
      return true;
    default:
      return false;
  }
}

uint64_t value_bits(void* value) {
  return reinterpret_cast<uintptr_t>(value);
}

}  // namespace

CUresult check_jit_options(const CUjit_option* options, void* const* values, unsigned count) {
  if (count == 0) return CUDA_SUCCESS;
  if (options == nullptr || values == nullptr || count > kMaxJitOptions) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  for (unsigned i = 0; i < count; ++i) {
    if (options[i] < 0 || options[i] >= CU_JIT_NUM_OPTIONS) return CUDA_ERROR_INVALID_VALUE;
    if (names_host_memory(options[i])) return CUDA_ERROR_NOT_SUPPORTED;
  }
  return CUDA_SUCCESS;
}

void put_jit_options(WireWriter& out, const CUjit_option* options, void* const* values,
                     unsigned count) {
  out.put<uint32_t>(count);
  for (unsigned i = 0; i < count; ++i) {
    out.put<uint32_t>(static_cast<uint32_t>(options[i]));
    out.put<uint64_t>(value_bits(values[i]));
  }
}

void get_jit_outputs(WireReader& in, const CUjit_option* options, void** values, unsigned count,
                     void* const* capacities) {
  std::vector<uint64_t> returned(count);
  for (unsigned i = 0; i < count; ++i) returned[i] = in.get<uint64_t>();
  // No log is longer than the caller's buffer: the size option it gave, read before it changes.
  void* const* sizes = capacities != nullptr ? capacities : values;
  auto capacity_of = [&, original = std::vector<void*>(sizes, sizes + count)](CUjit_option log) {
    uint64_t capacity = 0;
    for (unsigned j = 0; j < count; ++j) {
      if (options[j] == size_option_of(log)) capacity = value_bits(original[j]) & 0xffffffffu;
    }
    return std::min(capacity, kMaxJitLogBytes);
  };
  for (unsigned i = 0; i < count; ++i) {
    const CUjit_option option = options[i];
    if (is_log_buffer(option)) {
      const auto log = in.get_blob(capacity_of(option));
      if (values[i] != nullptr && !log.empty()) std::memcpy(values[i], log.data(), log.size());
    } else if (option == CU_JIT_WALL_TIME || option == CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES ||
               option == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES) {
      values[i] = reinterpret_cast<void*>(static_cast<uintptr_t>(returned[i]));
    }
  }
}

JitOptions::JitOptions(WireReader& in) {
  const uint32_t count = in.get<uint32_t>();
  if (count > kMaxJitOptions) raise(ErrorKind::kInvalidInput, "too many JIT options");
  options_.resize(count);
  values_.resize(count);
  for (uint32_t i = 0; i < count; ++i) {
    const uint32_t option = in.get<uint32_t>();
    if (option >= CU_JIT_NUM_OPTIONS || names_host_memory(static_cast<CUjit_option>(option))) {
      raise(ErrorKind::kInvalidInput, "JIT option " + std::to_string(option) + " refused");
    }
    options_[i] = static_cast<CUjit_option>(option);
    values_[i] = reinterpret_cast<void*>(static_cast<uintptr_t>(in.get<uint64_t>()));
  }
  // Each log buffer becomes one of ours, as large as its size option says (bounded).
  for (uint32_t i = 0; i < count; ++i) {
    if (!is_log_buffer(options_[i])) continue;
    uint64_t size = 0;
    for (uint32_t j = 0; j < count; ++j) {
      if (options_[j] == size_option_of(options_[i])) {
        size = reinterpret_cast<uintptr_t>(values_[j]) & 0xffffffffu;  // an unsigned int
      }
    }
    logs_.emplace_back(std::min(size, kMaxJitLogBytes), '\0');
    values_[i] = logs_.back().empty() ? nullptr : logs_.back().data();
  }
  // The sizes the driver writes back must not exceed our buffers.
  for (uint32_t j = 0; j < count; ++j) {
    if (options_[j] == CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES ||
        options_[j] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES) {
      const uint64_t size = reinterpret_cast<uintptr_t>(values_[j]) & 0xffffffffu;
      values_[j] = reinterpret_cast<void*>(static_cast<uintptr_t>(std::min(size, kMaxJitLogBytes)));
    }
  }
}

void JitOptions::put_outputs(WireWriter& out) const {
  for (size_t i = 0; i < values_.size(); ++i) {
    out.put<uint64_t>(is_log_buffer(options_[i]) ? 0 : value_bits(values_[i]));  // not our address
  }
  size_t log = 0;
  for (const CUjit_option option : options_) {
    if (!is_log_buffer(option)) continue;
    const auto& buffer = logs_[log++];
    out.put_blob(buffer.data(), buffer.size());
  }
}

}  // namespace gvirtus::cuda
