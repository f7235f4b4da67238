// Graphs built node by node through the driver API, printed call by call: what NVIDIA's runtime
// does not show (tests/e2e/programs/graph_nodes.cu drives the rest through it). The generic
// cuGraphAddNode_v2 with edge data, the legacy forms older runtimes resolve (cuGraphAddKernelNode
// with CUDA 10's parameters, cuGraphGetEdges without data, cuGraphInstantiate with its log,
// cuGraphExecUpdate's first form), found as a runtime finds them (cuGetProcAddress by version),
// a kernel node's grid changed in an executable graph, a copy node from this process's own memory
// (staged), a host node without a function refused, a child graph that cannot be destroyed by
// itself, batch memory operation nodes, a copy node named by unified addresses (its memory
// types kept), copies between a CUDA array and this process's memory captured from a stream (1D
// by cuMemcpyHtoAAsync and AtoHAsync, 2D by cuMemcpy3DAsync into a pitched host buffer: one copy
// node each, copying the memory as it is at each launch) and a copy node between this process's
// memory. Its output is the native one (what gvirtus refuses
// where a driver does not look is hostile_graph_nodes_test.cpp's). argv[1]: a fatbinary with
// saxpy.
#include <cuda.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "show_calls.h"

// The legacy forms, as a runtime of CUDA 10 and 11 calls them.
using AddKernelNodeV1 = CUresult (*)(CUgraphNode*, CUgraph, const CUgraphNode*, size_t,
                                     const CUDA_KERNEL_NODE_PARAMS_v1*);
using KernelNodeGetParamsV1 = CUresult (*)(CUgraphNode, CUDA_KERNEL_NODE_PARAMS_v1*);
using GetEdgesV1 = CUresult (*)(CUgraph, CUgraphNode*, CUgraphNode*, size_t*);
using InstantiateV1 = CUresult (*)(CUgraphExec*, CUgraph, CUgraphNode*, char*, size_t);
using ExecUpdateV1 = CUresult (*)(CUgraphExec, CUgraph, CUgraphNode*, CUgraphExecUpdateResult*);

template <typename T>
T legacy(const char* name, int version) {
  void* found = nullptr;
  CUdriverProcAddressQueryResult status{};
  SHOW(cuGetProcAddress(name, &found, version, CU_GET_PROC_ADDRESS_DEFAULT, &status));
  return reinterpret_cast<T>(found);
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  CUdevice device = 0;
  show_primary_context(device);
  CUmodule module = nullptr;
  SHOW(cuModuleLoad(&module, argv[1]));
  CUfunction saxpy = nullptr;
  SHOW(cuModuleGetFunction(&saxpy, module, "_Z5saxpyifPKfPf"));
  constexpr int kN = 1024;
  CUdeviceptr xs = 0, ys = 0;
  SHOW(cuMemAlloc(&xs, kN * sizeof(float)));
  SHOW(cuMemAlloc(&ys, kN * sizeof(float)));
  CUstream stream = nullptr;
  SHOW(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  CUgraph graph = nullptr;
  SHOW(cuGraphCreate(&graph, 0));

  // The generic form: a memset, then a kernel after it with the edge's data given.
  CUgraphNodeParams memset_params{};
  memset_params.type = CU_GRAPH_NODE_TYPE_MEMSET;
  memset_params.memset.dst = ys;
  memset_params.memset.elementSize = 4;
  memset_params.memset.width = kN;
  memset_params.memset.height = 1;
  memset_params.memset.value = 0x3f800000;  // 1.0f
  CUgraphNode memset_node = nullptr;
  SHOW(cuGraphAddNode(&memset_node, graph, nullptr, nullptr, 0, &memset_params));
  int n = kN;
  float a = 2.0f;
  void* args[] = {&n, &a, &xs, &ys};
  CUgraphNodeParams kernel_params{};
  kernel_params.type = CU_GRAPH_NODE_TYPE_KERNEL;
  kernel_params.kernel.func = saxpy;
  kernel_params.kernel.gridDimX = 4, kernel_params.kernel.gridDimY = 1;
  kernel_params.kernel.gridDimZ = 1;
  kernel_params.kernel.blockDimX = 256, kernel_params.kernel.blockDimY = 1;
  kernel_params.kernel.blockDimZ = 1;
  kernel_params.kernel.kernelParams = args;
  const CUgraphEdgeData edge{};
  CUgraphNode kernel_node = nullptr;
  SHOW(cuGraphAddNode(&kernel_node, graph, &memset_node, &edge, 1, &kernel_params));
  size_t edges = 0;
  SHOW(cuGraphGetEdges(graph, nullptr, nullptr, nullptr, &edges));
  std::printf("edges after the generic adds: %zu\n", edges);

  // CUDA 10's kernel node, after the kernel: found by version as a runtime finds it.
  const auto add_kernel_v1 = legacy<AddKernelNodeV1>("cuGraphAddKernelNode", 10000);
  const auto get_params_v1 = legacy<KernelNodeGetParamsV1>("cuGraphKernelNodeGetParams", 10000);
  const auto get_edges_v1 = legacy<GetEdgesV1>("cuGraphGetEdges", 10000);
  const auto instantiate_v1 = legacy<InstantiateV1>("cuGraphInstantiate", 10000);
  const auto update_v1 = legacy<ExecUpdateV1>("cuGraphExecUpdate", 10020);
  if (add_kernel_v1 == nullptr || get_params_v1 == nullptr || get_edges_v1 == nullptr ||
      instantiate_v1 == nullptr || update_v1 == nullptr) {
    std::printf("legacy forms: missing\n");
    return 1;
  }
  float half = 0.5f;
  void* second_args[] = {&n, &half, &ys, &xs};
  CUDA_KERNEL_NODE_PARAMS_v1 v1{};
  v1.func = saxpy;
  v1.gridDimX = 8, v1.gridDimY = 1, v1.gridDimZ = 1;
  v1.blockDimX = 128, v1.blockDimY = 1, v1.blockDimZ = 1;
  v1.kernelParams = second_args;
  CUgraphNode second = nullptr;
  SHOW(add_kernel_v1(&second, graph, &kernel_node, 1, &v1));
  CUDA_KERNEL_NODE_PARAMS_v1 read_back{};
  SHOW(get_params_v1(second, &read_back));
  std::printf(
      "legacy read back: grid %u, block %u, n %d, a %g, same function %s\n", read_back.gridDimX,
      read_back.blockDimX,
      read_back.kernelParams != nullptr ? *static_cast<int*>(read_back.kernelParams[0]) : -1,
      read_back.kernelParams != nullptr ? *static_cast<float*>(read_back.kernelParams[1]) : -1.0f,
      read_back.func == saxpy ? "yes" : "no");
  size_t legacy_edges = 0;
  SHOW(get_edges_v1(graph, nullptr, nullptr, &legacy_edges));
  std::vector<CUgraphNode> from(legacy_edges), to(legacy_edges);
  SHOW(get_edges_v1(graph, from.data(), to.data(), &legacy_edges));
  size_t into_second = 0;
  for (size_t i = 0; i < legacy_edges; ++i) into_second += to[i] == second ? 1 : 0;
  std::printf("legacy edges: %zu, %zu into the second kernel\n", legacy_edges, into_second);

  // A copy from this process's own memory: a copy node, as natively (staged through the backend
  // when the graph runs: frontend/host_staging.h), destroyed again. A host node without a
  // function: refused.
  std::vector<float> pageable(kN, 1.0f);
  CUDA_MEMCPY3D copy{};
  copy.srcMemoryType = CU_MEMORYTYPE_HOST;
  copy.srcHost = pageable.data();
  copy.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  copy.dstDevice = xs;
  copy.WidthInBytes = kN * sizeof(float);
  copy.Height = 1;
  copy.Depth = 1;
  CUgraphNode staged = nullptr;
  SHOW(cuGraphAddMemcpyNode(&staged, graph, nullptr, 0, &copy, nullptr));
  CUgraphNodeType staged_type = CU_GRAPH_NODE_TYPE_EMPTY;
  SHOW(cuGraphNodeGetType(staged, &staged_type));
  CUDA_MEMCPY3D staged_copy{};
  SHOW(cuGraphMemcpyNodeGetParams(staged, &staged_copy));
  std::printf("staged node: type %d, from the vector %s\n", static_cast<int>(staged_type),
              staged_copy.srcHost == pageable.data() ? "yes" : "no");
  SHOW(cuGraphDestroyNode(staged));
  CUgraphNode refused = nullptr;
  CUDA_HOST_NODE_PARAMS host{};  // no function
  SHOW(cuGraphAddHostNode(&refused, graph, nullptr, 0, &host));
  std::printf("refused node: %s\n", refused == nullptr ? "none" : "set");

  // Instantiated with the log, launched twice; the first kernel's grid changed in place.
  CUgraphExec exec = nullptr;
  CUgraphNode error_node = reinterpret_cast<CUgraphNode>(uintptr_t{1});
  char log[64] = "untouched";
  SHOW(instantiate_v1(&exec, graph, &error_node, log, sizeof log));
  std::printf("instantiated: error node %s, log \"%s\"\n", error_node == nullptr ? "none" : "set",
              log);
  SHOW(cuGraphLaunch(exec, stream));
  CUDA_KERNEL_NODE_PARAMS wider{};
  SHOW(cuGraphKernelNodeGetParams(kernel_node, &wider));
  wider.gridDimX = 16;
  wider.blockDimX = 64;
  SHOW(cuGraphExecKernelNodeSetParams(exec, kernel_node, &wider));
  SHOW(cuGraphLaunch(exec, stream));
  SHOW(cuStreamSynchronize(stream));
  // The graph's own nodes are unchanged: an update from it brings the first grid back.
  CUgraphNode update_error = reinterpret_cast<CUgraphNode>(uintptr_t{1});
  CUgraphExecUpdateResult update_result = CU_GRAPH_EXEC_UPDATE_ERROR;
  SHOW(update_v1(exec, graph, &update_error, &update_result));
  std::printf("updated: result %d, error node %s\n", static_cast<int>(update_result),
              update_error == nullptr ? "none" : "set");

  // A child graph: its graph goes with its node, never by itself.
  CUgraph child = nullptr;
  SHOW(cuGraphCreate(&child, 0));
  CUgraphNode child_empty = nullptr;
  SHOW(cuGraphAddEmptyNode(&child_empty, child, nullptr, 0));
  CUgraphNode child_node = nullptr;
  SHOW(cuGraphAddChildGraphNode(&child_node, graph, &second, 1, child));
  CUgraph owned = nullptr;
  SHOW(cuGraphChildGraphNodeGetGraph(child_node, &owned));
  SHOW(cuGraphDestroy(owned));
  SHOW(cuGraphDestroy(child));

  // Batch memory operation nodes: a write of a device word and a wait on it, done at each launch;
  // their operations read back, changed in the executable graph, and a word outside the
  // program's device memory refused.
  CUcontext context = nullptr;
  SHOW(cuCtxGetCurrent(&context));
  CUgraph ops_graph = nullptr;
  SHOW(cuGraphCreate(&ops_graph, 0));
  CUstreamBatchMemOpParams ops[2] = {};
  ops[0].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
  ops[0].writeValue.address = xs;
  ops[0].writeValue.value = 0x77;
  ops[1].waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_32;
  ops[1].waitValue.address = xs;
  ops[1].waitValue.value = 0x77;
  ops[1].waitValue.flags = CU_STREAM_WAIT_VALUE_EQ;
  CUDA_BATCH_MEM_OP_NODE_PARAMS batch{};
  batch.ctx = context;
  batch.count = 2;
  batch.paramArray = ops;
  CUgraphNode ops_node = nullptr;
  SHOW(cuGraphAddBatchMemOpNode(&ops_node, ops_graph, nullptr, 0, &batch));
  CUDA_BATCH_MEM_OP_NODE_PARAMS got{};
  SHOW(cuGraphBatchMemOpNodeGetParams(ops_node, &got));
  std::printf("batch read back: %u operations, write %#x, wait %#x\n", got.count,
              got.count == 2 ? got.paramArray[0].writeValue.value : 0u,
              got.count == 2 ? got.paramArray[1].waitValue.value : 0u);
  CUgraphExec ops_exec = nullptr;
  SHOW(cuGraphInstantiate(&ops_exec, ops_graph, 0));
  uint32_t word = 0;
  SHOW(cuGraphLaunch(ops_exec, stream));
  SHOW(cuStreamSynchronize(stream));
  SHOW(cuMemcpyDtoH(&word, xs, sizeof word));
  std::printf("word after the batch: %#x\n", word);
  ops[0].writeValue.value = 0x99;
  ops[1].waitValue.value = 0x99;
  SHOW(cuGraphExecBatchMemOpNodeSetParams(ops_exec, ops_node, &batch));
  SHOW(cuGraphLaunch(ops_exec, stream));
  SHOW(cuStreamSynchronize(stream));
  SHOW(cuMemcpyDtoH(&word, xs, sizeof word));
  std::printf("word after the executable's batch: %#x\n", word);
  SHOW(cuGraphExecDestroy(ops_exec));
  SHOW(cuGraphDestroy(ops_graph));

  // A copy node between device memory named by unified addresses, as NVIDIA's runtime names the
  // sides of a cudaMemcpyDefault: read back as it was given, and new parameters in the executable
  // graph that change its memory types refused, as the driver refuses them.
  CUgraph unified_graph = nullptr;
  SHOW(cuGraphCreate(&unified_graph, 0));
  CUDA_MEMCPY3D unified{};
  unified.srcMemoryType = CU_MEMORYTYPE_UNIFIED;
  unified.srcDevice = xs;
  unified.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
  unified.dstDevice = ys;
  unified.WidthInBytes = 64;
  unified.Height = 1;
  unified.Depth = 1;
  CUgraphNode unified_node = nullptr;
  SHOW(cuGraphAddMemcpyNode(&unified_node, unified_graph, nullptr, 0, &unified, context));
  CUDA_MEMCPY3D unified_back{};
  SHOW(cuGraphMemcpyNodeGetParams(unified_node, &unified_back));
  std::printf("unified node read back: %s\n",
              unified_back.srcMemoryType == CU_MEMORYTYPE_UNIFIED &&
                      unified_back.dstMemoryType == CU_MEMORYTYPE_UNIFIED &&
                      unified_back.srcDevice == xs && unified_back.dstDevice == ys
                  ? "unified both"
                  : "changed");
  CUgraphExec unified_exec = nullptr;
  SHOW(cuGraphInstantiate(&unified_exec, unified_graph, 0));
  CUDA_MEMCPY3D typed = unified;
  typed.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  typed.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  SHOW(cuGraphExecMemcpyNodeSetParams(unified_exec, unified_node, &typed, context));
  SHOW(cuGraphExecMemcpyNodeSetParams(unified_exec, unified_node, &unified, context));
  SHOW(cuGraphExecDestroy(unified_exec));
  SHOW(cuGraphDestroy(unified_graph));

  // Copies between an array and this process's memory, captured: one copy node each, reading
  // and writing the program's memory at each launch.
  CUDA_ARRAY_DESCRIPTOR line_shape{};
  line_shape.Width = 1024;
  line_shape.Height = 0;
  line_shape.Format = CU_AD_FORMAT_UNSIGNED_INT8;
  line_shape.NumChannels = 1;
  CUarray line = nullptr;
  SHOW(cuArrayCreate(&line, &line_shape));
  CUDA_ARRAY_DESCRIPTOR plane_shape = line_shape;
  plane_shape.Width = 64;
  plane_shape.Height = 8;
  CUarray plane = nullptr;
  SHOW(cuArrayCreate(&plane, &plane_shape));
  std::vector<unsigned char> line_in(1024), line_out(1024), plane_out(96 * 8, 0xee);
  CUDA_MEMCPY3D plane_up{};  // the first 64 x 8 bytes of line_in, rows 64 apart
  plane_up.srcMemoryType = CU_MEMORYTYPE_HOST;
  plane_up.srcHost = line_in.data();
  plane_up.srcPitch = 64;
  plane_up.srcHeight = 8;
  plane_up.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  plane_up.dstArray = plane;
  plane_up.WidthInBytes = 64;
  plane_up.Height = 8;
  plane_up.Depth = 1;
  CUDA_MEMCPY3D plane_down = plane_up;  // back into rows 96 apart
  plane_down.srcMemoryType = CU_MEMORYTYPE_ARRAY;
  plane_down.srcArray = plane;
  plane_down.srcHost = nullptr;
  plane_down.dstMemoryType = CU_MEMORYTYPE_HOST;
  plane_down.dstHost = plane_out.data();
  plane_down.dstArray = nullptr;
  plane_down.dstPitch = 96;
  plane_down.dstHeight = 8;
  CUgraph arrays_graph = nullptr;
  SHOW(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
  SHOW(cuMemcpyHtoAAsync(line, 0, line_in.data(), 1024, stream));
  SHOW(cuMemcpyAtoHAsync(line_out.data(), line, 0, 1024, stream));
  SHOW(cuMemcpy3DAsync(&plane_up, stream));
  SHOW(cuMemcpy3DAsync(&plane_down, stream));
  SHOW(cuStreamEndCapture(stream, &arrays_graph));
  size_t array_nodes = 0;
  SHOW(cuGraphGetNodes(arrays_graph, nullptr, &array_nodes));
  std::printf("captured array copies: %zu nodes, nothing copied at capture %s\n", array_nodes,
              line_out[0] == 0 && plane_out[0] == 0xee ? "yes" : "no");
  CUgraphExec arrays_exec = nullptr;
  SHOW(cuGraphInstantiate(&arrays_exec, arrays_graph, 0));
  bool arrays_right = true;
  for (int launch = 0; launch < 2; ++launch) {
    for (size_t i = 0; i < line_in.size(); ++i) line_in[i] = static_cast<unsigned char>(i + launch);
    SHOW(cuGraphLaunch(arrays_exec, stream));
    SHOW(cuStreamSynchronize(stream));
    arrays_right = arrays_right && line_out == line_in;
    for (size_t i = 0; i < plane_out.size(); ++i) {
      const size_t row = i / 96, x = i % 96;
      arrays_right = arrays_right && plane_out[i] == (x < 64 ? line_in[row * 64 + x] : 0xee);
    }
  }
  std::printf("captured array copies at each launch: %s\n", arrays_right ? "right" : "wrong");
  SHOW(cuGraphExecDestroy(arrays_exec));
  SHOW(cuGraphDestroy(arrays_graph));
  SHOW(cuArrayDestroy(plane));
  SHOW(cuArrayDestroy(line));

  // A copy node between this process's memory: it copies when the graph runs.
  std::vector<unsigned char> host_from(4096, 0x21), host_to(4096, 0);
  CUDA_MEMCPY3D on_host{};
  on_host.srcMemoryType = CU_MEMORYTYPE_HOST;
  on_host.srcHost = host_from.data();
  on_host.dstMemoryType = CU_MEMORYTYPE_HOST;
  on_host.dstHost = host_to.data();
  on_host.WidthInBytes = host_from.size();
  on_host.Height = 1;
  on_host.Depth = 1;
  CUgraph host_graph = nullptr;
  SHOW(cuGraphCreate(&host_graph, 0));
  CUgraphNode host_copy = nullptr;
  SHOW(cuGraphAddMemcpyNode(&host_copy, host_graph, nullptr, 0, &on_host, context));
  CUgraphNodeType host_copy_type{};
  SHOW(cuGraphNodeGetType(host_copy, &host_copy_type));
  CUgraphExec host_exec = nullptr;
  SHOW(cuGraphInstantiate(&host_exec, host_graph, 0));
  std::printf("host copy node: type %d, copied before launch %s\n", host_copy_type,
              host_to[0] == 0 ? "no" : "yes");
  SHOW(cuGraphLaunch(host_exec, stream));
  SHOW(cuStreamSynchronize(stream));
  std::printf("host copy node after launch: %s\n", host_to == host_from ? "copied" : "not copied");
  SHOW(cuGraphExecDestroy(host_exec));
  SHOW(cuGraphDestroy(host_graph));

  SHOW(cuGraphExecDestroy(exec));
  SHOW(cuGraphDestroy(graph));
  SHOW(cuStreamDestroy(stream));
  return 0;
}
