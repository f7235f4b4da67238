// Host functions that run while the device waits for them, as CUDA runs them:
//   - the enqueue never waits for its host function: the function waits for a flag its own
//     thread sets only after cudaLaunchHostFunc has returned;
//   - graph host nodes run each time their graph is launched, in the graph's order (host node,
//     kernel, host node), are read back as given, and take new parameters in the graph (for
//     later instantiations) and in an executable graph (for its later launches);
//   - a host function captured into a graph runs once per launch of that graph, never at capture.
// Every check is about the host functions, so a device that runs no kernels (the simulated one)
// passes them too; without a device (no stream) the program checks nothing.
#include <atomic>
#include <chrono>
#include <thread>

#include "check.h"

__global__ void bump(int* counter) {
  atomicAdd(counter, 1);
}

namespace {

std::atomic<bool> released{false};
std::atomic<int> clock_ticks{0};  // orders the host functions' runs

struct Waiter {
  bool saw_release = false;
};

void CUDART_CB wait_for_release(void* data) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!released.load() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  static_cast<Waiter*>(data)->saw_release = released.load();
}

struct Counter {
  std::atomic<int> runs{0};
  int last_tick = -1;
};

void CUDART_CB count(void* data) {
  auto* counter = static_cast<Counter*>(data);
  counter->runs++;
  counter->last_tick = clock_ticks++;
}

bool working = false;  // the device took a stream and memory: the checks mean something

}  // namespace

int main() {
  cudaStream_t stream = nullptr;
  int* device = nullptr;
  working = OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  working = OK(cudaMalloc((void**)&device, sizeof(int))) && working;

  // The enqueue returns before its host function has run.
  Waiter waiter;
  SHOW(cudaLaunchHostFunc(stream, wait_for_release, &waiter));
  released = true;
  SHOW(cudaStreamSynchronize(stream));
  EXPECT_IF(working, waiter.saw_release);

  // A graph: host node, kernel, host node.
  Counter first, second, set_in_graph, set_in_exec;
  cudaGraph_t graph = nullptr;
  cudaGraphNode_t before = nullptr, kernel = nullptr, after = nullptr;
  SHOW(cudaGraphCreate(&graph, 0));
  cudaHostNodeParams host{count, &first};
  SHOW(cudaGraphAddHostNode(&before, graph, nullptr, 0, &host));
  void* args[] = {&device};
  cudaKernelNodeParams k{};
  k.func = (void*)bump;
  k.gridDim = dim3(1);
  k.blockDim = dim3(1);
  k.kernelParams = args;
  SHOW(cudaGraphAddKernelNode(&kernel, graph, &before, before != nullptr ? 1 : 0, &k));
  host.userData = &second;
  SHOW(cudaGraphAddHostNode(&after, graph, &kernel, kernel != nullptr ? 1 : 0, &host));
  cudaHostNodeParams read{};
  SHOW(cudaGraphHostNodeGetParams(before, &read));
  EXPECT_IF(working, read.fn == count && read.userData == &first);

  cudaGraphExec_t exec = nullptr;
  SHOW(cudaGraphInstantiate(&exec, graph, 0));
  for (int i = 0; i < 3; ++i) SHOW(cudaGraphLaunch(exec, stream));
  SHOW(cudaStreamSynchronize(stream));
  std::printf("graph launched 3 times: first ran %d, second ran %d\n", first.runs.load(),
              second.runs.load());
  EXPECT_IF(working, first.runs == 3 && second.runs == 3);
  EXPECT_IF(working, first.last_tick < second.last_tick);

  // New parameters in the graph reach later instantiations only; in the executable graph, its
  // later launches.
  host.userData = &set_in_graph;
  SHOW(cudaGraphHostNodeSetParams(after, &host));
  SHOW(cudaGraphHostNodeGetParams(after, &read));
  EXPECT_IF(working, read.fn == count && read.userData == &set_in_graph);
  SHOW(cudaGraphLaunch(exec, stream));
  SHOW(cudaStreamSynchronize(stream));
  host.userData = &set_in_exec;
  SHOW(cudaGraphExecHostNodeSetParams(exec, after, &host));
  SHOW(cudaGraphLaunch(exec, stream));
  SHOW(cudaStreamSynchronize(stream));
  cudaGraphExec_t again = nullptr;
  SHOW(cudaGraphInstantiate(&again, graph, 0));
  SHOW(cudaGraphLaunch(again, stream));
  SHOW(cudaStreamSynchronize(stream));
  std::printf("after the sets: second %d, set in graph %d, set in exec %d\n", second.runs.load(),
              set_in_graph.runs.load(), set_in_exec.runs.load());
  EXPECT_IF(working, second.runs == 4 && set_in_exec.runs == 1 && set_in_graph.runs == 1);
  SHOW(cudaGraphHostNodeSetParams(after, nullptr));

  // A host function captured into a graph runs at each launch, not at capture.
  Counter captured;
  cudaGraph_t capture = nullptr;
  cudaGraphExec_t capture_exec = nullptr;
  SHOW(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  bump<<<1, 1, 0, stream>>>(device);
  SHOW(cudaLaunchHostFunc(stream, count, &captured));
  SHOW(cudaStreamEndCapture(stream, &capture));
  std::printf("captured host function ran at capture: %d\n", captured.runs.load());
  SHOW(cudaGraphInstantiate(&capture_exec, capture, 0));
  SHOW(cudaGraphLaunch(capture_exec, stream));
  SHOW(cudaGraphLaunch(capture_exec, stream));
  SHOW(cudaStreamSynchronize(stream));
  std::printf("captured host function ran: %d\n", captured.runs.load());
  EXPECT_IF(working, captured.runs == 2);

  SHOW(cudaGraphExecDestroy(capture_exec));
  SHOW(cudaGraphDestroy(capture));
  SHOW(cudaGraphExecDestroy(again));
  SHOW(cudaGraphExecDestroy(exec));
  SHOW(cudaGraphDestroy(graph));
  SHOW(cudaFree(device));
  SHOW(cudaStreamDestroy(stream));
  return 0;
}
