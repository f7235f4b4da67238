// The driver's virtual memory management, as PyTorch's expandable segments use it: a reservation,
// two physical allocations mapped side by side, access set over both at once and read back with an
// allocation's properties, then a copy across
// the seam, a kernel writing through the mapped address, a copy back, and everything undone. The
// result is the kernel's work on the copied data; on the simulated device, which runs no kernel,
// the copies alone round-trip.
#include <cuda.h>

#include <cstdint>
#include <vector>

#include "library_check.h"

#define CHECK_CU(call) CHECK_STATUS("CUDA driver", call, CUDA_SUCCESS)

__global__ void add_one(int* x, size_t n) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    x[i] += 1;
  }
}

// A call that must fail (memory that is not mapped): stops the program if it succeeds.
#define EXPECT_REFUSED(call)                                                      \
  do {                                                                            \
    if ((call) == CUDA_SUCCESS) {                                                 \
      std::printf("CUDA driver error: %s succeeded on unmapped memory\n", #call); \
      return 1;                                                                   \
    }                                                                             \
  } while (0)

int main() {
  CHECK_CUDA(cudaFree(nullptr));  // the runtime's primary context, current on this thread
  CUdevice device;
  CHECK_CU(cuDeviceGet(&device, 0));
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  size_t granularity = 0;
  CHECK_CU(cuMemGetAllocationGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  CUdeviceptr base = 0;
  CHECK_CU(cuMemAddressReserve(&base, 4 * granularity, 0, 0, 0));
  CUmemGenericAllocationHandle first, second;
  CHECK_CU(cuMemCreate(&first, granularity, &prop, 0));
  CHECK_CU(cuMemCreate(&second, granularity, &prop, 0));
  CHECK_CU(cuMemMap(base, granularity, 0, first, 0));
  CHECK_CU(cuMemMap(base + granularity, granularity, 0, second, 0));
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CHECK_CU(cuMemSetAccess(base, 2 * granularity, &access, 1));
  // The access as set, and the properties the allocation was made with.
  unsigned long long flags = 0;
  CHECK_CU(cuMemGetAccess(&flags, &prop.location, base + granularity + 64));
  CUmemAllocationProp made{};
  CHECK_CU(cuMemGetAllocationPropertiesFromHandle(&made, second));
  if (flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE || made.type != prop.type ||
      made.location.type != prop.location.type || made.location.id != prop.location.id) {
    std::printf("CUDA driver error: access %llu, or properties unlike the allocation's\n", flags);
    return 1;
  }
  // A mapped address's allocation, retained: one more reference, given back by a release.
  CUmemGenericAllocationHandle retained = 0;
  CHECK_CU(cuMemRetainAllocationHandle(&retained, reinterpret_cast<void*>(base + granularity + 8)));
  if (retained != second) {
    std::printf("CUDA driver error: the retained handle is not the mapped allocation's\n");
    return 1;
  }
  CHECK_CU(cuMemRelease(retained));
  CUdeviceptr start = 0;
  CHECK_CU(cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                 base + granularity + 64));
  if (start != base) {
    std::printf("CUDA driver error: the mapped range starts at %llx, not %llx\n",
                (unsigned long long)start, (unsigned long long)base);
    return 1;
  }
  // A copy across the seam between the two allocations, a kernel, and a copy back.
  const size_t n = granularity / sizeof(int);  // half of each allocation
  const CUdeviceptr seam = base + granularity / 2;
  std::vector<int> host(n), back(n, 0), want(n);
  for (size_t i = 0; i < n; ++i) host[i] = static_cast<int>(i * 7 % 1000);
  for (size_t i = 0; i < n; ++i) want[i] = host[i] + 1;
  CHECK_CU(cuMemcpyHtoD(seam, host.data(), n * sizeof(int)));
  add_one<<<64, 256>>>(reinterpret_cast<int*>(seam), n);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CU(cuCtxSynchronize());
  CHECK_CU(cuMemcpyDtoH(back.data(), seam, n * sizeof(int)));
  // Reserved but unmapped memory is no device memory.
  EXPECT_REFUSED(cuMemcpyHtoD(base + 2 * granularity, host.data(), sizeof(int)));
  CHECK_CU(cuMemUnmap(base, 2 * granularity));
  EXPECT_REFUSED(cuMemcpyHtoD(base, host.data(), sizeof(int)));
  CHECK_CU(cuMemRelease(first));
  CHECK_CU(cuMemRelease(second));
  CHECK_CU(cuMemAddressFree(base, 4 * granularity));
  // The data came back through the seam, the kernel's work on it or not (the simulated device
  // runs no kernel): what the copies alone show.
  bool intact = true;
  for (size_t i = 0; i < n; ++i) intact = intact && (back[i] == host[i] || back[i] == want[i]);
  std::printf("seam: %s\n", intact ? "ok" : "FAILED");
  return report(back.data(), want.data(), n, 0);
}
