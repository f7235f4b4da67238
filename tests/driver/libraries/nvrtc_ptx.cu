// NVRTC compiles a scale kernel to PTX; the driver API loads and launches it on 1000 floats.
#include <vector>

#include "nvrtc_programs.h"

static const char* kSource =
    "extern \"C\" __global__ void scale(float* x, float a, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) x[i] *= a;\n"
    "}\n";

int main() {
  const int n = 1000;
  const float a = 2.5f;
  std::vector<float> x(n), want(n);
  for (int i = 0; i < n; ++i) x[i] = static_cast<float>(i % 9) - 4.f;
  for (int i = 0; i < n; ++i) want[i] = x[i] * a;
  const std::vector<char> ptx = compile_ptx(kSource, "scale.cu", {"--gpu-architecture=compute_90"});
  const CUdevice device = current_primary_context();
  JitLogs logs;
  CUmodule module;
  const CUresult loaded = cuModuleLoadDataEx(&module, ptx.data(), 4, logs.options, logs.values);
  if (loaded != CUDA_SUCCESS) {
    std::printf("CUDA driver error %d in cuModuleLoadDataEx\n%s\n", static_cast<int>(loaded),
                logs.error);
    std::exit(1);
  }
  CUfunction function;
  CHECK_CU(cuModuleGetFunction(&function, module, "scale"));
  run_on(function, x, a);
  CHECK_CU(cuModuleUnload(module));
  CHECK_CU(cuDevicePrimaryCtxRelease(device));
  return report(x.data(), want.data(), n, 1e-6);
}
