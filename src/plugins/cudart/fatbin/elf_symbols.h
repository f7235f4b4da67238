// The device variables of a cubin (ELF64): its symbol table's objects in the sections that hold
// device memory (.nv.global*, .nv.constant*), with their sizes and, for those in a section with
// bytes (an initialised one: .nv.global.init, .nv.constant*), their initial values. A simulated
// device places them so that cuModuleGetGlobal finds them, as the image initialises them. Every
// offset and size is checked against the ELF's bytes; malformed input throws Error{kInvalidInput}.
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
  std::vector<std::byte> initial;  // its first bytes as the image gives them; empty: all zero
  bool operator==(const Variable&) const = default;
};

// The variables of one cubin, in symbol table order.
std::vector<Variable> elf_variables(std::span<const std::byte> elf);

// The variables of every cubin in a fatbin (the highest arch's where several hold one), by name.
std::vector<Variable> fatbin_variables(std::span<const std::byte> fatbin);

}  // namespace gvirtus::fatbin
