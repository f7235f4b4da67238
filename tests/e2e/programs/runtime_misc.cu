// Device, stream and memory-pool queries and settings, peer copies and access, 3D allocations and
// memsets, profiler markers and a cooperative launch: each call's result printed, data checked
// against the CPU.
#include <cuda_profiler_api.h>

#include <vector>

#include "check.h"

__global__ void fill(int* out, int n, int value) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = value + i;
}

int main() {
  SHOW(cudaInitDevice(0, 0, 0));
  enum cudaFuncCache cache = cudaFuncCachePreferEqual;
  SHOW(cudaDeviceSetCacheConfig(cudaFuncCachePreferShared));
  if (OK(cudaDeviceGetCacheConfig(&cache))) std::printf("cache config %d\n", (int)cache);
  SHOW(cudaDeviceSetCacheConfig(cudaFuncCachePreferNone));

  cudaStream_t stream = nullptr;
  SHOW(cudaStreamCreate(&stream));
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusInvalidated;
  if (OK(cudaStreamIsCapturing(stream, &capture))) std::printf("capturing %d\n", (int)capture);
  unsigned long long id = 0, id2 = 0;
  cudaStream_t other = nullptr;
  SHOW(cudaStreamCreate(&other));
  if (OK(cudaStreamGetId(stream, &id)) && OK(cudaStreamGetId(other, &id2))) {
    EXPECT(id != id2);
  }
  int device = -1;
  if (OK(cudaStreamGetDevice(stream, &device))) std::printf("stream device %d\n", device);
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  if (OK(cudaThreadExchangeStreamCaptureMode(&mode))) std::printf("previous mode %d\n", (int)mode);
  SHOW(cudaThreadExchangeStreamCaptureMode(&mode));

  cudaMemPool_t pool = nullptr, current = nullptr;
  if (OK(cudaDeviceGetDefaultMemPool(&pool, 0)) && OK(cudaDeviceGetMemPool(&current, 0))) {
    EXPECT(pool != nullptr && pool == current);
    SHOW(cudaDeviceSetMemPool(0, pool));
    void* from_pool = nullptr;
    if (OK(cudaMallocFromPoolAsync(&from_pool, 1 << 20, pool, stream))) {
      SHOW(cudaMemsetAsync(from_pool, 0x11, 1 << 20, stream));
      unsigned char probe[4] = {0, 0, 0, 0};
      SHOW(cudaMemcpyAsync(probe, from_pool, sizeof probe, cudaMemcpyDefault, stream));
      SHOW(cudaStreamSynchronize(stream));
      EXPECT(probe[0] == 0x11 && probe[3] == 0x11);
      SHOW(cudaFreeAsync(from_pool, stream));
    }
    SHOW(cudaStreamSynchronize(stream));
    SHOW(cudaMemPoolTrimTo(pool, 0));
  }

  const int n = 1000;
  int *a = nullptr, *b = nullptr;
  if (OK(cudaMalloc(&a, n * sizeof(int))) && OK(cudaMalloc(&b, n * sizeof(int)))) {
    fill<<<(n + 255) / 256, 256>>>(a, n, 7);
    SHOW(cudaGetLastError());
    SHOW(cudaMemcpyPeer(b, 0, a, 0, n * sizeof(int)));
    std::vector<int> host(n, -1);
    if (OK(cudaMemcpy(host.data(), b, n * sizeof(int), cudaMemcpyDeviceToHost))) {
      EXPECT(host[0] == 7 && host[n - 1] == 7 + n - 1);
    }
    SHOW(cudaMemcpyPeerAsync(a, 0, b, 0, n * sizeof(int), stream));
    SHOW(cudaStreamSynchronize(stream));
    int value = n;
    void* args[] = {&b, &value, &value};
    SHOW(cudaLaunchCooperativeKernel((const void*)fill, dim3(4), dim3(256), args, 0, stream));
    SHOW(cudaStreamSynchronize(stream));
    if (OK(cudaMemcpy(host.data(), b, n * sizeof(int), cudaMemcpyDeviceToHost))) {
      EXPECT(host[0] == n && host[n - 1] == 2 * n - 1);
    }
    SHOW(cudaFree(a));
    SHOW(cudaFree(b));
  }
  SHOW(cudaDeviceEnablePeerAccess(0, 0));  // a device is not its own peer
  SHOW(cudaGetLastError());
  SHOW(cudaDeviceDisablePeerAccess(0));
  SHOW(cudaGetLastError());

  cudaPitchedPtr pitched = {};
  const cudaExtent extent = make_cudaExtent(100, 8, 4);
  if (OK(cudaMalloc3D(&pitched, extent))) {
    EXPECT(pitched.pitch >= 100 && pitched.xsize == 100 && pitched.ysize == 8);
    SHOW(cudaMemset3D(pitched, 0x22, extent));
    SHOW(cudaMemset3DAsync(pitched, 0x33, make_cudaExtent(100, 8, 1), stream));
    SHOW(cudaStreamSynchronize(stream));
    std::vector<unsigned char> plane(100 * 8 * 2);
    if (OK(cudaMemcpy2D(plane.data(), 100, pitched.ptr, pitched.pitch, 100, 8 * 2,
                        cudaMemcpyDeviceToHost))) {
      EXPECT(plane[0] == 0x33 && plane[100 * 8 - 1] == 0x33 && plane[100 * 8] == 0x22);
    }
    SHOW(cudaFree(pitched.ptr));
  }

  SHOW(cudaProfilerStart());
  SHOW(cudaProfilerStop());
  SHOW(cudaCtxResetPersistingL2Cache());
  SHOW(cudaStreamDestroy(other));
  SHOW(cudaStreamDestroy(stream));
  SHOW(cudaDeviceSynchronize());
  SHOW(cudaGetLastError());
  return 0;
}
