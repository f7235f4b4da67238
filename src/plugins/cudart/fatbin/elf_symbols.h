// The device variables of a cubin (ELF64): its symbol table's objects in the sections that hold
// device memory (.nv.global*, .nv.constant*), with their sizes. A simulated device places them so
// that cuModuleGetGlobal finds them. Every offset and size is checked against the ELF's bytes;
// malformed input throws Error{kInvalidInput}.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace gvirtus::fatbin {

struct Variable {
  std::string name;
  uint64_t bytes;
  bool operator==(const Variable&) const = default;
};

// The variables of one cubin, in symbol table order.
std::vector<Variable> elf_variables(std::span<const std::byte> elf);

// The variables of every cubin in a fatbin (the highest arch's where several hold one), by name.
std::vector<Variable> fatbin_variables(std::span<const std::byte> fatbin);

}  // namespace gvirtus::fatbin
