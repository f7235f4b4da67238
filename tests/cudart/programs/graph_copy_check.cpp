// What the stub does with copy nodes that name the client's own memory (capture_test.cpp runs it
// through gvirtus-run, over a backend with the accepting device, whose runtime initialises): a
// node copying from or into pageable memory, or page-locked memory over tcp, is refused with
// cudaErrorNotSupported before anything is sent, as the backend's GPU could not reach that memory
// when the graph runs; the refusal is the thread's last error. A device-to-device node, and over
// shm one from page-locked memory in the arena, reach the backend (whose runtime, with no driver
// behind the accepting device, answers otherwise). Prints "ok" and exits 0 when everything
// answered so. Usage: graph_copy_check tcp|shm
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstring>
#include <vector>

namespace {

int failures = 0;

void expect(bool ok, const char* what, cudaError_t got) {
  if (ok) return;
  std::printf("FAILED: %s: %d\n", what, static_cast<int>(got));
  ++failures;
}

}  // namespace

int main(int argc, char** argv) {
  const bool shm = argc > 1 && std::strcmp(argv[1], "shm") == 0;
  constexpr size_t kBytes = 4096;
  void* device = nullptr;
  void* other = nullptr;
  expect(cudaMalloc(&device, kBytes) == cudaSuccess, "cudaMalloc", cudaSuccess);
  expect(cudaMalloc(&other, kBytes) == cudaSuccess, "cudaMalloc", cudaSuccess);
  std::vector<char> pageable(kBytes);
  void* pinned = nullptr;
  expect(cudaMallocHost(&pinned, kBytes) == cudaSuccess, "cudaMallocHost", cudaSuccess);
  cudaGraphNode_t node = nullptr;
  cudaGraph_t graph = nullptr;  // the stub refuses before a graph matters

  cudaError_t rc = cudaGraphAddMemcpyNode1D(&node, graph, nullptr, 0, device, pageable.data(),
                                            kBytes, cudaMemcpyHostToDevice);
  expect(rc == cudaErrorNotSupported, "host to device from pageable memory", rc);
  rc = cudaGraphAddMemcpyNode1D(&node, graph, nullptr, 0, pageable.data(), device, kBytes,
                                cudaMemcpyDeviceToHost);
  expect(rc == cudaErrorNotSupported, "device to host into pageable memory", rc);
  cudaMemcpy3DParms copy{};
  copy.srcPtr = cudaPitchedPtr{pageable.data(), kBytes, kBytes, 1};
  copy.dstPtr = cudaPitchedPtr{device, kBytes, kBytes, 1};
  copy.extent = cudaExtent{kBytes, 1, 1};
  copy.kind = cudaMemcpyHostToDevice;
  rc = cudaGraphAddMemcpyNode(&node, graph, nullptr, 0, &copy);
  expect(rc == cudaErrorNotSupported, "a 3D copy from pageable memory", rc);

  rc =
      cudaGraphAddMemcpyNode1D(&node, graph, nullptr, 0, device, pinned, kBytes, cudaMemcpyDefault);
  // Over tcp page-locked memory is the client's; over shm it lies in the arena the GPU reaches
  // (the node reaches the backend, whose failure then supersedes the stub's refusals).
  expect(shm ? rc != cudaErrorNotSupported : rc == cudaErrorNotSupported, "page-locked memory", rc);
  if (!shm) {
    rc = cudaGetLastError();
    expect(rc == cudaErrorNotSupported, "the refusal is the last error", rc);
  }

  rc = cudaGraphAddMemcpyNode1D(&node, graph, nullptr, 0, other, device, kBytes,
                                cudaMemcpyDeviceToDevice);
  expect(rc != cudaErrorNotSupported && rc != cudaSuccess, "device to device reaches the backend",
         rc);
  expect(node == nullptr, "no node came out of a failure", rc);
  (void)cudaGetLastError();
  if (failures == 0) std::printf("ok\n");
  return failures == 0 ? 0 : 1;
}
