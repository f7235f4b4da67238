// What the stub does with copy nodes that name the client's own memory (capture_test.cpp runs it
// through gvirtus-run, over a backend with the capturing device, which builds and launches graphs
// node by node, and the accepting device keeping what is copied): a node copying from or into
// pageable memory, or page-locked memory over tcp, is staged (frontend/host_staging.h: a child
// graph of a host function of the stub's and a copy of a staging block on the backend), so each
// launch reads and writes the program's memory as it is then; the node is a copy node to the
// program (its type and parameters); an executable graph's node takes new parameters; a pitched
// copy back leaves the gaps between its rows alone. A node with both sides in the program's memory
// is the stub's host function alone, copying at each launch, with new parameters in the executable
// graph too; new parameters that move the program's memory to another side are refused with
// cudaErrorNotSupported (new parameters in the graph and clones: the e2e host_copy_nodes). A null
// graph is refused with cudaErrorInvalidValue, as natively. Prints "ok" and exits 0 when everything
// answered so. Usage: graph_copy_check tcp|shm
#include <cuda_runtime_api.h>

#include <algorithm>
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
  constexpr size_t kBytes = 64 << 10;
  void* device = nullptr;
  void* other = nullptr;
  expect(cudaMalloc(&device, kBytes) == cudaSuccess, "cudaMalloc", cudaSuccess);
  expect(cudaMalloc(&other, kBytes) == cudaSuccess, "cudaMalloc", cudaSuccess);
  cudaStream_t stream = nullptr;
  expect(cudaStreamCreate(&stream) == cudaSuccess, "cudaStreamCreate", cudaSuccess);
  std::vector<char> pageable(kBytes, 'p');
  std::vector<char> back(kBytes, 0);
  void* pinned = nullptr;
  expect(cudaMallocHost(&pinned, kBytes) == cudaSuccess, "cudaMallocHost", cudaSuccess);

  cudaGraphNode_t node = nullptr;
  cudaError_t rc = cudaGraphAddMemcpyNode1D(&node, nullptr, nullptr, 0, device, pageable.data(),
                                            kBytes, cudaMemcpyHostToDevice);
  expect(rc == cudaErrorInvalidValue, "a node in no graph", rc);
  (void)cudaGetLastError();

  // Up from pageable memory, across, down into pageable memory (the direction inferred).
  cudaGraph_t graph = nullptr;
  rc = cudaGraphCreate(&graph, 0);
  expect(rc == cudaSuccess, "cudaGraphCreate", rc);
  cudaGraphNode_t up = nullptr, across = nullptr, down = nullptr;
  rc = cudaGraphAddMemcpyNode1D(&up, graph, nullptr, 0, device, pageable.data(), kBytes,
                                cudaMemcpyHostToDevice);
  expect(rc == cudaSuccess, "a node from pageable memory", rc);
  rc = cudaGraphAddMemcpyNode1D(&across, graph, &up, 1, other, device, kBytes,
                                cudaMemcpyDeviceToDevice);
  expect(rc == cudaSuccess, "a node between device memory", rc);
  rc = cudaGraphAddMemcpyNode1D(&down, graph, &across, 1, back.data(), other, kBytes,
                                cudaMemcpyDefault);
  expect(rc == cudaSuccess, "a node into pageable memory", rc);
  cudaGraphNodeType type = cudaGraphNodeTypeEmpty;
  rc = cudaGraphNodeGetType(up, &type);
  expect(rc == cudaSuccess && type == cudaGraphNodeTypeMemcpy, "a copy node's type", rc);
  cudaMemcpy3DParms given{};
  rc = cudaGraphMemcpyNodeGetParams(down, &given);
  expect(rc == cudaSuccess && given.dstPtr.ptr == back.data() && given.extent.width == kBytes,
         "a copy node's parameters", rc);
  cudaGraphExec_t exec = nullptr;
  rc = cudaGraphInstantiate(&exec, graph, 0);
  expect(rc == cudaSuccess, "cudaGraphInstantiate", rc);
  for (int launch = 0; launch < 3; ++launch) {
    std::fill(pageable.begin(), pageable.end(), static_cast<char>('a' + launch));
    std::fill(back.begin(), back.end(), 0);
    rc = cudaGraphLaunch(exec, stream);
    expect(rc == cudaSuccess, "cudaGraphLaunch", rc);
    rc = cudaStreamSynchronize(stream);
    expect(rc == cudaSuccess && back == pageable, "each launch copies the memory as it is then",
           rc);
  }

  // New parameters in the executable graph: the copy back lands elsewhere.
  std::vector<char> elsewhere(kBytes, 0);
  rc = cudaGraphExecMemcpyNodeSetParams1D(exec, down, elsewhere.data(), other, kBytes,
                                          cudaMemcpyDeviceToHost);
  expect(rc == cudaSuccess, "new parameters in the executable graph", rc);
  std::fill(pageable.begin(), pageable.end(), 'e');
  rc = cudaGraphLaunch(exec, stream);
  expect(rc == cudaSuccess && cudaStreamSynchronize(stream) == cudaSuccess && elsewhere == pageable,
         "the executable graph's new parameters", rc);

  // Page-locked memory: the client's over tcp (staged), in the arena over shm (its device
  // pointer): either way a node that copies it.
  std::memset(pinned, 'q', kBytes);
  rc = cudaGraphAddMemcpyNode1D(&node, graph, &down, 1, device, pinned, kBytes, cudaMemcpyDefault);
  expect(rc == cudaSuccess, shm ? "page-locked memory in the arena" : "page-locked memory", rc);

  // A pitched copy back into a wider buffer: 16 rows of 256 bytes, 512 apart.
  constexpr size_t kRow = 256, kPitch = 512, kRows = 16;
  std::vector<char> wide(kPitch * kRows, '.');
  cudaGraph_t pitched = nullptr;
  rc = cudaGraphCreate(&pitched, 0);
  cudaMemcpy3DParms rows{};
  rows.srcPtr = cudaPitchedPtr{other, kRow, kRow, kRows};
  rows.dstPtr = cudaPitchedPtr{wide.data(), kPitch, kRow, kRows};
  rows.extent = cudaExtent{kRow, kRows, 1};
  rows.kind = cudaMemcpyDeviceToHost;
  rc = cudaGraphAddMemcpyNode(&node, pitched, nullptr, 0, &rows);
  expect(rc == cudaSuccess, "a pitched node into pageable memory", rc);
  cudaGraphExec_t pitched_exec = nullptr;
  rc = cudaGraphInstantiate(&pitched_exec, pitched, 0);
  expect(rc == cudaSuccess && cudaGraphLaunch(pitched_exec, stream) == cudaSuccess &&
             cudaStreamSynchronize(stream) == cudaSuccess,
         "the pitched graph's launch", rc);
  bool rows_right = true, gaps_kept = true;
  for (size_t r = 0; r < kRows; ++r) {
    for (size_t x = 0; x < kPitch; ++x) {
      (x < kRow ? rows_right : gaps_kept) &= wide[r * kPitch + x] == (x < kRow ? 'e' : '.');
    }
  }
  expect(rows_right && gaps_kept, "the rows copied back, the gaps between them kept", rc);

  // Both sides in the program's memory: a copy node that copies here at each launch.
  cudaGraph_t on_host = nullptr;
  rc = cudaGraphCreate(&on_host, 0);
  expect(rc == cudaSuccess, "cudaGraphCreate on_host", rc);
  std::vector<char> host_copy(kBytes, 0);
  cudaGraphNode_t host_node = nullptr;
  rc = cudaGraphAddMemcpyNode1D(&host_node, on_host, nullptr, 0, host_copy.data(), pageable.data(),
                                kBytes, cudaMemcpyHostToHost);
  expect(rc == cudaSuccess, "a node between host memory", rc);
  rc = cudaGraphNodeGetType(host_node, &type);
  expect(rc == cudaSuccess && type == cudaGraphNodeTypeMemcpy, "a host copy node's type", rc);
  rc = cudaGraphMemcpyNodeGetParams(host_node, &given);
  expect(rc == cudaSuccess && given.dstPtr.ptr == host_copy.data() &&
             given.kind == cudaMemcpyHostToHost,
         "a host copy node's parameters", rc);
  cudaGraphExec_t host_exec = nullptr;
  rc = cudaGraphInstantiate(&host_exec, on_host, 0);
  expect(rc == cudaSuccess, "cudaGraphInstantiate on_host", rc);
  for (int launch = 0; launch < 2; ++launch) {
    std::fill(pageable.begin(), pageable.end(), static_cast<char>('h' + launch));
    rc = cudaGraphLaunch(host_exec, stream);
    expect(
        rc == cudaSuccess && cudaStreamSynchronize(stream) == cudaSuccess && host_copy == pageable,
        "each launch copies between host memory", rc);
  }
  // New parameters in the executable graph: half the bytes into another buffer.
  std::vector<char> host_half(kBytes, 0);
  rc = cudaGraphExecMemcpyNodeSetParams1D(host_exec, host_node, host_half.data(), pageable.data(),
                                          kBytes / 2, cudaMemcpyHostToHost);
  expect(rc == cudaSuccess, "new host copy parameters in the executable graph", rc);
  std::fill(pageable.begin(), pageable.end(), 'k');
  rc = cudaGraphLaunch(host_exec, stream);
  expect(rc == cudaSuccess && cudaStreamSynchronize(stream) == cudaSuccess && host_half[0] == 'k' &&
             host_half[kBytes / 2 - 1] == 'k' && host_half[kBytes / 2] == 0,
         "the executable graph's new host copy parameters", rc);
  // The program's memory moved to another side: refused.
  rc = cudaGraphExecMemcpyNodeSetParams1D(host_exec, host_node, device, pageable.data(), kBytes,
                                          cudaMemcpyHostToDevice);
  expect(rc == cudaErrorNotSupported, "a host copy node made a copy to the device", rc);
  rc = cudaGetLastError();
  expect(rc == cudaErrorNotSupported, "the refusal is the last error", rc);
  expect(cudaGraphExecDestroy(host_exec) == cudaSuccess, "cudaGraphExecDestroy", cudaSuccess);
  expect(cudaGraphDestroy(on_host) == cudaSuccess, "cudaGraphDestroy", cudaSuccess);

  expect(cudaGraphExecDestroy(pitched_exec) == cudaSuccess, "cudaGraphExecDestroy", cudaSuccess);
  expect(cudaGraphExecDestroy(exec) == cudaSuccess, "cudaGraphExecDestroy", cudaSuccess);
  expect(cudaGraphDestroy(pitched) == cudaSuccess, "cudaGraphDestroy", cudaSuccess);

  // A CUDA array on one side and the program's memory on the other: staged as well, the extent
  // counting the array's elements (floats) - up into the array, and back into rows 80 apart.
  constexpr size_t kTexels = 64, kTexelRows = 8, kWideTexels = 80;
  const cudaChannelFormatDesc floats =
      cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindFloat);
  cudaArray_t array = nullptr;
  rc = cudaMallocArray(&array, &floats, kTexels, kTexelRows);
  expect(rc == cudaSuccess, "cudaMallocArray", rc);
  std::vector<float> plane(kTexels * kTexelRows), plane_back(kWideTexels * kTexelRows, -1.0f);
  cudaMemcpy3DParms into_array{};
  into_array.srcPtr = cudaPitchedPtr{plane.data(), kTexels * sizeof(float), kTexels, kTexelRows};
  into_array.dstArray = array;
  into_array.extent = cudaExtent{kTexels, kTexelRows, 1};
  into_array.kind = cudaMemcpyHostToDevice;
  cudaMemcpy3DParms out_of_array{};
  out_of_array.srcArray = array;
  out_of_array.dstPtr =
      cudaPitchedPtr{plane_back.data(), kWideTexels * sizeof(float), kTexels, kTexelRows};
  out_of_array.extent = into_array.extent;
  out_of_array.kind = cudaMemcpyDeviceToHost;
  cudaGraph_t with_array = nullptr;
  rc = cudaGraphCreate(&with_array, 0);
  cudaGraphNode_t array_up = nullptr, array_down = nullptr;
  rc = cudaGraphAddMemcpyNode(&array_up, with_array, nullptr, 0, &into_array);
  expect(rc == cudaSuccess, "a node from pageable memory into an array", rc);
  rc = cudaGraphAddMemcpyNode(&array_down, with_array, &array_up, 1, &out_of_array);
  expect(rc == cudaSuccess, "a node from an array into pageable memory", rc);
  rc = cudaGraphMemcpyNodeGetParams(array_down, &given);
  expect(rc == cudaSuccess && given.srcArray == array && given.dstPtr.ptr == plane_back.data(),
         "an array node's parameters", rc);
  cudaGraphExec_t array_exec = nullptr;
  rc = cudaGraphInstantiate(&array_exec, with_array, 0);
  expect(rc == cudaSuccess, "cudaGraphInstantiate with an array", rc);
  for (int launch = 0; launch < 2; ++launch) {
    for (size_t i = 0; i < plane.size(); ++i) plane[i] = static_cast<float>(i) + 0.5f * launch;
    rc = cudaGraphLaunch(array_exec, stream);
    expect(rc == cudaSuccess && cudaStreamSynchronize(stream) == cudaSuccess,
           "the array graph's launch", rc);
    bool right = true;
    for (size_t i = 0; i < plane_back.size(); ++i) {
      const size_t row = i / kWideTexels, x = i % kWideTexels;
      right = right && plane_back[i] == (x < kTexels ? plane[row * kTexels + x] : -1.0f);
    }
    expect(right, "each launch copies through the array, the gaps between rows kept", rc);
  }
  expect(cudaGraphExecDestroy(array_exec) == cudaSuccess, "cudaGraphExecDestroy", cudaSuccess);
  expect(cudaGraphDestroy(with_array) == cudaSuccess, "cudaGraphDestroy", cudaSuccess);
  expect(cudaFreeArray(array) == cudaSuccess, "cudaFreeArray", cudaSuccess);
  expect(cudaGraphDestroy(graph) == cudaSuccess, "cudaGraphDestroy", cudaSuccess);
  if (failures == 0) std::printf("ok\n");
  return failures == 0 ? 0 : 1;
}
