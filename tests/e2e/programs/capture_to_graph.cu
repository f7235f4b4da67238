// A capture into a graph of the program's, with its dependencies set by hand: the graph begins
// with an empty node E; a capture into it, after E, takes a kernel and a host function; its
// dependencies are then set back to {E}, so a second kernel runs beside the first two rather
// than after them. The graph is the program's own again at the end of the capture, with four
// nodes, one root and two nodes depending on E; launched twice, it runs its host function twice.
#include <atomic>

#include "check.h"

__global__ void mark(int* slot, int value) {
  *slot = value;
}

namespace {

std::atomic<int> host_runs{0};

void CUDART_CB count(void*) {
  host_runs++;
}

bool working = false;  // the device took a stream and memory: the checks mean something

}  // namespace

int main() {
  cudaStream_t stream = nullptr;
  int* device = nullptr;
  working = OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  working = OK(cudaMalloc((void**)&device, 2 * sizeof(int))) && working;
  SHOW(cudaMemset(device, 0, 2 * sizeof(int)));

  cudaGraph_t graph = nullptr;
  cudaGraphNode_t empty = nullptr;
  SHOW(cudaGraphCreate(&graph, 0));
  SHOW(cudaGraphAddEmptyNode(&empty, graph, nullptr, 0));
  SHOW(cudaStreamBeginCaptureToGraph(stream, graph, &empty, nullptr, 1,
                                     cudaStreamCaptureModeThreadLocal));
  mark<<<1, 1, 0, stream>>>(device, 1);
  SHOW(cudaLaunchHostFunc(stream, count, nullptr));
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  cudaGraph_t capturing_into = nullptr;
  const cudaGraphNode_t* dependencies = nullptr;
  size_t n = 0;
  SHOW(cudaStreamGetCaptureInfo(stream, &status, nullptr, &capturing_into, &dependencies, nullptr,
                                &n));
  EXPECT_IF(working, status == cudaStreamCaptureStatusActive && capturing_into == graph && n == 1);
  SHOW(cudaStreamUpdateCaptureDependencies(stream, &empty, nullptr, 1,
                                           cudaStreamSetCaptureDependencies));
  mark<<<1, 1, 0, stream>>>(device + 1, 2);
  cudaGraph_t captured = nullptr;
  SHOW(cudaStreamEndCapture(stream, &captured));
  EXPECT_IF(working, captured == graph);
  std::printf("host function ran at capture: %d\n", host_runs.load());
  // Not capturing any more: the dependencies cannot be set.
  SHOW(cudaStreamUpdateCaptureDependencies(stream, &empty, nullptr, 1,
                                           cudaStreamAddCaptureDependencies));

  size_t nodes = 0, roots = 0, after_empty = 0;
  SHOW(cudaGraphGetNodes(graph, nullptr, &nodes));
  SHOW(cudaGraphGetRootNodes(graph, nullptr, &roots));
  SHOW(cudaGraphNodeGetDependentNodes(empty, nullptr, nullptr, &after_empty));
  std::printf("nodes %zu, roots %zu, after the empty node %zu\n", nodes, roots, after_empty);
  EXPECT_IF(working, nodes == 4 && roots == 1 && after_empty == 2);

  cudaGraphExec_t exec = nullptr;
  SHOW(cudaGraphInstantiate(&exec, graph, 0));
  SHOW(cudaGraphLaunch(exec, stream));
  SHOW(cudaGraphLaunch(exec, stream));
  SHOW(cudaStreamSynchronize(stream));
  std::printf("host function ran: %d\n", host_runs.load());
  EXPECT_IF(working, host_runs == 2);
  int marks[2] = {};
  if (OK(cudaMemcpy(marks, device, sizeof marks, cudaMemcpyDeviceToHost))) {
    EXPECT_IF(working, marks[0] == 1 && marks[1] == 2);
  }

  SHOW(cudaGraphExecDestroy(exec));
  SHOW(cudaGraphDestroy(graph));
  SHOW(cudaFree(device));
  SHOW(cudaStreamDestroy(stream));
  return 0;
}
