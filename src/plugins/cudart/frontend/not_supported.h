// The stub's answer for a CUDA runtime function that gvirtus does not implement. Every function
// NVIDIA's libcudart.so.13 exports is exported by the stub (an application never fails on an
// undefined symbol); those without an implementation are generated as calls to not_supported().
//
// This header deliberately includes no CUDA header: the generated definitions declare the
// functions without their prototypes.
#pragma once

#include <atomic>

namespace gvirtus::cudart {

// Logs "NAME is not supported by gvirtus" once per function (at warning level), records
// cudaErrorNotSupported as the calling thread's last error, and returns it (as an int, the value
// of cudaErrorNotSupported). `logged` is the function's own flag.
int not_supported(const char* name, std::atomic<bool>& logged);

}  // namespace gvirtus::cudart
