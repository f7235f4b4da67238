// Device management and queries.
#include <cstring>

#include "check.h"

int main() {
  int count = 0, device = -1, value = -1;
  if (OK(cudaGetDeviceCount(&count))) std::printf("devices: %s\n", count > 0 ? "some" : "none");
  SHOW(cudaSetDevice(0));
  if (OK(cudaGetDevice(&device))) std::printf("current device %d\n", device);
  cudaDeviceProp prop{};
  if (OK(cudaGetDeviceProperties(&prop, 0))) {
    EXPECT(prop.major >= 1);
    EXPECT(prop.totalGlobalMem > 0);
    EXPECT(prop.warpSize == 32);
  }
  SHOW(cudaGetDeviceProperties(&prop, 9999));
  if (OK(cudaDeviceGetAttribute(&value, cudaDevAttrWarpSize, 0))) EXPECT(value == 32);
  if (OK(cudaDeviceGetAttribute(&value, cudaDevAttrMaxThreadsPerBlock, 0))) EXPECT(value >= 512);
  size_t free_bytes = 0, total_bytes = 0;
  if (OK(cudaMemGetInfo(&free_bytes, &total_bytes))) EXPECT(free_bytes <= total_bytes);
  unsigned flags = 0;
  SHOW(cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync));
  if (OK(cudaGetDeviceFlags(&flags))) EXPECT((flags & cudaDeviceScheduleBlockingSync) != 0);
  size_t limit = 0;
  if (OK(cudaDeviceGetLimit(&limit, cudaLimitStackSize))) EXPECT(limit > 0);
  SHOW(cudaDeviceSetLimit(cudaLimitStackSize, 4096));
  if (OK(cudaDeviceGetLimit(&limit, cudaLimitStackSize))) EXPECT(limit >= 4096);
  int least = 1, greatest = 1;
  if (OK(cudaDeviceGetStreamPriorityRange(&least, &greatest))) EXPECT(greatest <= least);
  int can = -1;
  SHOW(cudaDeviceCanAccessPeer(&can, 0, 0));
  cudaDeviceProp wanted{};
  wanted.major = 1;
  int chosen = -1;
  if (OK(cudaChooseDevice(&chosen, &wanted))) EXPECT(chosen >= 0 && chosen < count);
  SHOW(cudaChooseDevice(&chosen, nullptr));
  char bus[32];
  std::memset(bus, '#', sizeof bus);
  if (OK(cudaDeviceGetPCIBusId(bus, sizeof bus, 0))) {
    std::printf("bus id has %zu characters\n", std::strlen(bus));
    int by_bus = -1;
    if (OK(cudaDeviceGetByPCIBusId(&by_bus, bus))) EXPECT(by_bus == 0);
  } else {
    EXPECT(bus[0] == '#');
  }
  SHOW(cudaDeviceGetPCIBusId(bus, 4, 0));  // too short for any bus id
  int by_bus = -1;
  SHOW(cudaDeviceGetByPCIBusId(&by_bus, "not a bus id"));
  int p2p = -1;
  SHOW(cudaDeviceGetP2PAttribute(&p2p, cudaDevP2PAttrAccessSupported, 0, 0));
  SHOW(cudaDeviceSynchronize());
  SHOW(cudaDeviceReset());
  SHOW(cudaGetLastError());
  return 0;
}
