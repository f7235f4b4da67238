// Test support: the ground truth, read from cuobjdump's text output. `cuobjdump -elf` prints each
// cubin ("arch = sm_90"), then per kernel a section ".nv.info.<name>" whose attributes
// EIATTR_KPARAM_INFO(_V2) ("Ordinal : 0x1	Offset  : 0x8	Size    : 0x8") and
// EIATTR_CBANK_PARAM_SIZE ("Value:	0x40") give the layout; `cuobjdump -ptx` prints the PTX.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "fatbin.h"

namespace gvirtus::fatbin {
// For readable gtest failures: "name bytes=64: 0/4 8/8 ...".
inline void PrintTo(const KernelLayout& k, std::ostream* out) {
  *out << k.name << " bytes=" << k.param_bytes << ":";
  for (const auto& p : k.params) *out << " " << p.offset << "/" << p.size;
}
}  // namespace gvirtus::fatbin

namespace gvirtus::fatbin::test {

struct ElfTruth {
  uint32_t sm_arch;
  std::map<std::string, KernelLayout> kernels;
};

// The stdout of a shell command, or nullopt when it could not run or exited non-zero.
std::optional<std::string> run_command(const std::string& command);

// Parses `cuobjdump -elf` output: one ElfTruth per cubin, in order.
std::vector<ElfTruth> parse_cuobjdump_elf(const std::string& text);

// The .entry names in `cuobjdump -ptx` output.
std::set<std::string> parse_cuobjdump_ptx_entries(const std::string& text);

}  // namespace gvirtus::fatbin::test
