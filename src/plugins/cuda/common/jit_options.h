// JIT options (CUjit_option with their values) on the wire, for every call that loads code with
// them: cuModuleLoadDataEx, cuLibraryLoadData (and cuLink* to come). Options are pointers' worth of
// data in the caller's memory, some of them outputs:
//   - scalars (registers, optimisation level, target, cache mode, ...): the value travels in;
//   - CU_JIT_INFO_LOG_BUFFER / CU_JIT_ERROR_LOG_BUFFER: a buffer of the caller's, whose size is
//     the matching *_SIZE_BYTES option; the backend compiles into a buffer of its own of that size
//     and the bytes travel back (at most kMaxJitLogBytes each);
//   - *_SIZE_BYTES: in, the buffer's size; out, the bytes written;
//   - CU_JIT_WALL_TIME: out, a float in the value slot itself.
// Options that name host memory other than logs (global symbol addresses, referenced names) have
// no meaning on another machine: the stub refuses them (CUDA_ERROR_NOT_SUPPORTED), never drops
// them.
//
// Request: u32 count, then count times {u32 option, u64 value}. Reply (after the call's own
// outputs): count times u64 value, then a blob per log buffer option, in order.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/wire.h"

namespace gvirtus::cuda {

inline constexpr uint32_t kMaxJitOptions = 64;
inline constexpr uint64_t kMaxJitLogBytes = uint64_t{1} << 20;

struct JitOption {
  CUjit_option option;
  uint64_t value;
};

// The stub's side: whether it can send these options (CUDA_SUCCESS, or why not), and the sending.
CUresult check_jit_options(const CUjit_option* options, void* const* values, unsigned count);
void put_jit_options(WireWriter& out, const CUjit_option* options, void* const* values,
                     unsigned count);
// Writes the reply's outputs into the caller's values and log buffers. Throws Error{kInvalidInput}
// on a reply of the wrong shape.
// `capacities` (the values as the caller first gave them; default: `values` as they are now)
// says how large each log buffer is: a link's size options are outputs too, overwritten with the
// bytes each call filled, so its buffers' sizes are the ones cuLinkCreate was given.
void get_jit_outputs(WireReader& in, const CUjit_option* options, void** values, unsigned count,
                     void* const* capacities = nullptr);

// The backend's side: the options as the driver takes them, with log buffers of our own.
class JitOptions {
 public:
  // Throws Error{kInvalidInput} on malformed or refused options.
  explicit JitOptions(WireReader& in);
  CUjit_option* options() { return options_.empty() ? nullptr : options_.data(); }
  void** values() { return values_.empty() ? nullptr : values_.data(); }
  unsigned count() const { return static_cast<unsigned>(options_.size()); }
  // The outputs, after the call.
  void put_outputs(WireWriter& out) const;

 private:
  std::vector<CUjit_option> options_;
  std::vector<void*> values_;
  std::vector<std::vector<char>> logs_;  // one per log buffer option, in order
};

}  // namespace gvirtus::cuda
