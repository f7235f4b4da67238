// Kernel parameter layouts from the fatbinary that nvcc embeds in every CUDA program.
//
// The stub sees each fatbinary once, in __cudaRegisterFatBinary(wrapper). It ships the bytes
// fatbin_from_wrapper() returns to the backend unchanged (the backend loads them with
// cudaLibraryLoadData), and it uses kernel_layouts() to learn, per kernel, where each argument
// lives in the parameter buffer, so that cudaLaunchKernel's `void** args` can be packed into one
// flat blob. Every byte is treated as hostile: malformed input throws gvirtus::Error
// (kInvalidInput) saying what was wrong, and nothing is read outside the given span.
// The format facts this relies on are in docs/fatbin.md. Functions are thread-compatible (no
// shared state).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace gvirtus::fatbin {

// One kernel parameter, indexed by ordinal: its byte offset and size in the parameter buffer.
struct ParamInfo {
  uint32_t offset;
  uint32_t size;
  bool operator==(const ParamInfo&) const = default;
};

struct KernelLayout {
  std::string name;               // the mangled name, as __cudaRegisterFunction sees it
  std::vector<ParamInfo> params;  // by ordinal
  uint32_t param_bytes;           // the size of the whole parameter buffer
  bool operator==(const KernelLayout&) const = default;
};

// The fatbinary a __cudaRegisterFatBinary wrapper points to: validates the wrapper's and the
// fatbin header's magic and sizes; returns the bytes [fatbin header, end of last entry].
// The wrapper's pointers are trusted to be readable (they come from the program's own image);
// the sizes in the headers are bounded. Throws gvirtus::Error (kInvalidInput) on anything
// malformed.
std::span<const std::byte> fatbin_from_wrapper(const void* wrapper);

// What kernel_layouts() does with a kernel whose ELF entries disagree on its parameter layout
// (libraries built per architecture do this: CUTLASS's kernels differ between sm_90 and sm_120).
enum class ArchConflicts {
  kRefuse,       // the fatbin is refused: one argument buffer is packed for whichever code the
                 // device runs, so the runtime stub needs one layout (its registry)
  kHighestArch,  // the highest arch's layout is returned: a driver-side reader, which asks the
                 // device for layouts and only needs the image validated (or, on the simulated
                 // device, one layout to record launches by)
};

// The parameter layouts of every kernel in a fatbin (ELF entries preferred; PTX-only kernels from
// their PTX; when several ELFs hold a kernel, the highest arch's, their disagreeing handled as
// `conflicts` says). Sorted by name. Throws gvirtus::Error (kInvalidInput) on malformed input.
std::vector<KernelLayout> kernel_layouts(std::span<const std::byte> fatbin,
                                         ArchConflicts conflicts = ArchConflicts::kRefuse);

// The SM archs (e.g. 90 for sm_90) of the ELF entries, in fatbin order, so a caller can tell
// whether a device has native code. Throws like kernel_layouts.
std::vector<uint32_t> elf_archs(std::span<const std::byte> fatbin);

}  // namespace gvirtus::fatbin
