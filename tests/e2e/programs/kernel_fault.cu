// Kernel faults: an illegal address and a device-side trap, each reported at the next
// synchronisation, sticky afterwards (every later call that needs the context reports it), and
// cleared only by cudaDeviceReset, after which the device works again.
// Between a faulting launch and the synchronisation that reports it there is no other call: when
// the fault reaches the host is a matter of timing, and the output must not depend on it.
#include "check.h"

__global__ void k_poke(int* p, int v) {
  *p = v;
}
__global__ void k_trap(int* p) {
  if (threadIdx.x == 3) __trap();
  p[threadIdx.x] = 1;
}
__global__ void k_fill(int* p, int v) {
  p[threadIdx.x] = v + (int)threadIdx.x;
}

// A normal round trip: allocate, launch, copy back, check, free.
void works(const char* when) {
  std::printf("-- round trip %s\n", when);
  int* buf = nullptr;
  if (OK(cudaMalloc(&buf, 32 * sizeof(int)))) {
    k_fill<<<1, 32>>>(buf, 100);
    int host[32] = {};
    if (ok_impl(cudaGetLastError(), "launch k_fill") &&
        OK(cudaMemcpy(host, buf, sizeof host, cudaMemcpyDeviceToHost))) {
      bool all = true;
      for (int i = 0; i < 32; ++i) all = all && host[i] == 100 + i;
      EXPECT(all);
    }
    SHOW(cudaFree(buf));
  } else {
    k_fill<<<1, 32>>>(buf, 100);
    SHOW(cudaGetLastError());
  }
}

// What the calls after a fault return (the context is unusable until cudaDeviceReset).
void after_fault(int* old_buffer) {
  SHOW(cudaGetLastError());
  SHOW(cudaGetLastError());
  SHOW(cudaPeekAtLastError());
  SHOW(cudaDeviceSynchronize());
  int* fresh = nullptr;
  SHOW(cudaMalloc(&fresh, 64));
  std::printf("allocation after the fault: %s\n", fresh == nullptr ? "none" : "some");
  int host[4] = {7, 7, 7, 7};
  SHOW(cudaMemcpy(host, old_buffer, sizeof host, cudaMemcpyDeviceToHost));
  SHOW(cudaMemcpy(old_buffer, host, sizeof host, cudaMemcpyHostToDevice));
  SHOW(cudaMemset(old_buffer, 0, sizeof host));
  cudaStream_t stream = nullptr;
  SHOW(cudaStreamCreate(&stream));
  cudaEvent_t event = nullptr;
  SHOW(cudaEventCreate(&event));
  k_fill<<<1, 4>>>(old_buffer, 1);
  SHOW(cudaGetLastError());
  SHOW(cudaStreamSynchronize(nullptr));
  int count = -1, device = -1;
  SHOW(cudaGetDeviceCount(&count));
  SHOW(cudaGetDevice(&device));
  SHOW(cudaFree(old_buffer));
  SHOW(cudaGetLastError());
}

int main() {
  works("before any fault");

  std::printf("== illegal address\n");
  int* buf = nullptr;
  SHOW(cudaMalloc(&buf, 4 * sizeof(int)));
  {
    int* target = nullptr;
    int value = 42;
    void* args[] = {&target, &value};
    // The launch result is kept and printed after the synchronisation that reports the fault.
    const cudaError_t launched = cudaLaunchKernel((const void*)k_poke, 1, 1, args, 0, nullptr);
    const cudaError_t synced = cudaDeviceSynchronize();
    ok_impl(launched, "launch k_poke(nullptr, 42)");
    ok_impl(synced, "cudaDeviceSynchronize()");
  }
  after_fault(buf);
  SHOW(cudaDeviceReset());
  SHOW(cudaGetLastError());
  works("after cudaDeviceReset");

  std::printf("== device-side trap on a created stream\n");
  cudaStream_t stream = nullptr;
  const bool have_stream = OK(cudaStreamCreate(&stream));
  buf = nullptr;
  SHOW(cudaMalloc(&buf, 32 * sizeof(int)));
  {
    void* args[] = {&buf};
    const cudaError_t launched = cudaLaunchKernel((const void*)k_trap, 1, 32, args, 0, stream);
    const cudaError_t synced = cudaStreamSynchronize(stream);
    ok_impl(launched, "launch k_trap");
    ok_impl(synced, "cudaStreamSynchronize(stream)");
  }
  after_fault(buf);
  if (have_stream) SHOW(cudaStreamDestroy(stream));
  SHOW(cudaDeviceReset());
  SHOW(cudaGetLastError());
  works("after the second cudaDeviceReset");
  SHOW(cudaGetLastError());
  return 0;
}
