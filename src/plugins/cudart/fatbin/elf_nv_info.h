// Kernel parameter layouts from a cubin (ELF64) entry: every section ".nv.info.<kernel>" holds
// attributes; EIATTR_KPARAM_INFO(_V2) gives each parameter's ordinal, offset and size and
// EIATTR_CBANK_PARAM_SIZE / EIATTR_PARAM_CBANK the parameter buffer's size. Encoding:
// docs/fatbin.md. Every offset and size in the ELF is checked against the ELF's bytes.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "fatbin.h"

namespace gvirtus::fatbin {

// Every kernel of the cubin (those with a .nv.info.<name> section, parameterless ones included),
// in section order. Throws Error{kInvalidInput} on a malformed ELF or attribute list.
std::vector<KernelLayout> elf_kernel_layouts(std::span<const std::byte> elf);

}  // namespace gvirtus::fatbin
