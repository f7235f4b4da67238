// gvirtus-bench-peer: the copy of `gvirtus-bench pool`, run by it with gvirtus's libcuda.so.1 first
// on LD_LIBRARY_PATH and a pool configuration of two backends. cuMemcpyPeer from device 0 (the
// first backend's) to device 1 (the second's), BYTES at a time: one copy to warm up, then ROUNDS
// timed, then the destination read back and every byte checked. Prints one line:
// "bytes_per_s=R".
//   gvirtus-bench-peer BYTES ROUNDS
// Exit status 0, or 1 with the failing call (or byte) named.
#include <cuda.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

bool ok(CUresult result, const char* what) {
  if (result == CUDA_SUCCESS) return true;
  std::fprintf(stderr, "gvirtus-bench-peer: %s -> %d\n", what, static_cast<int>(result));
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: gvirtus-bench-peer BYTES ROUNDS\n");
    return 2;
  }
  const size_t bytes = std::strtoull(argv[1], nullptr, 10);
  const int rounds = std::atoi(argv[2]);
  if (bytes == 0 || rounds < 1) return 2;
  int count = 0;
  CUcontext from = nullptr, to = nullptr;
  CUdeviceptr src = 0, dst = 0;
  if (!ok(cuInit(0), "cuInit") || !ok(cuDeviceGetCount(&count), "cuDeviceGetCount")) return 1;
  if (count < 2) {
    std::fprintf(stderr, "gvirtus-bench-peer: %d device(s), 2 needed\n", count);
    return 1;
  }
  std::vector<uint8_t> pattern(bytes), back(bytes);
  for (size_t i = 0; i < bytes; ++i) pattern[i] = static_cast<uint8_t>(i * 131 + (i >> 12));
  if (!ok(cuDevicePrimaryCtxRetain(&from, 0), "retain 0") ||
      !ok(cuDevicePrimaryCtxRetain(&to, 1), "retain 1") || !ok(cuCtxSetCurrent(from), "set 0") ||
      !ok(cuMemAlloc(&src, bytes), "alloc 0") ||
      !ok(cuMemcpyHtoD(src, pattern.data(), bytes), "fill") || !ok(cuCtxSetCurrent(to), "set 1") ||
      !ok(cuMemAlloc(&dst, bytes), "alloc 1") ||
      !ok(cuMemcpyPeer(dst, to, src, from, bytes), "warm-up copy")) {
    return 1;
  }
  const auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < rounds; ++r) {
    if (!ok(cuMemcpyPeer(dst, to, src, from, bytes), "cuMemcpyPeer")) return 1;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!ok(cuMemcpyDtoH(back.data(), dst, bytes), "read back")) return 1;
  for (size_t i = 0; i < bytes; ++i) {
    if (back[i] != pattern[i]) {
      std::fprintf(stderr, "gvirtus-bench-peer: byte %zu of %zu is %u, not %u\n", i, bytes, back[i],
                   pattern[i]);
      return 1;
    }
  }
  std::printf("bytes_per_s=%.0f\n", static_cast<double>(bytes) * rounds / seconds);
  return 0;
}
