// Conditional graph nodes: an if, a while and a switch, each with bodies the runtime makes with
// the node, filled with kernel nodes, their handles set on the device by a kernel of the graph
// (cudaGraphSetConditional) or by their default at each launch:
//   - the if runs its body when a kernel sets its condition, and its else body when not;
//   - the while runs its body until the body's kernel clears the condition (five times);
//   - the switch runs the body its handle's default names;
//   - a node may name only a handle made for its own graph;
//   - a while added to the graph a capture is building, between captured kernels, its handle made
//     on that graph and its body filled by capturing into it.
// Checks of what kernels computed need a GPU (the simulated device runs none); the others - the
// handles, the bodies and their node types, the refusal, the launches - hold on the simulated
// device too. Without a device (no stream) the program checks nothing.
#include <cstdio>

#include "check.h"

__global__ void set_condition(cudaGraphConditionalHandle handle, int value) {
  cudaGraphSetConditional(handle, value);
}

__global__ void mark(int* slots, int slot, int value) {
  slots[slot] += value;
}

// A while body: counts down and keeps the loop going while anything is left.
__global__ void count_down(int* slots, cudaGraphConditionalHandle handle) {
  slots[3] -= 1;
  cudaGraphSetConditional(handle, slots[3] > 0 ? 1 : 0);
}

namespace {

bool working = false;

cudaGraphNode_t add_kernel(cudaGraph_t graph, const cudaGraphNode_t* after, size_t n, void* kernel,
                           void** args) {
  cudaKernelNodeParams p{};
  p.func = kernel;
  p.gridDim = dim3(1);
  p.blockDim = dim3(1);
  p.kernelParams = args;
  cudaGraphNode_t node = nullptr;
  SHOW(cudaGraphAddKernelNode(&node, graph, after, n, &p));
  return node;
}

// A conditional node of `type` with `size` bodies; the bodies in `bodies`.
cudaGraphNode_t add_conditional(cudaGraph_t graph, const cudaGraphNode_t* after, size_t n,
                                cudaGraphConditionalHandle handle,
                                cudaGraphConditionalNodeType type, unsigned size,
                                cudaGraph_t* bodies) {
  cudaGraphNodeParams p{};
  p.type = cudaGraphNodeTypeConditional;
  p.conditional.handle = handle;
  p.conditional.type = type;
  p.conditional.size = size;
  cudaGraphNode_t node = nullptr;
  if (!OK(cudaGraphAddNode(&node, graph, after, nullptr, n, &p))) return nullptr;
  EXPECT(p.conditional.phGraph_out != nullptr);
  for (unsigned i = 0; i < size && p.conditional.phGraph_out != nullptr; ++i) {
    bodies[i] = p.conditional.phGraph_out[i];
  }
  return node;
}

}  // namespace

int main() {
  cudaStream_t stream = nullptr;
  working = OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  if (!working) return 0;
  int* slots = nullptr;  // 0: the if's body, 1: its else body, 2: the switch's body, 3: the count
  if (!OK(cudaMalloc(&slots, 8 * sizeof(int)))) return 0;
  SHOW(cudaMemset(slots, 0, 8 * sizeof(int)));
  const int count = 5;
  SHOW(cudaMemcpy(slots + 3, &count, sizeof count, cudaMemcpyHostToDevice));

  cudaGraph_t graph = nullptr;
  SHOW(cudaGraphCreate(&graph, 0));
  cudaGraphConditionalHandle if_handle = 0, while_handle = 0, switch_handle = 0;
  SHOW(cudaGraphConditionalHandleCreate(&if_handle, graph, 0, 0));
  SHOW(cudaGraphConditionalHandleCreate(&while_handle, graph, 1, cudaGraphCondAssignDefault));
  SHOW(cudaGraphConditionalHandleCreate(&switch_handle, graph, 2, cudaGraphCondAssignDefault));

  // The if: a kernel sets its condition, then the node runs its first body (not the else).
  int one = 1;
  void* set_args[] = {&if_handle, &one};
  cudaGraphNode_t setter = add_kernel(graph, nullptr, 0, (void*)set_condition, set_args);
  cudaGraph_t if_bodies[2] = {};
  cudaGraphNode_t if_node =
      add_conditional(graph, &setter, 1, if_handle, cudaGraphCondTypeIf, 2, if_bodies);
  int slot0 = 0, slot1 = 1, slot2 = 2, ten = 10, twenty = 20;
  void* then_args[] = {&slots, &slot0, &ten};
  void* else_args[] = {&slots, &slot1, &twenty};
  add_kernel(if_bodies[0], nullptr, 0, (void*)mark, then_args);
  add_kernel(if_bodies[1], nullptr, 0, (void*)mark, else_args);

  // The while: its body counts down until nothing is left.
  cudaGraph_t while_body = nullptr;
  cudaGraphNode_t while_node =
      add_conditional(graph, &if_node, 1, while_handle, cudaGraphCondTypeWhile, 1, &while_body);
  void* count_args[] = {&slots, &while_handle};
  add_kernel(while_body, nullptr, 0, (void*)count_down, count_args);

  // The switch: three cases, the default names the third.
  cudaGraph_t cases[3] = {};
  add_conditional(graph, &while_node, 1, switch_handle, cudaGraphCondTypeSwitch, 3, cases);
  int values[3] = {100, 200, 300};
  void* case_args[3][3] = {
      {&slots, &slot2, &values[0]}, {&slots, &slot2, &values[1]}, {&slots, &slot2, &values[2]}};
  for (int i = 0; i < 3; ++i) add_kernel(cases[i], nullptr, 0, (void*)mark, case_args[i]);

  cudaGraphNodeType type = cudaGraphNodeTypeEmpty;
  if (OK(cudaGraphNodeGetType(if_node, &type))) EXPECT(type == cudaGraphNodeTypeConditional);
  size_t body_nodes = 0;
  if (OK(cudaGraphGetNodes(cases[2], nullptr, &body_nodes))) EXPECT(body_nodes == 1);

  // A node may name only a handle made for its own graph.
  cudaGraph_t other = nullptr;
  SHOW(cudaGraphCreate(&other, 0));
  cudaGraphNodeParams foreign{};
  foreign.type = cudaGraphNodeTypeConditional;
  foreign.conditional.handle = if_handle;
  foreign.conditional.type = cudaGraphCondTypeIf;
  foreign.conditional.size = 1;
  cudaGraphNode_t refused = nullptr;
  EXPECT(cudaGraphAddNode(&refused, other, nullptr, nullptr, 0, &foreign) != cudaSuccess);
  (void)cudaGetLastError();
  SHOW(cudaGraphDestroy(other));

  cudaGraphExec_t exec = nullptr;
  if (OK(cudaGraphInstantiate(&exec, graph, 0))) {
    SHOW(cudaGraphLaunch(exec, stream));
    SHOW(cudaStreamSynchronize(stream));
    int got[4] = {};
    SHOW(cudaMemcpy(got, slots, sizeof got, cudaMemcpyDeviceToHost));
    std::printf("if %d, else %d, switch %d, count %d\n", got[0], got[1], got[2], got[3]);
    EXPECT(got[0] == 10 && got[1] == 0);  // the if's body ran, not its else
    EXPECT(got[3] == 0);                  // the while ran until the count was gone
    EXPECT(got[2] == 300);                // the switch ran its third case
    SHOW(cudaGraphExecDestroy(exec));
  }
  SHOW(cudaGraphDestroy(graph));

  // A conditional node added to the graph a capture is building (as NVIDIA's graphConditionalNodes
  // sample does): its handle made on the capture's graph, the node after the captured kernel and
  // the capture going on after it; its body filled by capturing into it. The body clears the
  // condition, so the while runs it once.
  cudaStream_t capture = nullptr, body_stream = nullptr;
  SHOW(cudaStreamCreateWithFlags(&capture, cudaStreamNonBlocking));
  SHOW(cudaStreamCreateWithFlags(&body_stream, cudaStreamNonBlocking));
  SHOW(cudaMemset(slots, 0, 8 * sizeof(int)));
  SHOW(cudaStreamBeginCapture(capture, cudaStreamCaptureModeGlobal));
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  cudaGraph_t building = nullptr;
  const cudaGraphNode_t* dependencies = nullptr;
  size_t count_of = 0;
  SHOW(cudaStreamGetCaptureInfo(capture, &status, nullptr, &building, &dependencies, nullptr,
                                &count_of));
  cudaGraphConditionalHandle captured_handle = 0;
  SHOW(cudaGraphConditionalHandleCreate(&captured_handle, building, 1, cudaGraphCondAssignDefault));
  int slot4 = 4, slot5 = 5, zero = 0;
  mark<<<1, 1, 0, capture>>>(slots, slot4, 1);
  SHOW(cudaStreamGetCaptureInfo(capture, &status, nullptr, &building, &dependencies, nullptr,
                                &count_of));
  std::printf("capture status %d, dependencies %zu\n", static_cast<int>(status), count_of);
  cudaGraphNodeParams loop{};
  loop.type = cudaGraphNodeTypeConditional;
  loop.conditional.handle = captured_handle;
  loop.conditional.type = cudaGraphCondTypeWhile;
  loop.conditional.size = 1;
  cudaGraphNode_t loop_node = nullptr;
  const bool added =
      OK(cudaGraphAddNode(&loop_node, building, dependencies, nullptr, count_of, &loop));
  EXPECT(added && loop.conditional.phGraph_out != nullptr);
  SHOW(cudaStreamUpdateCaptureDependencies(capture, &loop_node, nullptr, 1,
                                           cudaStreamSetCaptureDependencies));
  mark<<<1, 1, 0, capture>>>(slots, slot5, 1);
  cudaGraph_t captured = nullptr;
  SHOW(cudaStreamEndCapture(capture, &captured));
  EXPECT(captured != nullptr && captured == building);
  size_t captured_nodes = 0;
  if (OK(cudaGraphGetNodes(captured, nullptr, &captured_nodes))) EXPECT(captured_nodes == 3);
  if (added && loop.conditional.phGraph_out != nullptr) {
    SHOW(cudaStreamBeginCaptureToGraph(body_stream, loop.conditional.phGraph_out[0], nullptr,
                                       nullptr, 0, cudaStreamCaptureModeGlobal));
    void* clear_args[] = {&captured_handle, &zero};
    SHOW(cudaLaunchKernel((void*)set_condition, dim3(1), dim3(1), clear_args, 0, body_stream));
    cudaGraph_t body = nullptr;
    SHOW(cudaStreamEndCapture(body_stream, &body));
  }
  cudaGraphExec_t captured_exec = nullptr;
  if (OK(cudaGraphInstantiate(&captured_exec, captured, 0))) {
    SHOW(cudaGraphLaunch(captured_exec, capture));
    SHOW(cudaStreamSynchronize(capture));
    int got[8] = {};
    SHOW(cudaMemcpy(got, slots, sizeof got, cudaMemcpyDeviceToHost));
    EXPECT(got[4] == 1 && got[5] == 1);  // the kernels before and after the node ran
    SHOW(cudaGraphExecDestroy(captured_exec));
  }
  SHOW(cudaGraphDestroy(captured));
  SHOW(cudaStreamDestroy(body_stream));
  SHOW(cudaStreamDestroy(capture));
  SHOW(cudaFree(slots));
  SHOW(cudaStreamDestroy(stream));
  std::printf("done\n");
  return 0;
}
