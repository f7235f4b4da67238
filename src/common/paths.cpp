#include "common/paths.h"

#include <dlfcn.h>

#include <system_error>

namespace gvirtus {

std::filesystem::path executable_dir() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path(".") : exe.parent_path();
}

std::filesystem::path module_dir(const void* address_in_it) {
  Dl_info info{};
  if (::dladdr(address_in_it, &info) == 0 || info.dli_fname == nullptr) return executable_dir();
  std::error_code ec;
  const auto path = std::filesystem::canonical(info.dli_fname, ec);
  return ec ? std::filesystem::path(info.dli_fname).parent_path() : path.parent_path();
}

}  // namespace gvirtus
