// Test support: the fatbin variants CMake builds from kernels.cu, and reading them.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace gvirtus::fatbin::test {

// The variant names (multi_arch, no_compress, ..., ptx_only*), as tests/fatbin/CMakeLists.txt
// lists them.
std::vector<std::string> variant_names();
// The path of a variant's .fatbin.
std::string variant_path(const std::string& name);
// The bytes of a file; empty when it cannot be read.
std::vector<std::byte> read_file(const std::string& path);
// The cuobjdump to compare with, or "" when the build found none.
std::string cuobjdump_path();

}  // namespace gvirtus::fatbin::test
