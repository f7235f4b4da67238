// Device variables from a cubin's symbol table (elf_symbols.h). ELF64 layouts: elf(5).
#include "elf_symbols.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <string_view>

#include "bounded.h"
#include "decompress.h"
#include "elf_sections.h"
#include "fatbin_container.h"

namespace gvirtus::fatbin {
namespace {

constexpr uint32_t kSymtab = 2;        // SHT_SYMTAB
constexpr uint32_t kProgbits = 1;      // SHT_PROGBITS: a section with bytes in the file
constexpr uint8_t kObject = 1;         // STT_OBJECT
constexpr uint64_t kSymbolBytes = 24;  // sizeof(Elf64_Sym)

bool holds_device_memory(std::string_view section) {
  return section.starts_with(".nv.global") || section.starts_with(".nv.constant");
}

}  // namespace

std::vector<Variable> elf_variables(std::span<const std::byte> elf) {
  const ElfSections all = elf_sections(elf);
  const auto& sections = all.sections;
  std::vector<Variable> out;
  for (const ElfSection& symtab : sections) {
    if (symtab.type != kSymtab) continue;
    if (symtab.link >= sections.size()) fail("ELF symbol table's string table out of range");
    const auto symbols = slice(elf, symtab.offset, symtab.size, "ELF symbol table");
    const auto names =
        slice(elf, sections[symtab.link].offset, sections[symtab.link].size, "ELF symbol names");
    for (uint64_t at = 0; at + kSymbolBytes <= symbols.size(); at += kSymbolBytes) {
      const auto info = read_le<uint8_t>(symbols, at + 4, "symbol");
      const auto section = read_le<uint16_t>(symbols, at + 6, "symbol");
      const auto size = read_le<uint64_t>(symbols, at + 16, "symbol");
      if ((info & 0xf) != kObject || size == 0 || section >= sections.size()) continue;
      const auto where = elf_string(all.names, sections[section].name, "ELF section name");
      if (!holds_device_memory(where)) continue;
      const auto name = elf_string(names, read_le<uint32_t>(symbols, at, "symbol"), "symbol name");
      Variable variable{std::string(name), size, {}};
      // Its place in its section (st_value); a section without bytes starts zeroed.
      const ElfSection& home = sections[section];
      const auto value = read_le<uint64_t>(symbols, at + 8, "symbol");
      if (home.type == kProgbits && value <= home.size && size <= home.size - value) {
        const auto bytes = slice(elf, home.offset + value, size, "a variable's initial value");
        variable.initial.assign(bytes.begin(), bytes.end());
      }
      out.push_back(std::move(variable));
    }
  }
  return out;
}

std::vector<Variable> fatbin_variables(std::span<const std::byte> fatbin) {
  auto entries = fatbin_entries(fatbin);
  std::stable_sort(entries.begin(), entries.end(),
                   [](const Entry& a, const Entry& b) { return a.sm_arch > b.sm_arch; });
  std::map<std::string, Variable, std::less<>> found;
  for (const auto& entry : entries) {
    if (entry.kind != static_cast<uint16_t>(EntryKind::kElf)) continue;
    const std::vector<std::byte> plain = entry_bytes(entry);
    for (auto& variable : elf_variables(plain)) found.emplace(variable.name, std::move(variable));
  }
  std::vector<Variable> out;
  for (auto& [name, variable] : found) out.push_back(std::move(variable));
  return out;
}

}  // namespace gvirtus::fatbin
