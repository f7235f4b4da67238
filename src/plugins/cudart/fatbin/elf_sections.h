// The section headers of a cubin (ELF64, little-endian), read from hostile bytes: the one reading
// of the ELF layout that the kernel-layout and variable parsers share. Every offset and size is
// checked against the ELF's bytes; malformed input throws Error{kInvalidInput}. Layout: elf(5).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace gvirtus::fatbin {

struct ElfSection {
  uint32_t name;  // offset in the section name table
  uint32_t type;  // SHT_*
  uint32_t link;  // for a symbol table: its string table's index
  uint64_t offset;
  uint64_t size;
};

struct ElfSections {
  std::vector<ElfSection> sections;
  std::span<const std::byte> names;  // the section name table's bytes
};

// Every section header of `elf`, and its section name table.
ElfSections elf_sections(std::span<const std::byte> elf);

// The NUL-terminated string at `offset` of a string table; `what` names it in errors.
std::string_view elf_string(std::span<const std::byte> table, uint64_t offset, const char* what);

}  // namespace gvirtus::fatbin
