// Client threads and the backend's threads: a session serves its first client thread on the
// thread that reads its calls, and keeps serving it there when host functions begin (another
// thread takes over the reading), every other client thread on a thread of its own
// (backend/session.cpp). The context made current before a host function stays current after it,
// on the first thread and on a second one; a thread that never made one current has none; and
// what one thread sent ahead comes before what another does after it. Each call is printed with
// its result (simulated_mode_test.cpp; natively the same on a GPU).
#include <cuda.h>

#include <atomic>
#include <cstdio>
#include <thread>

#include "show_calls.h"

namespace {

void CUDA_CB mark(void* data) {
  *static_cast<int*>(data) += 1;
}

}  // namespace

int main() {
  CUdevice device = 0;
  const CUcontext context = show_primary_context(device);
  CUdeviceptr before = 0;
  SHOW(cuMemAlloc(&before, 4096));

  // A second thread with the context of its own making, before host functions begin.
  std::thread([&] {
    SHOW(cuCtxSetCurrent(context));
    CUdeviceptr memory = 0;
    SHOW(cuMemAlloc(&memory, 4096));
    SHOW(cuMemFree(memory));
  }).join();

  // The first host function: the session's threads move to executors.
  CUstream stream = nullptr;
  SHOW(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  int marks = 0;
  SHOW(cuLaunchHostFunc(stream, mark, &marks));
  SHOW(cuStreamSynchronize(stream));
  std::printf("host function ran: %d\n", marks);

  // The first thread's context went along.
  CUdeviceptr after = 0;
  SHOW(cuMemAlloc(&after, 4096));
  size_t free_bytes = 0, total_bytes = 0;
  SHOW(cuMemGetInfo(&free_bytes, &total_bytes));
  CUstream second = nullptr;
  SHOW(cuStreamCreate(&second, 0));
  CUcontext current = nullptr;
  SHOW(cuCtxGetCurrent(&current));
  std::printf("still current: %s\n", current == context ? "yes" : "no");

  // A new thread has no context until it makes one current; then it has.
  std::thread([&] {
    CUdeviceptr memory = 0;
    SHOW(cuMemAlloc(&memory, 4096));
    SHOW(cuCtxSetCurrent(context));
    SHOW(cuMemAlloc(&memory, 4096));
    SHOW(cuMemFree(memory));
  }).join();

  // What one thread sent ahead comes before what another does after it: 2000 sets of one word on
  // a stream by one thread, then, told by it, a second thread reads the word.
  CUdeviceptr word = 0;
  SHOW(cuMemAlloc(&word, sizeof(unsigned)));
  std::atomic<bool> sent{false};
  unsigned seen = 0;
  std::thread reader([&] {
    SHOW(cuCtxSetCurrent(context));
    while (!sent.load()) std::this_thread::yield();
    SHOW(cuMemcpyDtoH(&seen, word, sizeof seen));
  });
  std::thread writer([&] {
    cuCtxSetCurrent(context);
    CUresult worst = CUDA_SUCCESS;
    for (unsigned i = 1; i <= 2000; ++i) {
      const CUresult r = cuMemsetD32Async(word, i, 1, second);
      if (r != CUDA_SUCCESS) worst = r;
    }
    std::printf("2000 sets sent ahead -> %d\n", static_cast<int>(worst));
    sent = true;
  });
  writer.join();
  reader.join();
  std::printf("the other thread read: %u\n", seen);
  SHOW(cuMemFree(word));

  // And the first thread's is still its own.
  CUdeviceptr last = 0;
  SHOW(cuMemAlloc(&last, 4096));
  SHOW(cuMemFree(last));
  SHOW(cuMemFree(after));
  SHOW(cuMemFree(before));
  SHOW(cuStreamDestroy(second));
  SHOW(cuStreamDestroy(stream));
  SHOW(cuDevicePrimaryCtxRelease(device));
  return 0;
}
