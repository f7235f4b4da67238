// The driver across fork(), as a native driver behaves (context_faults.h, ForkedChild):
//  - a child forked before the driver was initialized starts afresh: it initializes the driver,
//    allocates, sets and reads back memory of its own;
//  - a child forked after the parent's cuInit is refused: cuInit and every other call answer
//    CUDA_ERROR_NOT_INITIALIZED there (cuDriverGetVersion excepted), and so NVIDIA's runtime
//    linked into it fails too. Programs probe for this to choose between fork and spawn;
//  - either child's exit leaves the parent's session alone: its memory keeps its bytes and its
//    calls go on.
// Each call is printed with its result for the test to find (simulated_mode_test.cpp).
#include <cuda.h>
#include <cuda_runtime.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "show_calls.h"

namespace {

constexpr size_t kWords = 1 << 18;  // 1 MiB of 32-bit words

// Whether every word of `device` memory reads back as `value`.
bool reads_back(CUdeviceptr device, unsigned value) {
  std::vector<unsigned> host(kWords, 0);
  if (cuMemcpyDtoH(host.data(), device, kWords * sizeof(unsigned)) != CUDA_SUCCESS) return false;
  for (unsigned word : host) {
    if (word != value) return false;
  }
  return true;
}

// Waits for `child` and prints how it ended; returns its exit status (-1: it did not exit).
int waited(pid_t child, const char* which) {
  int status = 0;
  if (waitpid(child, &status, 0) != child || !WIFEXITED(status)) {
    std::printf("%s: did not exit\n", which);
    return -1;
  }
  std::printf("%s exited %d\n", which, WEXITSTATUS(status));
  return WEXITSTATUS(status);
}

// The child forked before the driver was initialized: a driver of its own.
int child_before_init() {
  CUdevice device = 0;
  show_primary_context(device);
  CUdeviceptr memory = 0;
  SHOW(cuMemAlloc(&memory, kWords * sizeof(unsigned)));
  SHOW(cuMemsetD32(memory, 0x5a5a5a5au, kWords));
  const bool right = reads_back(memory, 0x5a5a5a5au);
  std::printf("child before init: its memory right: %s\n", right ? "yes" : "no");
  SHOW(cuMemFree(memory));
  std::fflush(stdout);
  return right ? 0 : 1;
}

// The child forked after: refused everywhere, the parent's memory included; it then exits
// normally, running every exit handler of the stub and of NVIDIA's runtime.
int child_after_init(CUdeviceptr parents) {
  int count = -1, version = 0;
  CUdevice device = -1;
  CUcontext context = nullptr;
  CUdeviceptr memory = 0;
  SHOW(cuInit(0));
  SHOW(cuDeviceGetCount(&count));
  SHOW(cuDeviceGet(&device, 0));
  SHOW(cuCtxGetCurrent(&context));
  SHOW(cuMemAlloc(&memory, 4096));
  SHOW(cuMemsetD32(parents, 0, kWords));
  SHOW(cuCtxSynchronize());
  SHOW(cuDriverGetVersion(&version));
  std::printf("child after init: driver version known: %s\n", version > 0 ? "yes" : "no");
  void* runtime_memory = nullptr;
  const cudaError_t runtime = cudaMalloc(&runtime_memory, 4096);
  std::printf("child after init: the runtime's cudaMalloc -> %d (refused: %s)\n",
              static_cast<int>(runtime), runtime != cudaSuccess ? "yes" : "no");
  std::fflush(stdout);
  return 0;
}

}  // namespace

int main() {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const pid_t before = fork();
  if (before == 0) std::exit(child_before_init());
  const bool before_ok = waited(before, "child before init") == 0;

  CUdevice device = 0;
  show_primary_context(device);
  SHOW(cudaFree(nullptr));  // NVIDIA's runtime starts too, on the primary context
  CUdeviceptr memory = 0;
  SHOW(cuMemAlloc(&memory, kWords * sizeof(unsigned)));
  SHOW(cuMemsetD32(memory, 0xc0ffee00u, kWords));
  SHOW(cuCtxSynchronize());

  const pid_t after = fork();
  if (after == 0) std::exit(child_after_init(memory));
  const bool after_ok = waited(after, "child after init") == 0;

  const bool intact = reads_back(memory, 0xc0ffee00u);
  std::printf("parent's memory untouched by the children: %s\n", intact ? "yes" : "no");
  SHOW(cuMemsetD32(memory, 7, kWords));
  const bool goes_on = reads_back(memory, 7);
  std::printf("parent's session goes on: %s\n", goes_on ? "yes" : "no");
  SHOW(cuMemFree(memory));
  return before_ok && after_ok && intact && goes_on ? 0 : 1;
}
