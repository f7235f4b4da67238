// Shared by the samples: stop at the first failed CUDA call, printing the error's name (to
// standard output, so that a run natively and one through gvirtus can be compared).
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CHECK(call)                                                                      \
  do {                                                                                   \
    cudaError_t rc_ = (call);                                                            \
    if (rc_ != cudaSuccess) {                                                            \
      std::printf("CUDA error %s (%d) in %s\n", cudaGetErrorName(rc_), (int)rc_, #call); \
      std::exit(1);                                                                      \
    }                                                                                    \
  } while (0)
