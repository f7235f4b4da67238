// The stub's dynamic exports, read with readelf exactly as the dynamic linker will see them, are
// NVIDIA's: same names, versions, symbol types and SONAME, and nothing of gvirtus's own leaks.
#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <sstream>
#include <string>

namespace {

std::string run(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return {};
  std::string out;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  EXPECT_EQ(pclose(pipe), 0) << command;
  return out;
}

std::string readelf(const char* options, const char* library) {
  return run(std::string(GVIRTUS_READELF) + " -W " + options + " " + library);
}

// "name@@version TYPE" of every defined global or weak symbol in .dynsym.
std::set<std::string> defined_exports(const char* library) {
  std::set<std::string> exports;
  std::istringstream lines(readelf("--dyn-syms", library));
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string num, value, size, type, bind, vis, ndx, name;
    if (!(fields >> num >> value >> size >> type >> bind >> vis >> ndx >> name)) continue;
    if (ndx == "UND" || (bind != "GLOBAL" && bind != "WEAK")) continue;
    exports.insert(name + " " + type);
  }
  return exports;
}

// The lines of one readelf listing that mention `key` and `also`, from `key` on (addresses and
// offsets before it differ between any two libraries).
std::set<std::string> lines_with(const std::string& text, const std::string& key,
                                 const std::string& also = "") {
  std::set<std::string> found;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const auto at = line.find(key);
    if (at != std::string::npos && line.find(also) != std::string::npos) {
      found.insert(line.substr(at));
    }
  }
  return found;
}

std::string difference(const std::set<std::string>& a, const std::set<std::string>& b) {
  std::string out;
  for (const auto& s : a) {
    if (!b.count(s)) out += "  " + s + "\n";
  }
  return out;
}

TEST(StubExports, stub_symbol_set_with_versions_equals_nvidias) {
  const auto stub = defined_exports(GVIRTUS_STUB_LIBRARY);
  const auto nvidia = defined_exports(GVIRTUS_NVIDIA_CUDART);
  ASSERT_GT(nvidia.size(), 100u) << "could not read " << GVIRTUS_NVIDIA_CUDART;
  EXPECT_EQ(difference(nvidia, stub), "") << "NVIDIA exports these, the stub does not";
  EXPECT_EQ(difference(stub, nvidia), "") << "the stub exports these, NVIDIA does not";
}

TEST(StubExports, stub_version_definitions_equal_nvidias) {
  // .gnu.version_d: "Flags: BASE  Index: 1  Cnt: 1  Name: libcudart.so.13" and the node itself.
  const auto stub = lines_with(readelf("-V", GVIRTUS_STUB_LIBRARY), "Flags:", "Index:");
  const auto nvidia = lines_with(readelf("-V", GVIRTUS_NVIDIA_CUDART), "Flags:", "Index:");
  ASSERT_FALSE(nvidia.empty());
  EXPECT_EQ(stub, nvidia);
}

TEST(StubExports, stub_soname_equals_nvidias) {
  const auto stub = lines_with(readelf("-d", GVIRTUS_STUB_LIBRARY), "Library soname:");
  const auto nvidia = lines_with(readelf("-d", GVIRTUS_NVIDIA_CUDART), "Library soname:");
  EXPECT_EQ(nvidia, std::set<std::string>{"Library soname: [libcudart.so.13]"});
  EXPECT_EQ(stub, nvidia);
}

TEST(StubExports, stub_leaks_no_cxx_or_gvirtus_symbol) {
  for (const auto& symbol : defined_exports(GVIRTUS_STUB_LIBRARY)) {
    if (symbol == "libcudart.so.13 OBJECT") continue;  // the version node itself
    EXPECT_NE(symbol.rfind("_Z", 0), 0u) << "C++ symbol exported: " << symbol;
    EXPECT_EQ(symbol.find("gvirtus"), std::string::npos) << "gvirtus symbol exported: " << symbol;
    EXPECT_NE(symbol.find("@@libcudart.so.13 "), std::string::npos) << "unversioned: " << symbol;
  }
}

}  // namespace
