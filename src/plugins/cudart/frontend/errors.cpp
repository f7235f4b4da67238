// cudaGetErrorName / cudaGetErrorString, answered locally with NVIDIA's own text (a table made at
// build time from the real runtime by tools/gen/dump_cuda_errors).
#include "common/error_texts.h"
#include "plugins/cudart/frontend/stub_call.h"

namespace {

using gvirtus::ErrorText;

constexpr ErrorText kErrors[] = {
#define GVIRTUS_CUDA_ERROR(code, name, text) {code, name, text},
#include "plugins/cudart/cuda_errors.inc"
#undef GVIRTUS_CUDA_ERROR
};

const ErrorText* find(cudaError_t error) {
  return gvirtus::find_error(kErrors, static_cast<int>(error));
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
