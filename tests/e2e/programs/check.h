// Shared by the end-to-end programs: print each CUDA result by name, so a native run and a run
// through gvirtus can be compared line by line. Values are printed only when they are the same
// on every run (no pointers, no free-memory figures).
#pragma once
#include <cuda_runtime.h>

#include <cstdio>

#define SHOW(call)                                                                     \
  do {                                                                                 \
    cudaError_t show_rc_ = (call);                                                     \
    std::printf("%-44s -> %d %s\n", #call, (int)show_rc_, cudaGetErrorName(show_rc_)); \
  } while (0)

// Runs `call`, prints its result, and evaluates to whether it succeeded.
#define OK(call) ok_impl((call), #call)
inline bool ok_impl(cudaError_t rc, const char* text) {
  std::printf("%-44s -> %d %s\n", text, (int)rc, cudaGetErrorName(rc));
  return rc == cudaSuccess;
}

#define EXPECT(cond) std::printf("check %-38s %s\n", #cond, (cond) ? "ok" : "FAILED")

// A check that means something only where the device works (`working`: it took a stream, memory):
// without a device it prints nothing, as natively, so that native and remoted runs compare.
#define EXPECT_IF(working, cond) \
  if (working) EXPECT(cond)
