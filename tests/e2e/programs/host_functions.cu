// Host functions and stream callbacks in stream order, across three streams: kernels, host
// functions, callbacks and event records interleaved, one stream waiting for another's event.
// Each host function logs its name and what the device wrote before it (copied back by the
// stream beforehand); on a GPU every ordering is checked: within a stream, a host function runs
// after the stream's earlier work and before its later work; across streams, after the work an
// awaited event covers.
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "check.h"

__global__ void stamp(int* slot, int value) {
  *slot = value;
}

namespace {

std::mutex log_mutex;
std::vector<std::string> run_log;

struct Step {
  const char* name;
  const int* seen;  // host memory the stream copied the device's value into
  int expected;     // what that value must be when the function runs
  bool ok = false;
};

void CUDART_CB host_step(void* data) {
  auto* step = static_cast<Step*>(data);
  step->ok = *step->seen == step->expected;
  const std::lock_guard lock(log_mutex);
  run_log.push_back(step->name);
}

void CUDART_CB callback_step(cudaStream_t, cudaError_t status, void* data) {
  auto* step = static_cast<Step*>(data);
  step->ok = status == cudaSuccess && *step->seen == step->expected;
  const std::lock_guard lock(log_mutex);
  run_log.push_back(step->name);
}

size_t position(const std::string& name) {
  for (size_t i = 0; i < run_log.size(); ++i) {
    if (run_log[i] == name) return i;
  }
  return run_log.size();
}

}  // namespace

int main() {
  cudaStream_t s[3] = {};
  int* device = nullptr;
  int* seen = nullptr;  // pinned: copies into it are ordered in their streams
  for (auto& stream : s) SHOW(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  SHOW(cudaMalloc((void**)&device, 3 * sizeof(int)));
  SHOW(cudaMallocHost((void**)&seen, 3 * sizeof(int)));
  if (seen != nullptr) std::memset(seen, 0, 3 * sizeof(int));
  cudaEvent_t a_done = nullptr;
  SHOW(cudaEventCreateWithFlags(&a_done, cudaEventDisableTiming));

  Step a1{"a1", seen, 1}, a2{"a2", seen, 2}, b1{"b1", seen + 1, 10}, b2{"b2", seen + 1, 20};
  Step c1{"c1", seen, 2};  // stream c waits for a's event: it sees a's second value
  Step c2{"c2", seen + 2, 300};
  auto stamp_and_copy = [&](int stream, int index, int value) {
    stamp<<<1, 1, 0, s[stream]>>>(device + index, value);
    SHOW(cudaMemcpyAsync(seen + index, device + index, sizeof(int), cudaMemcpyDeviceToHost,
                         s[stream]));
  };
  stamp_and_copy(0, 0, 1);
  SHOW(cudaLaunchHostFunc(s[0], host_step, &a1));
  stamp_and_copy(1, 1, 10);
  SHOW(cudaStreamAddCallback(s[1], callback_step, &b1, 0));
  stamp_and_copy(0, 0, 2);
  SHOW(cudaLaunchHostFunc(s[0], host_step, &a2));
  SHOW(cudaEventRecord(a_done, s[0]));
  SHOW(cudaStreamWaitEvent(s[2], a_done, 0));
  SHOW(cudaLaunchHostFunc(s[2], host_step, &c1));
  stamp_and_copy(1, 1, 20);
  SHOW(cudaLaunchHostFunc(s[1], host_step, &b2));
  stamp_and_copy(2, 2, 300);
  SHOW(cudaStreamAddCallback(s[2], callback_step, &c2, 0));
  // Later work in a stream waits for its host function: a copy after a2 sees a2's effects.
  for (auto& stream : s) SHOW(cudaStreamSynchronize(stream));
  SHOW(cudaLaunchHostFunc(s[0], nullptr, nullptr));
  SHOW(cudaStreamAddCallback(s[0], callback_step, &a1, 1));

  const std::lock_guard lock(log_mutex);
  std::printf("host functions run: %zu\n", run_log.size());
  if (run_log.size() == 6) {
    EXPECT(a1.ok && a2.ok && b1.ok && b2.ok && c1.ok && c2.ok);
    EXPECT(position("a1") < position("a2") && position("b1") < position("b2"));
    EXPECT(position("c1") < position("c2"));
    EXPECT(position("a2") < position("c1"));  // c waited for a's event, recorded after a2
  }
  SHOW(cudaEventDestroy(a_done));
  SHOW(cudaFreeHost(seen));
  SHOW(cudaFree(device));
  for (auto& stream : s) SHOW(cudaStreamDestroy(stream));
  return 0;
}
