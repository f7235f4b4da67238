// cudaGetErrorName / cudaGetErrorString, answered locally with NVIDIA's own text (a table made at
// build time from the real runtime by tools/gen/dump_cuda_errors).
#include "plugins/cudart/frontend/stub_call.h"

namespace {

struct ErrorText {
  int code;
  const char* name;
  const char* text;
};

constexpr ErrorText kErrors[] = {
#define GVIRTUS_CUDA_ERROR(code, name, text) {code, name, text},
#include "plugins/cudart/cuda_errors.inc"
#undef GVIRTUS_CUDA_ERROR
};

const ErrorText* find(cudaError_t error) {
  for (const ErrorText& e : kErrors) {
    if (e.code == static_cast<int>(error)) return &e;
  }
  return nullptr;
}

}  // namespace

GVIRTUS_CUDART_EXPORT const char* cudaGetErrorName(cudaError_t error) {
  const ErrorText* e = find(error);
  return e != nullptr ? e->name : GVIRTUS_UNKNOWN_ERROR_NAME;
}

GVIRTUS_CUDART_EXPORT const char* cudaGetErrorString(cudaError_t error) {
  const ErrorText* e = find(error);
  return e != nullptr ? e->text : GVIRTUS_UNKNOWN_ERROR_STRING;
}
