// A CUDA application for the fault tests, run through gvirtus-run (the stub libcudart.so.13).
//
//   copy_loop h2d    copies 256 MiB of pageable memory to the device, again and again, until
//                    killed; prints "copying" once the first copy is done.
//   copy_loop h2h    copies 4 MiB host to host (through the backend) and checks every byte,
//                    until its stdin ends; prints "copies: N correct" and exits 0, or 1 at the
//                    first wrong result or failed call.
#include <cuda_runtime_api.h>
#include <poll.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

int copy_to_device_until_killed() {
  std::vector<char> host(size_t{256} << 20, 'c');
  // No cudaMalloc: without a GPU, the backend's test device (accepting_device.cpp) has its
  // memory at this address.
  void* device = reinterpret_cast<void*>(uintptr_t{0x600000000000});
  for (bool first = true;; first = false) {
    const cudaError_t rc = cudaMemcpy(device, host.data(), host.size(), cudaMemcpyHostToDevice);
    if (rc != cudaSuccess) {
      std::printf("cudaMemcpy: %s\n", cudaGetErrorName(rc));
      return 1;
    }
    if (first) {
      std::printf("copying\n");
      std::fflush(stdout);
    }
  }
}

bool stdin_ended() {
  pollfd p{STDIN_FILENO, POLLIN, 0};
  char byte;
  return ::poll(&p, 1, 0) > 0 && ::read(STDIN_FILENO, &byte, 1) <= 0;
}

int copy_host_to_host_and_check() {
  const size_t bytes = size_t{4} << 20;
  std::vector<unsigned char> src(bytes), dst(bytes);
  unsigned long copies = 0;
  do {
    for (size_t i = 0; i < bytes; ++i) src[i] = static_cast<unsigned char>(i * 31 + copies);
    const cudaError_t rc = cudaMemcpy(dst.data(), src.data(), bytes, cudaMemcpyHostToHost);
    if (rc != cudaSuccess || std::memcmp(src.data(), dst.data(), bytes) != 0) {
      std::printf("copy %lu: %s\n", copies, rc != cudaSuccess ? cudaGetErrorName(rc) : "wrong");
      return 1;
    }
    if (++copies == 1) {
      std::printf("checking\n");
      std::fflush(stdout);
    }
  } while (!stdin_ended());
  std::printf("copies: %lu correct\n", copies);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "h2d") == 0) return copy_to_device_until_killed();
  if (argc == 2 && std::strcmp(argv[1], "h2h") == 0) return copy_host_to_host_and_check();
  std::fprintf(stderr, "usage: copy_loop h2d|h2h\n");
  return 2;
}
