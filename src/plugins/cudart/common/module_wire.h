// Modules, kernels and launches on the wire (custom rows 52-55 and 92 of cudart_calls.txt): each
// request starts with its record, defined once here for the stub and the backend
// (common/wire_record.h).
//
// Ids are chosen by the stub (unique within its process) and only ever mean something to the
// backend after the call that introduces them succeeded; the backend rejects any other id.
//
//   cudaModuleLoad     ModuleChunk, a blob: the chunk, then JIT options (cuda/common/jit_options.h;
//                      a library's, on its last chunk; none otherwise) -> i32 result, then after
//                      the last chunk the options' outputs
//                      A module's fatbinary travels in chunks of at most kModuleChunkBytes, in
//                      order; the backend loads it (cudaLibraryLoadData, with the options) when
//                      the last chunk arrives and answers cudaSuccess for the ones before.
//   cudaModuleUnload   u64 module                     -> i32 result
//                      A module the program loaded as a library (cudaLibraryLoadData) goes; its
//                      kernels' launches name no kernel from then on. Its id is never reused.
//   cudaKernelResolve  KernelResolve, string name, KernelLayout, then layout.count ParamSlots
//                                                                       -> i32 result
//                      The layout is the stub's reading of the fatbinary's .nv.info; the backend
//                      checks it against the runtime's own (cudaFuncGetParamInfo).
//   cudaGetFuncBySymbol u64 kernel id (a resolved one)  -> i32 result, then on success u64 the
//                      kernel's function in the current context (the driver's CUfunction)
//   cudaVarResolve     VarResolve, string name        -> i32 result, then on success ResolvedVar
//                      (a managed variable's is managed memory the client mirrors)
//   cudaLaunch, cudaLaunchCooperative
//                      LaunchRequest, then a blob: the kernel's parameter bytes, each argument at
//                      its offset                     -> i32 result when the launch waits
//   cudaOccupancyMaxActiveClusters, cudaOccupancyMaxPotentialClusterSize
//                      LaunchRequest (the kernel and the configuration's dimensions, dynamic
//                      shared memory and stream), u8 attributes given, then the attributes
//                      (put_launch_attributes) when given -> i32 result, then on success i32 the
//                      answer
//   cudaLaunchEx       cudaLaunchKernelExC with attributes: LaunchRequest, the attributes
//                      (put_launch_attributes), then the parameter bytes' blob -> i32 result
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <vector>

#include "common/error.h"
#include "common/wire.h"

namespace gvirtus::cudart {

inline constexpr size_t kModuleChunkBytes = size_t{16} << 20;
// A bound on one session's module bytes, so a client cannot make its worker hoard memory.
inline constexpr uint64_t kMaxModuleBytes = uint64_t{2} << 30;
// CUDA 12.1+ allows up to 32764 bytes of kernel parameters.
inline constexpr uint32_t kMaxParamBytes = 32764;
inline constexpr size_t kMaxSymbolNameBytes = 4096;
// Bounds on how many module and kernel ids one session may introduce (a program has a handful of
// modules and at most thousands of kernels), so that ids alone cannot grow a worker's tables.
inline constexpr size_t kMaxModulesPerSession = 4096;
inline constexpr size_t kMaxKernelsPerSession = 65536;
// A launch's attributes: CUDA defines fewer than 32 kinds, each given at most once.
inline constexpr uint32_t kMaxLaunchAttributes = 32;

struct ModuleChunk {
  uint64_t module;  // the module's id
  uint64_t total;   // the fatbinary's bytes
  uint64_t offset;  // where this chunk starts
  static constexpr auto kFields =
      std::tuple{&ModuleChunk::module, &ModuleChunk::total, &ModuleChunk::offset};
};

struct KernelResolve {
  uint64_t module;
  uint64_t kernel;  // the id the stub gives the kernel
  static constexpr auto kFields = std::tuple{&KernelResolve::module, &KernelResolve::kernel};
};

struct KernelLayout {
  uint32_t param_bytes;
  uint32_t count;  // ParamSlots that follow
  static constexpr auto kFields = std::tuple{&KernelLayout::param_bytes, &KernelLayout::count};
};

struct ParamSlot {
  uint32_t offset;
  uint32_t size;
  static constexpr auto kFields = std::tuple{&ParamSlot::offset, &ParamSlot::size};
};

struct VarResolve {
  uint64_t module;
  uint8_t managed;  // 1: a managed variable (cudaLibraryGetManaged), 0: cudaLibraryGetGlobal's
  static constexpr auto kFields = std::tuple{&VarResolve::module, &VarResolve::managed};
};

struct ResolvedVar {
  uint64_t address;
  uint64_t bytes;
  static constexpr auto kFields = std::tuple{&ResolvedVar::address, &ResolvedVar::bytes};
};

struct LaunchDims {
  uint32_t x, y, z;
};

struct LaunchRequest {
  uint64_t kernel;
  LaunchDims grid;
  LaunchDims block;
  uint64_t shared_bytes;
  cudaStream_t stream;
  static constexpr auto kFields =
      std::tuple{&LaunchRequest::kernel, &LaunchRequest::grid, &LaunchRequest::block,
                 &LaunchRequest::shared_bytes, &LaunchRequest::stream};
};

// A launch's attributes: u32 count (1..kMaxLaunchAttributes), then each as its id's i32 bits and
// its value's bytes (cudaLaunchAttributeValue: what the value names is vetted by the backend).
inline void put_launch_attributes(WireWriter& w, const cudaLaunchAttribute* attributes,
                                  uint32_t count) {
  w.put<uint32_t>(count);
  for (uint32_t i = 0; i < count; ++i) {
    int32_t bits = 0;
    static_assert(sizeof bits == sizeof attributes[i].id);
    std::memcpy(&bits, &attributes[i].id, sizeof bits);
    w.put<int32_t>(bits);
    w.put_raw(&attributes[i].val, sizeof attributes[i].val);
  }
}

// The backend's reading: a count out of range is malformed input.
inline std::vector<cudaLaunchAttribute> get_launch_attributes(WireReader& in) {
  const uint32_t count = in.get<uint32_t>();
  if (count == 0 || count > kMaxLaunchAttributes) {
    raise(ErrorKind::kInvalidInput, "a launch names " + std::to_string(count) +
                                        " attributes (1 to " +
                                        std::to_string(kMaxLaunchAttributes) + ")");
  }
  std::vector<cudaLaunchAttribute> attributes(count);
  for (cudaLaunchAttribute& a : attributes) {
    const int32_t bits = in.get<int32_t>();
    std::memcpy(&a.id, &bits, sizeof bits);
    std::memcpy(&a.val, in.get_raw(sizeof a.val).data(), sizeof a.val);
  }
  return attributes;
}

}  // namespace gvirtus::cudart
