#include "fatbin/fatbin_files.h"

#include <fstream>
#include <iterator>
#include <sstream>

namespace gvirtus::fatbin::test {

std::vector<std::string> variant_names() {
  std::vector<std::string> names;
  std::istringstream list(GVIRTUS_FATBIN_VARIANTS);
  for (std::string name; std::getline(list, name, ',');) names.push_back(name);
  return names;
}

std::string variant_path(const std::string& name) {
  return std::string(GVIRTUS_FATBIN_DIR) + "/" + name + ".fatbin";
}

std::vector<std::byte> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::vector<char> chars((std::istreambuf_iterator<char>(in)), {});
  const auto* begin = reinterpret_cast<const std::byte*>(chars.data());
  return {begin, begin + chars.size()};
}

std::string cuobjdump_path() {
  return GVIRTUS_CUOBJDUMP_PATH;
}

}  // namespace gvirtus::fatbin::test
