// NVRTC compiles a scale kernel to PTX; the driver API loads and launches it on 1000 floats.
#include <cuda.h>
#include <nvrtc.h>

#include <cstdint>
#include <vector>

#include "library_check.h"

#define CHECK_NVRTC(call) CHECK_STATUS("NVRTC", call, NVRTC_SUCCESS)
#define CHECK_CU(call) CHECK_STATUS("CUDA driver", call, CUDA_SUCCESS)

static const char* kSource =
    "extern \"C\" __global__ void scale(float* x, float a, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) x[i] *= a;\n"
    "}\n";

int main() {
  int n = 1000;
  float a = 2.5f;
  std::vector<float> x(n), want(n);
  for (int i = 0; i < n; ++i) x[i] = static_cast<float>(i % 9) - 4.f;
  for (int i = 0; i < n; ++i) want[i] = x[i] * a;
  nvrtcProgram program;
  CHECK_NVRTC(nvrtcCreateProgram(&program, kSource, "scale.cu", 0, nullptr, nullptr));
  const char* options[] = {"--gpu-architecture=compute_90"};
  const nvrtcResult compiled = nvrtcCompileProgram(program, 1, options);
  if (compiled != NVRTC_SUCCESS) {
    size_t log_size = 0;
    CHECK_NVRTC(nvrtcGetProgramLogSize(program, &log_size));
    std::vector<char> log(log_size + 1, '\0');
    CHECK_NVRTC(nvrtcGetProgramLog(program, log.data()));
    std::printf("NVRTC error %d in nvrtcCompileProgram\n%s\n", static_cast<int>(compiled),
                log.data());
    std::exit(1);
  }
  size_t ptx_size = 0;
  CHECK_NVRTC(nvrtcGetPTXSize(program, &ptx_size));
  std::vector<char> ptx(ptx_size);
  CHECK_NVRTC(nvrtcGetPTX(program, ptx.data()));
  CHECK_NVRTC(nvrtcDestroyProgram(&program));
  CUdevice device;
  CUcontext context;
  CHECK_CU(cuInit(0));
  CHECK_CU(cuDeviceGet(&device, 0));
  CHECK_CU(cuDevicePrimaryCtxRetain(&context, device));
  CHECK_CU(cuCtxSetCurrent(context));
  char info_log[4096] = {}, error_log[4096] = {};
  CUjit_option jit_options[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                                CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* jit_values[] = {info_log, reinterpret_cast<void*>(uintptr_t{sizeof(info_log)}), error_log,
                        reinterpret_cast<void*>(uintptr_t{sizeof(error_log)})};
  CUmodule module;
  const CUresult loaded = cuModuleLoadDataEx(&module, ptx.data(), 4, jit_options, jit_values);
  if (loaded != CUDA_SUCCESS) {
    std::printf("CUDA driver error %d in cuModuleLoadDataEx\n%s\n", static_cast<int>(loaded),
                error_log);
    std::exit(1);
  }
  CUfunction function;
  CHECK_CU(cuModuleGetFunction(&function, module, "scale"));
  CUdeviceptr dx;
  CHECK_CU(cuMemAlloc(&dx, n * sizeof(float)));
  CHECK_CU(cuMemcpyHtoD(dx, x.data(), n * sizeof(float)));
  void* params[] = {&dx, &a, &n};
  CHECK_CU(cuLaunchKernel(function, (n + 127) / 128, 1, 1, 128, 1, 1, 0, nullptr, params, nullptr));
  CHECK_CU(cuCtxSynchronize());
  CHECK_CU(cuMemcpyDtoH(x.data(), dx, n * sizeof(float)));
  CHECK_CU(cuMemFree(dx));
  CHECK_CU(cuModuleUnload(module));
  CHECK_CU(cuDevicePrimaryCtxRelease(device));
  return report(x.data(), want.data(), n, 1e-6);
}
