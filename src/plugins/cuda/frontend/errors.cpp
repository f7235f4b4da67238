// cuGetErrorName and cuGetErrorString in the client libcuda.so.1, answered locally: a program
// asks them most when the backend is the problem. Names are cuda.h's; texts are the runtime's for
// the same code (tools/gen/gen_driver_errors.py says why). A code the driver does not know gets
// CUDA_ERROR_INVALID_VALUE and a null string, as from the driver.
#include <cuda.h>

#include "common/error_texts.h"

namespace {

using gvirtus::ErrorText;

constexpr ErrorText kErrors[] = {
#define GVIRTUS_DRIVER_ERROR(code, name, text) {code, name, text},
#include "cuda_driver_errors.inc"
#undef GVIRTUS_DRIVER_ERROR
};

template <const char* ErrorText::*kField>
CUresult lookup(CUresult error, const char** out) {
  if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const ErrorText* e = gvirtus::find_error(kErrors, static_cast<int>(error));
  *out = e != nullptr ? e->*kField : nullptr;
  return e != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) CUresult cuGetErrorName(CUresult error,
                                                                          const char** pStr) {
  return lookup<&ErrorText::name>(error, pStr);
}

extern "C" __attribute__((visibility("default"))) CUresult cuGetErrorString(CUresult error,
                                                                            const char** pStr) {
  return lookup<&ErrorText::text>(error, pStr);
}
