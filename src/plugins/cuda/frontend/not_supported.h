// What an export of the client libcuda.so.1 that gvirtus does not implement does: logs its name
// once and returns CUDA_ERROR_NOT_SUPPORTED. The generated cuda_not_supported.cpp calls it (the
// descriptor's exports.not_supported); it cannot include cuda.h, whose prototypes would clash
// with its parameterless definitions, so the status travels as an int.
#pragma once

#include <atomic>

namespace gvirtus::cuda {

int not_supported(const char* name, std::atomic<bool>& logged);

}  // namespace gvirtus::cuda
