// Host functions and user objects through the runtime stub (run through gvirtus-run, over a
// backend with the accepting device, whose streams run host functions as they are enqueued): an
// enqueue returns before its host function has run, a stream's host functions run in order, a
// stream callback gets the stream's status, and a user object's destructor runs on the client
// once its last reference is gone, a release beyond the references held being refused. Prints
// "ok" and exits 0 when every check holds; names each failure otherwise.
#include <cuda_runtime_api.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

namespace {

int failures = 0;

void check(bool ok, const char* what) {
  if (ok) return;
  std::printf("FAILED: %s\n", what);
  ++failures;
}

std::atomic<bool> released{false};
std::atomic<bool> saw_release{false};

void CUDART_CB wait_for_release(void*) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!released && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  saw_release = released.load();
}

std::vector<int> order;  // the host functions' runs; only the callback thread appends

void CUDART_CB append(void* data) {
  order.push_back(*static_cast<int*>(data));
}

std::atomic<int> callback_status{-1};

void CUDART_CB callback(cudaStream_t, cudaError_t status, void*) {
  callback_status = status;
}

std::atomic<int> destroyed{0};

void CUDART_CB destroy(void*) {
  ++destroyed;
}

}  // namespace

int main() {
  check(cudaLaunchHostFunc(nullptr, wait_for_release, nullptr) == cudaSuccess, "enqueue");
  released = true;  // only now: natively the enqueue never waits for its function
  check(cudaStreamSynchronize(nullptr) == cudaSuccess, "synchronise");
  check(saw_release, "the host function ran after its enqueue returned");

  int values[10];
  for (int i = 0; i < 10; ++i) {
    values[i] = i;
    check(cudaLaunchHostFunc(nullptr, append, &values[i]) == cudaSuccess, "enqueue in order");
  }
  check(cudaStreamSynchronize(nullptr) == cudaSuccess, "synchronise after ten");
  bool in_order = order.size() == 10;
  for (size_t i = 0; in_order && i < order.size(); ++i) in_order = order[i] == static_cast<int>(i);
  check(in_order, "ten host functions ran once each, in stream order");

  check(cudaStreamAddCallback(nullptr, callback, nullptr, 0) == cudaSuccess, "add a callback");
  check(cudaStreamSynchronize(nullptr) == cudaSuccess, "synchronise after the callback");
  check(callback_status == cudaSuccess, "the callback got the stream's status");

  cudaUserObject_t object = nullptr;
  check(cudaUserObjectCreate(&object, nullptr, destroy, 2, cudaUserObjectNoDestructorSync) ==
            cudaSuccess,
        "create a user object");
  check(cudaUserObjectRelease(object, 1) == cudaSuccess, "release one of two references");
  check(cudaStreamSynchronize(nullptr) == cudaSuccess, "synchronise");
  check(destroyed == 0, "not destroyed while a reference is held");
  check(cudaUserObjectRelease(object, 2) == cudaErrorInvalidValue,
        "a release of more references than held is refused");
  check(cudaUserObjectRelease(object, 1) == cudaSuccess, "release the last reference");
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (destroyed == 0 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  check(destroyed == 1, "the destructor ran once, on the client");
  check(cudaUserObjectRetain(object, 1) == cudaErrorInvalidValue,
        "an object with no reference left is refused");

  if (failures == 0) std::printf("ok\n");
  return failures == 0 ? 0 : 1;
}
