// Graphs built node by node: a memset, two kernel nodes, a 1D and a 3D device-to-device copy, an
// event record node, an empty node, a child graph, a second graph with an event wait node, and a
// third that allocates, sets, copies out and frees memory of its own, and a fourth built with the
// generic forms (cudaGraphAddNode, cudaGraphNodeSetParams, cudaGraphExecNodeSetParams).
// The shape queries (nodes, roots, edges, types, dependencies and dependents), every node
// kind's parameters read back (a kernel node's function and arguments as the program gave
// them), dependencies added and removed, an executable graph launched several times and checked
// against a CPU reference, its kernel node's parameters changed in place, a node disabled, a
// clone searched, a node destroyed, and every destroy.
#include <cstdio>
#include <cstring>
#include <vector>

#include "check.h"

__global__ void scale_add(float* x, float a, float b, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * a + b;
}

__global__ void accumulate(float* y, const float* x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += x[i];
}

constexpr int kN = 1 << 14;
constexpr int kThreads = 256;
constexpr int kBlocks = (kN + kThreads - 1) / kThreads;
constexpr int kLaunches = 3;

// One run of the graph on the CPU: y = 0; x = a x + 1; y += x; x = y; child: y = y * 1 + 0.
void reference_step(std::vector<float>& x, std::vector<float>& y, float a) {
  for (int i = 0; i < kN; ++i) {
    y[i] = 0;
    x[i] = x[i] * a + 1;
    y[i] += x[i];
    x[i] = y[i];
  }
}

void show_type(const char* what, cudaGraphNode_t node) {
  cudaGraphNodeType type = cudaGraphNodeTypeCount;
  if (OK(cudaGraphNodeGetType(node, &type))) std::printf("%s: type %d\n", what, (int)type);
}

int main() {
  const size_t bytes = kN * sizeof(float);
  cudaStream_t s = nullptr;
  SHOW(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float *x = nullptr, *y = nullptr, *z = nullptr;
  SHOW(cudaMalloc(&x, bytes));
  SHOW(cudaMalloc(&y, bytes));
  SHOW(cudaMalloc(&z, bytes));
  std::vector<float> hx(kN), hy(kN, 0.0f);
  for (int i = 0; i < kN; ++i) hx[i] = static_cast<float>(i % 5);
  SHOW(cudaMemcpy(x, hx.data(), bytes, cudaMemcpyHostToDevice));
  cudaEvent_t done = nullptr;
  SHOW(cudaEventCreate(&done));

  cudaGraph_t graph = nullptr;
  SHOW(cudaGraphCreate(&graph, 0));

  // y = 0
  cudaMemsetParams memset_params{};
  memset_params.dst = y;
  memset_params.value = 0;
  memset_params.elementSize = sizeof(float);
  memset_params.width = kN;
  memset_params.height = 1;
  cudaGraphNode_t memset_node = nullptr;
  SHOW(cudaGraphAddMemsetNode(&memset_node, graph, nullptr, 0, &memset_params));

  // x = 2x + 1
  float a = 2.0f, b = 1.0f;
  int n = kN;
  void* scale_args[] = {&x, &a, &b, &n};
  cudaKernelNodeParams scale{};
  scale.func = reinterpret_cast<void*>(scale_add);
  scale.gridDim = dim3(kBlocks);
  scale.blockDim = dim3(kThreads);
  scale.kernelParams = scale_args;
  cudaGraphNode_t scale_node = nullptr;
  SHOW(cudaGraphAddKernelNode(&scale_node, graph, nullptr, 0, &scale));

  // y += x, after both
  void* accumulate_args[] = {&y, &x, &n};
  cudaKernelNodeParams acc{};
  acc.func = reinterpret_cast<void*>(accumulate);
  acc.gridDim = dim3(kBlocks);
  acc.blockDim = dim3(kThreads);
  acc.kernelParams = accumulate_args;
  const cudaGraphNode_t acc_deps[] = {memset_node, scale_node};
  cudaGraphNode_t acc_node = nullptr;
  SHOW(cudaGraphAddKernelNode(&acc_node, graph, acc_deps, 2, &acc));

  // x = y (1D), z = y (3D), then the event, then an empty node, then the child graph.
  cudaGraphNode_t copy_node = nullptr;
  SHOW(cudaGraphAddMemcpyNode1D(&copy_node, graph, &acc_node, 1, x, y, bytes,
                                cudaMemcpyDeviceToDevice));
  cudaMemcpy3DParms copy3d{};
  copy3d.srcPtr = make_cudaPitchedPtr(y, bytes, kN, 1);
  copy3d.dstPtr = make_cudaPitchedPtr(z, bytes, kN, 1);
  copy3d.extent = make_cudaExtent(bytes, 1, 1);
  copy3d.kind = cudaMemcpyDeviceToDevice;
  cudaGraphNode_t copy3d_node = nullptr;
  SHOW(cudaGraphAddMemcpyNode(&copy3d_node, graph, &acc_node, 1, &copy3d));
  cudaGraphNode_t record_node = nullptr;
  SHOW(cudaGraphAddEventRecordNode(&record_node, graph, &copy_node, 1, done));
  cudaGraphNode_t empty_node = nullptr;
  SHOW(cudaGraphAddEmptyNode(&empty_node, graph, &record_node, 1));

  cudaGraph_t child = nullptr;
  SHOW(cudaGraphCreate(&child, 0));
  float one = 1.0f, zero = 0.0f;
  void* identity_args[] = {&y, &one, &zero, &n};
  cudaKernelNodeParams identity = scale;
  identity.kernelParams = identity_args;
  cudaGraphNode_t identity_node = nullptr;
  SHOW(cudaGraphAddKernelNode(&identity_node, child, nullptr, 0, &identity));
  cudaGraphNode_t child_node = nullptr;
  SHOW(cudaGraphAddChildGraphNode(&child_node, graph, &empty_node, 1, child));

  // The shape.
  size_t count = 0;
  if (OK(cudaGraphGetNodes(graph, nullptr, &count))) std::printf("nodes: %zu\n", count);
  if (OK(cudaGraphGetRootNodes(graph, nullptr, &count))) std::printf("roots: %zu\n", count);
  if (OK(cudaGraphGetEdges(graph, nullptr, nullptr, nullptr, &count))) {
    std::printf("edges: %zu\n", count);
    std::vector<cudaGraphNode_t> from(count), to(count);
    if (OK(cudaGraphGetEdges(graph, from.data(), to.data(), nullptr, &count))) {
      int into_acc = 0;
      for (size_t i = 0; i < count; ++i) into_acc += to[i] == acc_node;
      std::printf("edges into the accumulation: %d\n", into_acc);
    }
  }
  show_type("memset", memset_node);
  show_type("kernel", scale_node);
  show_type("copy", copy_node);
  show_type("copy 3D", copy3d_node);
  show_type("record", record_node);
  show_type("empty", empty_node);
  show_type("child", child_node);
  cudaGraphNode_t deps[4] = {};
  count = 4;
  if (OK(cudaGraphNodeGetDependencies(acc_node, deps, nullptr, &count))) {
    std::printf("accumulation depends on %zu\n", count);
    EXPECT((deps[0] == memset_node && deps[1] == scale_node) ||
           (deps[1] == memset_node && deps[0] == scale_node));
  }
  count = 4;
  if (OK(cudaGraphNodeGetDependentNodes(acc_node, deps, nullptr, &count))) {
    std::printf("accumulation has %zu dependents\n", count);
  }

  // Parameters read back.
  cudaKernelNodeParams got{};
  if (OK(cudaGraphKernelNodeGetParams(scale_node, &got))) {
    EXPECT(got.func == reinterpret_cast<void*>(scale_add));
    EXPECT(got.gridDim.x == kBlocks && got.blockDim.x == kThreads);
    EXPECT(*static_cast<float**>(got.kernelParams[0]) == x);
    std::printf("scale arguments: a %g b %g n %d\n", *static_cast<float*>(got.kernelParams[1]),
                *static_cast<float*>(got.kernelParams[2]), *static_cast<int*>(got.kernelParams[3]));
  }
  cudaMemsetParams got_memset{};
  if (OK(cudaGraphMemsetNodeGetParams(memset_node, &got_memset))) {
    EXPECT(got_memset.dst == y && got_memset.width == kN && got_memset.elementSize == 4);
  }
  cudaMemcpy3DParms got_copy{};
  if (OK(cudaGraphMemcpyNodeGetParams(copy3d_node, &got_copy))) {
    EXPECT(got_copy.extent.width == bytes && got_copy.dstPtr.ptr == z);
  }
  cudaEvent_t got_event = nullptr;
  if (OK(cudaGraphEventRecordNodeGetEvent(record_node, &got_event))) EXPECT(got_event == done);
  cudaGraph_t got_child = nullptr;
  if (OK(cudaGraphChildGraphNodeGetGraph(child_node, &got_child))) {
    count = 0;
    if (OK(cudaGraphGetNodes(got_child, nullptr, &count))) std::printf("child nodes: %zu\n", count);
  }

  // An edge added and removed again.
  SHOW(cudaGraphAddDependencies(graph, &copy3d_node, &empty_node, nullptr, 1));
  if (OK(cudaGraphGetEdges(graph, nullptr, nullptr, nullptr, &count))) {
    std::printf("edges with one more: %zu\n", count);
  }
  SHOW(cudaGraphRemoveDependencies(graph, &copy3d_node, &empty_node, nullptr, 1));

  // Run it.
  cudaGraphExec_t exec = nullptr;
  const bool have_exec = OK(cudaGraphInstantiate(&exec, graph, 0));
  for (int i = 0; i < kLaunches; ++i) SHOW(cudaGraphLaunch(exec, s));
  SHOW(cudaStreamSynchronize(s));
  SHOW(cudaEventQuery(done));
  std::vector<float> reference_x = hx, reference_y = hy;
  for (int i = 0; i < kLaunches; ++i) reference_step(reference_x, reference_y, 2.0f);
  std::vector<float> result(kN, -1.0f);
  if (have_exec && OK(cudaMemcpy(result.data(), x, bytes, cudaMemcpyDeviceToHost))) {
    EXPECT(std::memcmp(result.data(), reference_x.data(), bytes) == 0);
  }

  // The executable graph's kernel node with a = 3; then the copy node disabled: x stays y's.
  a = 3.0f;
  SHOW(cudaGraphExecKernelNodeSetParams(exec, scale_node, &scale));
  SHOW(cudaGraphLaunch(exec, s));
  SHOW(cudaStreamSynchronize(s));
  reference_step(reference_x, reference_y, 3.0f);
  if (have_exec && OK(cudaMemcpy(result.data(), x, bytes, cudaMemcpyDeviceToHost))) {
    EXPECT(std::memcmp(result.data(), reference_x.data(), bytes) == 0);
  }
  unsigned enabled = 7;
  if (OK(cudaGraphNodeGetEnabled(exec, copy3d_node, &enabled)))
    std::printf("enabled %u\n", enabled);
  SHOW(cudaGraphNodeSetEnabled(exec, copy3d_node, 0));
  if (OK(cudaGraphNodeGetEnabled(exec, copy3d_node, &enabled)))
    std::printf("enabled %u\n", enabled);

  // The graph's own parameters changed: the node reads back the new ones.
  b = 5.0f;
  SHOW(cudaGraphKernelNodeSetParams(scale_node, &scale));
  if (OK(cudaGraphKernelNodeGetParams(scale_node, &got))) {
    std::printf("scale arguments now: a %g b %g\n", *static_cast<float*>(got.kernelParams[1]),
                *static_cast<float*>(got.kernelParams[2]));
  }
  memset_params.value = 0;
  SHOW(cudaGraphMemsetNodeSetParams(memset_node, &memset_params));
  SHOW(cudaGraphExecMemsetNodeSetParams(exec, memset_node, &memset_params));
  SHOW(cudaGraphMemcpyNodeSetParams1D(copy_node, x, y, bytes, cudaMemcpyDeviceToDevice));
  SHOW(cudaGraphExecMemcpyNodeSetParams1D(exec, copy_node, x, y, bytes, cudaMemcpyDeviceToDevice));
  SHOW(cudaGraphMemcpyNodeSetParams(copy3d_node, &copy3d));
  SHOW(cudaGraphEventRecordNodeSetEvent(record_node, done));
  SHOW(cudaGraphExecEventRecordNodeSetEvent(exec, record_node, done));
  cudaKernelNodeAttrValue priority{};
  priority.priority = 0;
  SHOW(cudaGraphKernelNodeSetAttribute(scale_node, cudaLaunchAttributePriority, &priority));
  priority.priority = -7;
  if (OK(cudaGraphKernelNodeGetAttribute(scale_node, cudaLaunchAttributePriority, &priority))) {
    std::printf("priority %d\n", priority.priority);
  }
  SHOW(cudaGraphKernelNodeCopyAttributes(acc_node, scale_node));

  // A clone, and a node found in it.
  cudaGraph_t clone = nullptr;
  SHOW(cudaGraphClone(&clone, graph));
  cudaGraphNode_t cloned_scale = nullptr;
  if (OK(cudaGraphNodeFindInClone(&cloned_scale, scale_node, clone))) {
    EXPECT(cloned_scale != scale_node);
    show_type("cloned kernel", cloned_scale);
  }

  // A node destroyed: the graph has one node and two edges fewer.
  SHOW(cudaGraphDestroyNode(empty_node));
  if (OK(cudaGraphGetNodes(graph, nullptr, &count))) std::printf("nodes after: %zu\n", count);

  // A second graph that waits for the event.
  cudaGraph_t waiting = nullptr;
  SHOW(cudaGraphCreate(&waiting, 0));
  cudaGraphNode_t wait_node = nullptr;
  SHOW(cudaGraphAddEventWaitNode(&wait_node, waiting, nullptr, 0, done));
  if (OK(cudaGraphEventWaitNodeGetEvent(wait_node, &got_event))) EXPECT(got_event == done);
  SHOW(cudaGraphEventWaitNodeSetEvent(wait_node, done));
  show_type("wait", wait_node);

  // A graph that allocates, sets, copies out and frees its own memory.
  cudaGraph_t allocating = nullptr;
  SHOW(cudaGraphCreate(&allocating, 0));
  int device = 0;
  SHOW(cudaGetDevice(&device));
  cudaMemAllocNodeParams alloc_params{};
  alloc_params.poolProps.allocType = cudaMemAllocationTypePinned;
  alloc_params.poolProps.location.type = cudaMemLocationTypeDevice;
  alloc_params.poolProps.location.id = device;
  alloc_params.bytesize = bytes;
  cudaGraphNode_t alloc_node = nullptr;
  SHOW(cudaGraphAddMemAllocNode(&alloc_node, allocating, nullptr, 0, &alloc_params));
  cudaGraphNode_t fill_node = nullptr;
  cudaMemsetParams fill{};
  fill.dst = alloc_params.dptr;
  fill.value = 7;
  fill.elementSize = 1;
  fill.width = bytes;
  fill.height = 1;
  SHOW(cudaGraphAddMemsetNode(&fill_node, allocating, &alloc_node, 1, &fill));
  cudaGraphNode_t out_node = nullptr;
  SHOW(cudaGraphAddMemcpyNode1D(&out_node, allocating, &fill_node, 1, z, alloc_params.dptr, bytes,
                                cudaMemcpyDeviceToDevice));
  cudaGraphNode_t free_node = nullptr;
  SHOW(cudaGraphAddMemFreeNode(&free_node, allocating, &out_node, 1, alloc_params.dptr));
  cudaMemAllocNodeParams got_alloc{};
  if (OK(cudaGraphMemAllocNodeGetParams(alloc_node, &got_alloc))) {
    EXPECT(got_alloc.bytesize == bytes && got_alloc.dptr == alloc_params.dptr);
  }
  void* freed = nullptr;
  if (OK(cudaGraphMemFreeNodeGetParams(free_node, &freed))) EXPECT(freed == alloc_params.dptr);
  show_type("allocation", alloc_node);
  show_type("free", free_node);
  cudaGraphExec_t allocating_exec = nullptr;
  const bool have_allocating = OK(cudaGraphInstantiate(&allocating_exec, allocating, 0));
  SHOW(cudaGraphLaunch(allocating_exec, s));
  SHOW(cudaStreamSynchronize(s));
  std::vector<unsigned char> sevens(bytes, 0);
  if (have_allocating && OK(cudaMemcpy(sevens.data(), z, bytes, cudaMemcpyDeviceToHost))) {
    EXPECT(sevens[0] == 7 && sevens[bytes - 1] == 7);
  }
  // The device's graph memory: its high mark holds at least the allocation; only a high mark can
  // be set, and only to 0.
  unsigned long long high = 0, no_mark = 0;
  if (OK(cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrUsedMemHigh, &high))) {
    EXPECT(high >= bytes);
  }
  SHOW(cudaDeviceSetGraphMemAttribute(0, cudaGraphMemAttrUsedMemHigh, &no_mark));
  SHOW(cudaDeviceSetGraphMemAttribute(0, cudaGraphMemAttrUsedMemCurrent, &no_mark));
  SHOW(cudaGetLastError());
  SHOW(cudaGraphExecDestroy(allocating_exec));
  SHOW(cudaGraphDestroy(allocating));

  // A graph that allocates and does not free, destroyed once instantiated (as NVIDIA's
  // graphMemoryFootprint does): its launch places the memory, which stays until cudaFree.
  cudaGraph_t keeping = nullptr;
  SHOW(cudaGraphCreate(&keeping, 0));
  cudaMemAllocNodeParams keep_params = alloc_params;
  keep_params.dptr = nullptr;
  cudaGraphNode_t keep_node = nullptr;
  SHOW(cudaGraphAddMemAllocNode(&keep_node, keeping, nullptr, 0, &keep_params));
  cudaGraphExec_t keeping_exec = nullptr;
  const bool have_keeping = OK(cudaGraphInstantiate(&keeping_exec, keeping, 0));
  SHOW(cudaGraphDestroy(keeping));
  SHOW(cudaGraphLaunch(keeping_exec, s));
  SHOW(cudaStreamSynchronize(s));
  if (have_keeping) EXPECT(OK(cudaFree(keep_params.dptr)));
  SHOW(cudaGraphExecDestroy(keeping_exec));

  // The generic forms: a memset, a kernel after it, and a graph moved into a child node.
  cudaGraph_t generic = nullptr;
  SHOW(cudaGraphCreate(&generic, 0));
  cudaGraphNodeParams generic_memset{};
  generic_memset.type = cudaGraphNodeTypeMemset;
  generic_memset.memset.dst = y;
  generic_memset.memset.value = 0;
  generic_memset.memset.elementSize = sizeof(float);
  generic_memset.memset.width = kN;
  generic_memset.memset.height = 1;
  cudaGraphNode_t generic_memset_node = nullptr;
  SHOW(cudaGraphAddNode(&generic_memset_node, generic, nullptr, nullptr, 0, &generic_memset));
  b = 1.0f;
  void* add_one_args[] = {&y, &one, &b, &n};
  cudaGraphNodeParams generic_kernel{};
  generic_kernel.type = cudaGraphNodeTypeKernel;
  generic_kernel.kernel.func = reinterpret_cast<void*>(scale_add);
  generic_kernel.kernel.gridDim = dim3(kBlocks);
  generic_kernel.kernel.blockDim = dim3(kThreads);
  generic_kernel.kernel.kernelParams = add_one_args;
  cudaGraphNode_t generic_kernel_node = nullptr;
  SHOW(cudaGraphAddNode(&generic_kernel_node, generic, &generic_memset_node, nullptr, 1,
                        &generic_kernel));
  show_type("generic kernel", generic_kernel_node);
  cudaGraph_t moved = nullptr;
  SHOW(cudaGraphCreate(&moved, 0));
  cudaGraphNode_t moved_empty = nullptr;
  SHOW(cudaGraphAddEmptyNode(&moved_empty, moved, nullptr, 0));
  cudaGraphNodeParams generic_child{};
  generic_child.type = cudaGraphNodeTypeGraph;
  generic_child.graph.graph = moved;
  generic_child.graph.ownership = cudaGraphChildGraphOwnershipMove;
  cudaGraphNode_t generic_child_node = nullptr;
  SHOW(cudaGraphAddNode(&generic_child_node, generic, &generic_kernel_node, nullptr, 1,
                        &generic_child));
  generic_memset.memset.value = 0;
  SHOW(cudaGraphNodeSetParams(generic_memset_node, &generic_memset));
  cudaGraphExec_t generic_exec = nullptr;
  const bool have_generic = OK(cudaGraphInstantiate(&generic_exec, generic, 0));
  b = 2.0f;  // y = 0 * 1 + 2
  SHOW(cudaGraphExecNodeSetParams(generic_exec, generic_kernel_node, &generic_kernel));
  SHOW(cudaGraphLaunch(generic_exec, s));
  SHOW(cudaStreamSynchronize(s));
  if (have_generic && OK(cudaMemcpy(result.data(), y, bytes, cudaMemcpyDeviceToHost))) {
    EXPECT(result[0] == 2.0f && result[kN - 1] == 2.0f);
  }
  SHOW(cudaGraphExecDestroy(generic_exec));
  SHOW(cudaGraphDestroy(generic));  // and the graph moved into it

  // Errors the runtime gives natively too.
  SHOW(cudaGraphAddEmptyNode(nullptr, graph, nullptr, 0));
  SHOW(cudaGraphAddKernelNode(&wait_node, graph, nullptr, 0, nullptr));

  SHOW(cudaGraphExecDestroy(exec));
  SHOW(cudaGraphDestroy(waiting));
  SHOW(cudaGraphDestroy(clone));
  SHOW(cudaGraphDestroy(child));
  SHOW(cudaGraphDestroy(graph));
  SHOW(cudaEventDestroy(done));
  SHOW(cudaFree(x));
  SHOW(cudaFree(y));
  SHOW(cudaFree(z));
  SHOW(cudaStreamDestroy(s));
  return 0;
}
