// Device variables from a cubin's symbol table (elf_symbols.h). ELF64 layouts: elf(5).
#include "elf_symbols.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <string_view>

#include "bounded.h"
#include "decompress.h"
#include "fatbin_container.h"

namespace gvirtus::fatbin {
namespace {

constexpr uint32_t kSymtab = 2;        // SHT_SYMTAB
constexpr uint8_t kObject = 1;         // STT_OBJECT
constexpr uint64_t kSymbolBytes = 24;  // sizeof(Elf64_Sym)

struct Section {
  uint32_t name, type, link;
  uint64_t offset, size;
};

std::string_view string_at(std::span<const std::byte> table, uint64_t offset, const char* what) {
  if (offset >= table.size()) fail(std::string(what) + " outside its string table");
  const auto* begin = reinterpret_cast<const char*>(table.data()) + offset;
  const void* nul = std::memchr(begin, 0, table.size() - offset);
  if (nul == nullptr) fail(std::string(what) + " without terminator");
  return {begin, static_cast<size_t>(static_cast<const char*>(nul) - begin)};
}

bool holds_device_memory(std::string_view section) {
  return section.starts_with(".nv.global") || section.starts_with(".nv.constant");
}

}  // namespace

std::vector<Variable> elf_variables(std::span<const std::byte> elf) {
  const auto ident = slice(elf, 0, 16, "ELF identification");
  if (std::memcmp(ident.data(),
                  "\x7f"
                  "ELF",
                  4) != 0)
    fail("cubin entry is not an ELF");
  if (ident[4] != std::byte{2} || ident[5] != std::byte{1}) fail("cubin is not ELF64 LE");
  const auto table = read_le<uint64_t>(elf, 0x28, "ELF header");
  const auto header_bytes = read_le<uint16_t>(elf, 0x3a, "ELF header");
  const auto count = read_le<uint16_t>(elf, 0x3c, "ELF header");
  const auto names_index = read_le<uint16_t>(elf, 0x3e, "ELF header");
  if (header_bytes < 0x40) fail("ELF section header size " + std::to_string(header_bytes));
  slice(elf, table, uint64_t{header_bytes} * count, "ELF section headers");
  std::vector<Section> sections;
  for (uint64_t i = 0; i < count; ++i) {
    const auto h = elf.subspan(table + i * header_bytes, header_bytes);
    sections.push_back(
        {read_le<uint32_t>(h, 0, "section header"), read_le<uint32_t>(h, 4, "section header"),
         read_le<uint32_t>(h, 0x28, "section header"), read_le<uint64_t>(h, 0x18, "section header"),
         read_le<uint64_t>(h, 0x20, "section header")});
  }
  if (names_index >= sections.size()) fail("ELF section name table index out of range");
  const auto section_names = slice(elf, sections[names_index].offset, sections[names_index].size,
                                   "ELF section name table");
  std::vector<Variable> out;
  for (const Section& symtab : sections) {
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
      const auto where = string_at(section_names, sections[section].name, "ELF section name");
      if (!holds_device_memory(where)) continue;
      const auto name = string_at(names, read_le<uint32_t>(symbols, at, "symbol"), "symbol name");
      out.push_back({std::string(name), size});
    }
  }
  return out;
}

std::vector<Variable> fatbin_variables(std::span<const std::byte> fatbin) {
  auto entries = fatbin_entries(fatbin);
  std::stable_sort(entries.begin(), entries.end(),
                   [](const Entry& a, const Entry& b) { return a.sm_arch > b.sm_arch; });
  std::map<std::string, uint64_t, std::less<>> found;
  for (const auto& entry : entries) {
    if (entry.kind != static_cast<uint16_t>(EntryKind::kElf)) continue;
    const std::vector<std::byte> plain = entry_bytes(entry);
    for (auto& variable : elf_variables(plain)) found.emplace(variable.name, variable.bytes);
  }
  std::vector<Variable> out;
  for (auto& [name, bytes] : found) out.push_back({name, bytes});
  return out;
}

}  // namespace gvirtus::fatbin
