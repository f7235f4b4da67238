// Modules, kernels and launches on the wire (custom rows 52-55 and 92 of cudart_calls.txt): each
// request starts with its record, defined once here for the stub and the backend
// (common/wire_record.h).
//
// Ids are chosen by the stub (unique within its process) and only ever mean something to the
// backend after the call that introduces them succeeded; the backend rejects any other id.
//
//   cudaModuleLoad     ModuleChunk, then a blob: the chunk              -> i32 result
//                      A module's fatbinary travels in chunks of at most kModuleChunkBytes, in
//                      order; the backend loads it (cudaLibraryLoadData) when the last chunk
//                      arrives and answers cudaSuccess for the ones before.
//   cudaKernelResolve  KernelResolve, string name, KernelLayout, then layout.count ParamSlots
//                                                                       -> i32 result
//                      The layout is the stub's reading of the fatbinary's .nv.info; the backend
//                      checks it against the runtime's own (cudaFuncGetParamInfo).
//   cudaVarResolve     VarResolve, string name        -> i32 result, then on success ResolvedVar
//   cudaLaunch, cudaLaunchCooperative
//                      LaunchRequest, then a blob: the kernel's parameter bytes, each argument at
//                      its offset                     -> i32 result when the launch waits
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <tuple>

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
  static constexpr auto kFields = std::tuple{&VarResolve::module};
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

}  // namespace gvirtus::cudart
