// Shared by the NVRTC programs (nvrtc_ptx.cu, nvrtc_link.cu): compiling a source to PTX, making
// the device's primary context current, and running a kernel of theirs - (float* x, float a,
// int n), one thread per element - on a host array through device memory.
#pragma once

#include <cuda.h>
#include <nvrtc.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "library_check.h"

#define CHECK_NVRTC(call) CHECK_STATUS("NVRTC", call, NVRTC_SUCCESS)
#define CHECK_CU(call) CHECK_STATUS("CUDA driver", call, CUDA_SUCCESS)

// The PTX of `source` compiled with `options`; a compile error prints NVRTC's log and exits.
inline std::vector<char> compile_ptx(const char* source, const char* name,
                                     const std::vector<const char*>& options) {
  nvrtcProgram program;
  CHECK_NVRTC(nvrtcCreateProgram(&program, source, name, 0, nullptr, nullptr));
  const nvrtcResult compiled =
      nvrtcCompileProgram(program, static_cast<int>(options.size()), options.data());
  if (compiled != NVRTC_SUCCESS) {
    size_t log_size = 0;
    CHECK_NVRTC(nvrtcGetProgramLogSize(program, &log_size));
    std::vector<char> log(log_size + 1, '\0');
    CHECK_NVRTC(nvrtcGetProgramLog(program, log.data()));
    std::printf("NVRTC error %d compiling %s\n%s\n", static_cast<int>(compiled), name, log.data());
    std::exit(1);
  }
  size_t ptx_size = 0;
  CHECK_NVRTC(nvrtcGetPTXSize(program, &ptx_size));
  std::vector<char> ptx(ptx_size);
  CHECK_NVRTC(nvrtcGetPTX(program, ptx.data()));
  CHECK_NVRTC(nvrtcDestroyProgram(&program));
  return ptx;
}

// The device's primary context, retained and made current.
inline CUdevice current_primary_context() {
  CUdevice device;
  CUcontext context;
  CHECK_CU(cuInit(0));
  CHECK_CU(cuDeviceGet(&device, 0));
  CHECK_CU(cuDevicePrimaryCtxRetain(&context, device));
  CHECK_CU(cuCtxSetCurrent(context));
  return device;
}

// JIT options with an info and an error log of the caller's (what the driver writes there).
struct JitLogs {
  char info[4096] = {};
  char error[4096] = {};
  CUjit_option options[4] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                             CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[4] = {info, reinterpret_cast<void*>(uintptr_t{sizeof(info)}), error,
                     reinterpret_cast<void*>(uintptr_t{sizeof(error)})};
  JitLogs() = default;
  JitLogs(const JitLogs&) = delete;  // values point into this object
  JitLogs& operator=(const JitLogs&) = delete;
};

// Runs `function` on x (in place) in blocks of 128 threads.
inline void run_on(CUfunction function, std::vector<float>& x, float a) {
  int n = static_cast<int>(x.size());
  CUdeviceptr dx;
  CHECK_CU(cuMemAlloc(&dx, n * sizeof(float)));
  CHECK_CU(cuMemcpyHtoD(dx, x.data(), n * sizeof(float)));
  void* params[] = {&dx, &a, &n};
  CHECK_CU(cuLaunchKernel(function, (n + 127) / 128, 1, 1, 128, 1, 1, 0, nullptr, params, nullptr));
  CHECK_CU(cuCtxSynchronize());
  CHECK_CU(cuMemcpyDtoH(x.data(), dx, n * sizeof(float)));
  CHECK_CU(cuMemFree(dx));
}
