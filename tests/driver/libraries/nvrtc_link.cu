// NVRTC compiles two translation units as relocatable PTX - a kernel calling a device function
// the other defines - and the driver's JIT linker joins them (cuLinkCreate, cuLinkAddData for
// each, cuLinkComplete, with log buffers); the linked image loads and its kernel runs on 1000
// floats.
#include <vector>

#include "nvrtc_programs.h"

static const char* kKernel =
    "extern __device__ float twice_plus(float v, float a);\n"
    "extern \"C\" __global__ void affine(float* x, float a, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) x[i] = twice_plus(x[i], a);\n"
    "}\n";
static const char* kHelper =
    "__device__ float twice_plus(float v, float a) { return 2.f * v + a; }\n";

int main() {
  const int n = 1000;
  const float a = 0.5f;
  std::vector<float> x(n), want(n);
  for (int i = 0; i < n; ++i) x[i] = static_cast<float>(i % 9) - 4.f;
  for (int i = 0; i < n; ++i) want[i] = 2.f * x[i] + a;
  const std::vector<const char*> relocatable = {"--gpu-architecture=compute_90",
                                                "--relocatable-device-code=true"};
  std::vector<char> kernel = compile_ptx(kKernel, "affine.cu", relocatable);
  std::vector<char> helper = compile_ptx(kHelper, "helper.cu", relocatable);
  const CUdevice device = current_primary_context();
  JitLogs logs;
  CUlinkState link;
  CHECK_CU(cuLinkCreate(4, logs.options, logs.values, &link));
  CHECK_CU(cuLinkAddData(link, CU_JIT_INPUT_PTX, kernel.data(), kernel.size(), "affine.ptx", 0,
                         nullptr, nullptr));
  CHECK_CU(cuLinkAddData(link, CU_JIT_INPUT_PTX, helper.data(), helper.size(), "helper.ptx", 0,
                         nullptr, nullptr));
  void* image = nullptr;
  size_t image_size = 0;
  const CUresult linked = cuLinkComplete(link, &image, &image_size);
  if (linked != CUDA_SUCCESS || image == nullptr || image_size == 0) {
    std::printf("CUDA driver error %d in cuLinkComplete (image of %zu bytes)\n%s\n",
                static_cast<int>(linked), image_size, logs.error);
    std::exit(1);
  }
  CUmodule module;
  CHECK_CU(cuModuleLoadData(&module, image));
  CHECK_CU(cuLinkDestroy(link));  // the module keeps its own copy of the image
  CUfunction function;
  CHECK_CU(cuModuleGetFunction(&function, module, "affine"));
  run_on(function, x, a);
  CHECK_CU(cuModuleUnload(module));
  CHECK_CU(cuDevicePrimaryCtxRelease(device));
  return report(x.data(), want.data(), n, 1e-6);
}
