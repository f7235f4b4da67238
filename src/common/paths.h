// Where gvirtus finds its own files at run time, relative to the running executable or library,
// so that the build tree and any install prefix work without configuration.
#pragma once

#include <filesystem>

namespace gvirtus {

// The directory holding the running executable (/proc/self/exe).
std::filesystem::path executable_dir();

// The directory holding the shared object or executable that contains `address_in_it`.
std::filesystem::path module_dir(const void* address_in_it);

}  // namespace gvirtus
