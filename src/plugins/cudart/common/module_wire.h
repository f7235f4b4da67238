// Modules, kernels and launches on the wire (custom rows 52-56 of cudart_calls.txt).
//
// Ids are chosen by the stub (unique within its process) and only ever mean something to the
// backend after the call that introduces them succeeded; the backend rejects any other id.
//
//   cudaModuleLoad     u64 module id, u64 total bytes, u64 offset, blob chunk  -> i32 result
//                      A module's fatbinary travels in chunks of at most kModuleChunkBytes, in
//                      order; the backend loads it (cudaLibraryLoadData) when the last chunk
//                      arrives and answers cudaSuccess for the ones before.
//   cudaKernelResolve  u64 module id, u64 kernel id, string name, u32 parameter bytes,
//                      u32 count, count x (u32 offset, u32 size)               -> i32 result
//                      The layout is the stub's reading of the fatbinary's .nv.info; the backend
//                      checks it against the runtime's own (cudaFuncGetParamInfo).
//   cudaVarResolve     u64 module id, string name      -> i32 result, u64 address, u64 bytes
//   cudaLaunch(Sync)   u64 kernel id, u32 grid x y z, u32 block x y z, u64 shared bytes,
//                      u64 stream, blob parameters (the kernel's parameter bytes, each
//                      argument at its offset)                      -> (Sync only) i32 result
#pragma once

#include <cstddef>
#include <cstdint>

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

}  // namespace gvirtus::cudart
