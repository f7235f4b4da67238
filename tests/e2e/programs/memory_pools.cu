// Memory pools made by the program: created, their attributes read and set (int and 64-bit
// ones), access from the device, allocations from them on a stream, trimmed and destroyed; the
// device's current pool set and read back; and the atomic capability and texture width queries.
#include <vector>

#include "check.h"

__global__ void fill(int* values, int n, int value) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) values[i] = value;
}

int main() {
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  cudaMemPool_t pool = nullptr;
  if (OK(cudaMemPoolCreate(&pool, &props))) {
    unsigned long long threshold = 64ull << 20;
    SHOW(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
    unsigned long long read_back = 0;
    if (OK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &read_back))) {
      EXPECT(read_back == threshold);
    }
    int reuse = 0;
    if (OK(cudaMemPoolGetAttribute(pool, cudaMemPoolReuseAllowOpportunistic, &reuse))) {
      EXPECT(reuse == 0 || reuse == 1);
    }
    reuse = 0;
    SHOW(cudaMemPoolSetAttribute(pool, cudaMemPoolReuseAllowOpportunistic, &reuse));
    SHOW(cudaMemPoolGetAttribute(pool, static_cast<cudaMemPoolAttr>(99), &read_back));
    cudaMemLocation location{cudaMemLocationTypeDevice, 0};
    cudaMemAccessFlags flags = cudaMemAccessFlagsProtNone;
    if (OK(cudaMemPoolGetAccess(&flags, pool, &location))) {
      EXPECT(flags == cudaMemAccessFlagsProtReadWrite);
    }
    cudaMemAccessDesc access{location, cudaMemAccessFlagsProtReadWrite};
    SHOW(cudaMemPoolSetAccess(pool, &access, 1));
    cudaStream_t stream = nullptr;
    SHOW(cudaStreamCreate(&stream));
    int* values = nullptr;
    const int n = 1 << 16;
    if (OK(cudaMallocFromPoolAsync((void**)&values, n * sizeof(int), pool, stream))) {
      fill<<<n / 256, 256, 0, stream>>>(values, n, 7);
      std::vector<int> back(n, 0);
      SHOW(cudaMemcpyAsync(back.data(), values, n * sizeof(int), cudaMemcpyDeviceToHost, stream));
      SHOW(cudaFreeAsync(values, stream));
      if (OK(cudaStreamSynchronize(stream))) EXPECT(back[0] == 7 && back[n - 1] == 7);
      unsigned long long used = 1;
      if (OK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used))) {
        EXPECT(used == 0);
      }
    }
    SHOW(cudaMemPoolTrimTo(pool, 0));
    SHOW(cudaStreamDestroy(stream));
    // The device's current pool: this one, then the default again.
    SHOW(cudaDeviceSetMemPool(0, pool));
    cudaMemPool_t current = nullptr;
    if (OK(cudaDeviceGetMemPool(&current, 0))) EXPECT(current == pool);
    cudaMemPool_t default_pool = nullptr;
    SHOW(cudaDeviceGetDefaultMemPool(&default_pool, 0));
    SHOW(cudaDeviceSetMemPool(0, default_pool));
    SHOW(cudaMemPoolDestroy(pool));
  }
  cudaAtomicOperation operations[2] = {cudaAtomicOperationIntegerAdd, cudaAtomicOperationFloatAdd};
  unsigned capabilities[2] = {0xdead, 0xdead};
  SHOW(cudaDeviceGetHostAtomicCapabilities(capabilities, operations, 2, 0));
  int valid_devices[1] = {0};
  SHOW(cudaSetValidDevices(valid_devices, 1));
  size_t max_width = 0;
  cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
  if (OK(cudaDeviceGetTexture1DLinearMaxWidth(&max_width, &desc, 0))) EXPECT(max_width > 0);
  return 0;
}
