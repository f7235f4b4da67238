// Streams and events: every create variant, queries, ordering, timing.
#include "check.h"

int main() {
  cudaStream_t a = nullptr, b = nullptr, c = nullptr;
  const bool have_a = OK(cudaStreamCreate(&a));
  const bool have_b = OK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
  int least = 0, greatest = 0;
  SHOW(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  const bool have_c = OK(cudaStreamCreateWithPriority(&c, cudaStreamDefault, greatest));
  cudaEvent_t start = nullptr, stop = nullptr, sync = nullptr;
  const bool have_start = OK(cudaEventCreate(&start));
  const bool have_stop = OK(cudaEventCreateWithFlags(&stop, cudaEventDefault));
  const bool have_sync = OK(cudaEventCreateWithFlags(&sync, cudaEventDisableTiming));
  void* dev = nullptr;
  const bool have_dev = OK(cudaMalloc(&dev, 1 << 20));
  if (have_a && have_start && have_stop && have_dev) {
    SHOW(cudaEventRecord(start, a));
    SHOW(cudaMemsetAsync(dev, 1, 1 << 20, a));
    SHOW(cudaEventRecord(stop, a));
    SHOW(cudaEventSynchronize(stop));
    SHOW(cudaEventQuery(stop));
    float ms = -1;
    if (OK(cudaEventElapsedTime(&ms, start, stop))) EXPECT(ms >= 0);
  } else {
    SHOW(cudaEventRecord(start, a));
    SHOW(cudaMemsetAsync(dev, 1, 1 << 20, a));
  }
  if (have_c) {
    int priority = 12345;
    if (OK(cudaStreamGetPriority(c, &priority))) EXPECT(priority == greatest);
  }
  if (have_b) {
    unsigned flags = 0;
    if (OK(cudaStreamGetFlags(b, &flags))) EXPECT(flags == cudaStreamNonBlocking);
  }
  if (have_start)
    SHOW(cudaEventRecordWithFlags(start, a, cudaEventRecordDefault));
  else
    SHOW(cudaEventRecordWithFlags(start, a, 0));
  if (have_b && have_sync) {
    SHOW(cudaEventRecord(sync, b));
    SHOW(cudaStreamWaitEvent(a, sync, 0));
    SHOW(cudaStreamSynchronize(a));
    SHOW(cudaStreamQuery(a));
  }
  if (have_dev) SHOW(cudaFree(dev));
  if (have_start) SHOW(cudaEventDestroy(start));
  if (have_stop) SHOW(cudaEventDestroy(stop));
  if (have_sync) SHOW(cudaEventDestroy(sync));
  if (have_a) SHOW(cudaStreamDestroy(a));
  if (have_b) SHOW(cudaStreamDestroy(b));
  if (have_c) SHOW(cudaStreamDestroy(c));
  SHOW(cudaStreamSynchronize(nullptr));
  SHOW(cudaDeviceSynchronize());
  SHOW(cudaGetLastError());
  return 0;
}
