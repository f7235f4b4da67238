// One application over a pool of backends (pool_test.cpp reads what it prints): the pool's
// devices in order, a saxpy launch on each (grid = ordinal + 1, so each backend's record of
// launches tells which devices it served), peer access, and the copy matrix between every ordered
// pair of devices - cuMemcpyPeer (sync), cuMemcpyPeerAsync on the destination's stream (async)
// and cuMemcpyDtoD with unified addressing (unified, the sizes up to 1 MiB) - for sizes from 1 B
// to 256 MiB, every byte read back and checked. Then, when GVIRTUS_POOL_KILL_PID names a
// backend, it kills it and says what a call on each device answers.
// argv[1]: a fatbinary with saxpy. argv[2] (optional): the largest size, in bytes.
#include <cuda.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

constexpr int kMaxDevices = 16;

struct Device {
  CUcontext context = nullptr;
  CUstream stream = nullptr;
  CUdeviceptr src = 0;
  CUdeviceptr dst = 0;
};

uint8_t pattern_byte(uint64_t seed, size_t i) {
  uint64_t x = seed * 0x9e3779b97f4a7c15ull + i;
  x ^= x >> 29;
  x *= 0xbf58476d1ce4e5b9ull;
  return static_cast<uint8_t>(x >> 56);
}

bool fail(const char* what, CUresult r) {
  std::printf("FAILED %s -> %d\n", what, static_cast<int>(r));
  return false;
}

// Copies `bytes` from src's device memory to dst's by `mode`, and checks every byte there.
bool copy_and_check(std::vector<Device>& devices, int s, int d, size_t bytes, int mode,
                    std::vector<uint8_t>& expected, std::vector<uint8_t>& got) {
  const uint64_t seed = (static_cast<uint64_t>(s) << 40) ^ (static_cast<uint64_t>(d) << 32) ^
                        (bytes << 2) ^ static_cast<uint64_t>(mode);
  for (size_t i = 0; i < bytes; ++i) expected[i] = pattern_byte(seed, i);
  Device& from = devices[s];
  Device& to = devices[d];
  CUresult r = cuCtxSetCurrent(from.context);
  if (r == CUDA_SUCCESS) r = cuMemcpyHtoD(from.src, expected.data(), bytes);
  if (r != CUDA_SUCCESS) return fail("fill", r);
  r = cuCtxSetCurrent(to.context);
  if (r == CUDA_SUCCESS) r = cuMemsetD8(to.dst, 0xee, bytes);  // nothing stale can pass
  if (r != CUDA_SUCCESS) return fail("clear", r);
  switch (mode) {
    case 0:
      r = cuMemcpyPeer(to.dst, to.context, from.src, from.context, bytes);
      break;
    case 1:
      r = cuMemcpyPeerAsync(to.dst, to.context, from.src, from.context, bytes, to.stream);
      if (r == CUDA_SUCCESS) r = cuStreamSynchronize(to.stream);
      break;
    default:
      r = cuMemcpyDtoD(to.dst, from.src, bytes);
      break;
  }
  if (r != CUDA_SUCCESS) return fail("copy", r);
  std::memset(got.data(), 0, bytes);
  r = cuMemcpyDtoH(got.data(), to.dst, bytes);
  if (r != CUDA_SUCCESS) return fail("read back", r);
  for (size_t i = 0; i < bytes; ++i) {
    if (got[i] != expected[i]) {
      std::printf("FAILED byte %zu of %zu from %d to %d: %u, not %u\n", i, bytes, s, d, got[i],
                  expected[i]);
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const size_t largest = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : size_t{256} << 20;
  CUresult r = cuInit(0);
  std::printf("cuInit -> %d\n", static_cast<int>(r));
  if (r != CUDA_SUCCESS) return 1;
  int count = 0;
  cuDeviceGetCount(&count);
  std::printf("count %d\n", count);
  if (count < 2 || count > kMaxDevices) return 1;
  CUdevice past = -1;
  std::printf("past the last: get %d\n", static_cast<int>(cuDeviceGet(&past, count)));

  std::vector<Device> devices(static_cast<size_t>(count));
  CUmodule modules[kMaxDevices];
  for (int i = 0; i < count; ++i) {
    char name[128] = "";
    CUdevice dev = -1, of_context = -1;
    Device& device = devices[static_cast<size_t>(i)];
    if (cuDeviceGet(&dev, i) || cuDeviceGetName(name, sizeof name, dev) ||
        cuDevicePrimaryCtxRetain(&device.context, dev) || cuCtxSetCurrent(device.context) ||
        cuCtxGetDevice(&of_context) || cuStreamCreate(&device.stream, CU_STREAM_NON_BLOCKING) ||
        cuMemAlloc(&device.src, largest) || cuMemAlloc(&device.dst, largest) ||
        cuModuleLoad(&modules[i], argv[1])) {
      std::printf("device %d: set-up failed\n", i);
      return 1;
    }
    std::printf("device %d name \"%s\" context of device %d\n", i, name, of_context);
    CUfunction saxpy = nullptr;
    int n = 256;
    float a = 2.0f;
    void* args[] = {&n, &a, &device.src, &device.dst};
    r = cuModuleGetFunction(&saxpy, modules[i], "_Z5saxpyifPKfPf");
    if (r == CUDA_SUCCESS) {
      r = cuLaunchKernel(saxpy, static_cast<unsigned>(i + 1), 1, 1, 256, 1, 1, 0, device.stream,
                         args, nullptr);
    }
    if (r == CUDA_SUCCESS) r = cuStreamSynchronize(device.stream);
    std::printf("device %d launch %d\n", i, static_cast<int>(r));
  }

  for (int i = 0; i < count; ++i) {
    std::printf("peer %d:", i);
    for (int j = 0; j < count; ++j) {
      int can = -1;
      cuDeviceCanAccessPeer(&can, i, j);
      std::printf(" %d", can);
    }
    std::printf("\n");
  }

  std::vector<uint8_t> expected(largest), got(largest);
  static const char* const kModes[] = {"sync", "async", "unified"};
  for (size_t bytes :
       {size_t{1}, size_t{4099}, (size_t{1} << 20) + 1, size_t{64} << 20, size_t{256} << 20}) {
    if (bytes > largest) continue;
    for (int mode = 0; mode < 3; ++mode) {
      if (mode == 2 && bytes > (size_t{1} << 20) + 1) continue;
      const auto start = std::chrono::steady_clock::now();
      int pairs = 0;
      for (int s = 0; s < count; ++s) {
        for (int d = 0; d < count; ++d) {
          if (s == d) continue;
          if (!copy_and_check(devices, s, d, bytes, mode, expected, got)) {
            std::printf("matrix %zu %s: FAILED from %d to %d\n", bytes, kModes[mode], s, d);
            return 1;
          }
          ++pairs;
        }
      }
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::printf("matrix %zu %s: %d pairs, every byte checked (%.2f s)\n", bytes, kModes[mode],
                  pairs, seconds);
    }
  }

  if (const char* victim = std::getenv("GVIRTUS_POOL_KILL_PID")) {
    ::kill(static_cast<pid_t>(std::atoi(victim)), SIGKILL);
    // Its workers die with it (SIGTERM from the kernel as their parent goes): give them a moment.
    ::usleep(500 * 1000);
    for (int i = 0; i < count; ++i) {
      Device& device = devices[static_cast<size_t>(i)];
      const auto start = std::chrono::steady_clock::now();
      CUresult set = cuCtxSetCurrent(device.context);
      CUresult memset = cuMemsetD8(device.dst, 1, 16);
      CUresult sync = cuCtxSynchronize();
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::printf("after the loss device %d: set %d memset %d synchronize %d (%.1f s)\n", i,
                  static_cast<int>(set), static_cast<int>(memset), static_cast<int>(sync), seconds);
    }
  }
  std::printf("done\n");
  return 0;
}
