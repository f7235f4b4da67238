// Prints what the driver says of each device (simulated_devices_test.cpp reads it line by line):
// the count, each device's name, PCI bus id (both ways) and UUID, its primary context made current
// and the device that context is of, peer access and a peer copy between devices 0 and 1, and a
// reset of device 1's primary context.
#include <cuda.h>

#include <cstdio>
#include <cstring>

int main() {
  const CUresult init = cuInit(0);
  std::printf("cuInit -> %d\n", static_cast<int>(init));
  if (init != CUDA_SUCCESS) return 1;
  int count = -1;
  std::printf("cuDeviceGetCount -> %d\n", static_cast<int>(cuDeviceGetCount(&count)));
  std::printf("count %d\n", count);
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    CUdevice dev = -1;
    char name[128] = "", bus[32] = "";
    int bus_attribute = -1;
    CUuuid uuid{};
    CUdevice by_bus = -1;
    if (cuDeviceGet(&dev, ordinal) != CUDA_SUCCESS || cuDeviceGetName(name, sizeof name, dev) ||
        cuDeviceGetPCIBusId(bus, sizeof bus, dev) ||
        cuDeviceGetAttribute(&bus_attribute, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, dev) ||
        cuDeviceGetUuid(&uuid, dev) || cuDeviceGetByPCIBusId(&by_bus, bus)) {
      std::printf("device %d: a query failed\n", ordinal);
      return 1;
    }
    char hex[33];
    for (int i = 0; i < 16; ++i) {
      std::snprintf(hex + 2 * i, 3, "%02x", static_cast<unsigned char>(uuid.bytes[i]));
    }
    std::printf("device %d name \"%s\" bus %s bus_attribute %d uuid %s by_bus %d\n", ordinal, name,
                bus, bus_attribute, hex, by_bus);
  }
  // Past the last device: the driver's error.
  {
    CUdevice dev = -1;
    char name[128];
    std::printf("past the last: get %d name %d\n", static_cast<int>(cuDeviceGet(&dev, count)),
                static_cast<int>(cuDeviceGetName(name, sizeof name, count)));
  }
  // Each device's primary context, made current: the device it is of, and its state.
  CUcontext contexts[16] = {};
  for (int ordinal = 0; ordinal < count && ordinal < 16; ++ordinal) {
    CUdevice current = -1;
    unsigned flags = 0;
    int active = -1;
    const CUresult retained = cuDevicePrimaryCtxRetain(&contexts[ordinal], ordinal);
    const CUresult set = cuCtxSetCurrent(contexts[ordinal]);
    const CUresult got = cuCtxGetDevice(&current);
    const CUresult state = cuDevicePrimaryCtxGetState(ordinal, &flags, &active);
    std::printf("context %d retain %d set %d get %d device %d state %d active %d\n", ordinal,
                static_cast<int>(retained), static_cast<int>(set), static_cast<int>(got), current,
                static_cast<int>(state), active);
  }
  if (count >= 2) {
    std::printf("distinct contexts %d\n", contexts[0] != contexts[1] ? 1 : 0);
    int can = -1, self = -1;
    cuDeviceCanAccessPeer(&can, 0, 1);
    cuDeviceCanAccessPeer(&self, 1, 1);
    std::printf("can access peer 0->1 %d 1->1 %d\n", can, self);
    cuCtxSetCurrent(contexts[0]);
    std::printf("enable peer -> %d\n", static_cast<int>(cuCtxEnablePeerAccess(contexts[1], 0)));
    std::printf("enable again -> %d\n", static_cast<int>(cuCtxEnablePeerAccess(contexts[1], 0)));
    CUdeviceptr a = 0, b = 0;
    const char text[] = "peer bytes";
    char back[sizeof text] = "";
    const bool copied = cuMemAlloc(&a, sizeof text) == CUDA_SUCCESS &&
                        cuCtxSetCurrent(contexts[1]) == CUDA_SUCCESS &&
                        cuMemAlloc(&b, sizeof text) == CUDA_SUCCESS &&
                        cuMemcpyHtoD(a, text, sizeof text) == CUDA_SUCCESS &&
                        cuMemcpyPeer(b, contexts[1], a, contexts[0], sizeof text) == CUDA_SUCCESS &&
                        cuMemcpyDtoH(back, b, sizeof text) == CUDA_SUCCESS;
    std::printf("peer copy %s\n", copied && std::strcmp(back, text) == 0 ? "ok" : "failed");
    // A reset of device 1's primary context frees what device 1 made, not what device 0 did.
    const CUresult reset = cuDevicePrimaryCtxReset(1);
    const CUresult kept = cuMemcpyDtoH(back, a, sizeof text);
    const CUresult freed = cuMemcpyDtoH(back, b, sizeof text);
    std::printf("reset 1 -> %d: device 0's memory %d, device 1's %d\n", static_cast<int>(reset),
                static_cast<int>(kept), static_cast<int>(freed));
  }
  return 0;
}
