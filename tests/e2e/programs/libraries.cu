// Libraries the program loads itself: library_kernels.fatbin (tests/e2e/library/, built next to
// this program) loaded from memory and from its file, its kernels counted, enumerated and found
// by name, launched, its global read, a kernel attribute set for a device, and both unloaded.
// Checks of what the kernels compute need a GPU; the rest hold on the simulated device too.
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "check.h"

namespace {

bool working = false;  // the device took a stream: the checks mean something

std::string beside_program(const char* argv0, const char* name) {
  std::string path(argv0);
  const size_t slash = path.rfind('/');
  return (slash == std::string::npos ? std::string(".") : path.substr(0, slash)) + "/" + name;
}

}  // namespace

int main(int, char** argv) {
  cudaStream_t stream = nullptr;
  working = OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const std::string path = beside_program(argv[0], "library_kernels.fatbin");
  std::ifstream file(path, std::ios::binary);
  const std::vector<char> image((std::istreambuf_iterator<char>(file)), {});
  std::printf("library image read: %s\n", image.empty() ? "no" : "yes");

  cudaLibrary_t library = nullptr, from_file = nullptr;
  SHOW(cudaLibraryLoadData(&library, image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  SHOW(cudaLibraryLoadFromFile(&from_file, path.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  unsigned int count = 0;
  SHOW(cudaLibraryGetKernelCount(&count, library));
  std::printf("kernels: %u\n", count);
  EXPECT_IF(working, count == 2);
  cudaKernel_t kernels[2] = {};
  SHOW(cudaLibraryEnumerateKernels(kernels, 2, library));
  EXPECT_IF(working, kernels[0] != nullptr && kernels[1] != nullptr && kernels[0] != kernels[1]);
  cudaKernel_t fill = nullptr, count_kernel = nullptr, missing = nullptr;
  SHOW(cudaLibraryGetKernel(&fill, library, "lib_fill"));
  SHOW(cudaLibraryGetKernel(&count_kernel, from_file, "lib_count"));
  SHOW(cudaLibraryGetKernel(&missing, library, "no_such_kernel"));
  EXPECT_IF(working, fill == kernels[0] || fill == kernels[1]);

  void* counter = nullptr;
  size_t counter_bytes = 0;
  SHOW(cudaLibraryGetGlobal(&counter, &counter_bytes, library, "lib_counter"));
  EXPECT_IF(working, counter != nullptr && counter_bytes == sizeof(int));

  int* out = nullptr;
  SHOW(cudaMalloc((void**)&out, 64 * sizeof(int)));
  int value = 7, n = 64;
  void* fill_args[] = {&out, &value, &n};
  SHOW(cudaLaunchKernel((const void*)fill, dim3(1), dim3(64), fill_args, 0, stream));
  void* count_args[] = {&out};
  SHOW(cudaLaunchKernel((const void*)count_kernel, dim3(1), dim3(1), count_args, 0, stream));
  SHOW(cudaStreamSynchronize(stream));
  int got[64] = {};
  if (OK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost))) {
    bool all = got[0] == 42;  // lib_count wrote the counter's first value over out[0]
    for (int i = 1; i < 64; ++i) all = all && got[i] == 7 + i;
    EXPECT_IF(working, all);
  }
  SHOW(cudaKernelSetAttributeForDevice(fill, cudaFuncAttributeMaxDynamicSharedMemorySize, 1024, 0));

  // JIT options travel with a load: the logs' sizes come back, no more than their buffers.
  char info_log[256] = "untouched", error_log[256] = "untouched";
  cudaJitOption jit[] = {cudaJitInfoLogBuffer, cudaJitInfoLogBufferSizeBytes, cudaJitErrorLogBuffer,
                         cudaJitErrorLogBufferSizeBytes, cudaJitLogVerbose};
  void* jit_values[] = {info_log, reinterpret_cast<void*>(uintptr_t{sizeof info_log}), error_log,
                        reinterpret_cast<void*>(uintptr_t{sizeof error_log}),
                        reinterpret_cast<void*>(uintptr_t{1})};
  cudaLibrary_t with_options = nullptr;
  if (OK(cudaLibraryLoadData(&with_options, image.data(), jit, jit_values, 5, nullptr, nullptr,
                             0))) {
    EXPECT(reinterpret_cast<uintptr_t>(jit_values[1]) <= sizeof info_log &&
           reinterpret_cast<uintptr_t>(jit_values[3]) <= sizeof error_log);
    SHOW(cudaLibraryUnload(with_options));
  }

  SHOW(cudaFree(out));
  SHOW(cudaLibraryUnload(library));
  SHOW(cudaLibraryUnload(from_file));
  SHOW(cudaStreamDestroy(stream));
  return 0;
}
