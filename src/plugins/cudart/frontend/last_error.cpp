// cudaGetLastError / cudaPeekAtLastError. The backend's runtime holds the last error of every
// call it ran for the calling thread (asynchronous failures included); the stub holds the errors
// it produced by itself (record_local_error). A local error is newer than anything the backend
// holds, because every later failed round trip clears it (stub_call.cpp).
#include "plugins/cudart/frontend/stub_call.h"

namespace cr = gvirtus::cudart;

GVIRTUS_CUDART_EXPORT cudaError_t cudaGetLastError() {
  const cudaError_t local = cr::local_last_error(true);
  const cudaError_t remote = cr::remote::cudaGetLastError();  // also resets the backend's
  return local != cudaSuccess ? local : remote;
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaPeekAtLastError() {
  const cudaError_t local = cr::local_last_error(false);
  return local != cudaSuccess ? local : cr::remote::cudaPeekAtLastError();
}
