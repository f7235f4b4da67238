// streams_events: work split over several non-blocking streams (asynchronous copies from pinned
// memory, kernels, copies back), events recorded on each stream, one stream waiting on the
// others' events (cudaStreamWaitEvent) before a kernel over the whole buffer, and the elapsed
// time between two events. The results are checked against the CPU.
//   streams_events [--timing]
// Prints PASSED or FAILED (exit 0 / 1); on a CUDA error, the error's name (exit 1). The elapsed
// time is printed only with --timing, so that the default output can be compared between runs.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "sample_check.h"

constexpr int kStreams = 4;
constexpr int kChunk = 1 << 18;  // ints per stream
constexpr int kTotal = kStreams * kChunk;

__global__ void scale_chunk(int* data, int n, int chunk) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    data[i] = data[i] * 2 + chunk;
}
__global__ void add_everywhere(int* data, int n, int value) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    data[i] += value;
}

int main(int argc, char** argv) {
  const bool timing = argc > 1 && std::strcmp(argv[1], "--timing") == 0;
  std::printf("streams_events: %d streams, %d ints each\n", kStreams, kChunk);

  int *input = nullptr, *chunks_out = nullptr, *final_out = nullptr, *dev = nullptr;
  CHECK(cudaMallocHost(&input, kTotal * sizeof(int)));
  CHECK(cudaMallocHost(&chunks_out, kTotal * sizeof(int)));
  CHECK(cudaMallocHost(&final_out, kTotal * sizeof(int)));
  CHECK(cudaMalloc(&dev, kTotal * sizeof(int)));
  for (int i = 0; i < kTotal; ++i) input[i] = (i % 5003) - 2500;
  std::memset(chunks_out, 0, kTotal * sizeof(int));
  std::memset(final_out, 0, kTotal * sizeof(int));

  cudaStream_t streams[kStreams];
  cudaEvent_t done[kStreams];
  for (int s = 0; s < kStreams; ++s) {
    CHECK(cudaStreamCreateWithFlags(&streams[s], cudaStreamNonBlocking));
    CHECK(cudaEventCreateWithFlags(&done[s], cudaEventDisableTiming));
  }
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));

  CHECK(cudaEventRecord(start, streams[0]));
  // Stage 1: each stream copies its chunk in, scales it, copies it out, and records an event.
  for (int s = 0; s < kStreams; ++s) {
    int* chunk = dev + s * kChunk;
    CHECK(cudaMemcpyAsync(chunk, input + s * kChunk, kChunk * sizeof(int), cudaMemcpyHostToDevice,
                          streams[s]));
    scale_chunk<<<256, 256, 0, streams[s]>>>(chunk, kChunk, s);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpyAsync(chunks_out + s * kChunk, chunk, kChunk * sizeof(int),
                          cudaMemcpyDeviceToHost, streams[s]));
    CHECK(cudaEventRecord(done[s], streams[s]));
  }
  // Stage 2: stream 0 waits for every other stream, then works on the whole buffer.
  for (int s = 1; s < kStreams; ++s) CHECK(cudaStreamWaitEvent(streams[0], done[s], 0));
  add_everywhere<<<512, 256, 0, streams[0]>>>(dev, kTotal, 7);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpyAsync(final_out, dev, kTotal * sizeof(int), cudaMemcpyDeviceToHost, streams[0]));
  CHECK(cudaEventRecord(stop, streams[0]));
  CHECK(cudaEventSynchronize(stop));
  for (int s = 0; s < kStreams; ++s) CHECK(cudaStreamSynchronize(streams[s]));
  for (int s = 0; s < kStreams; ++s) CHECK(cudaEventQuery(done[s]));

  float ms = -1;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  std::printf("elapsed time not negative: %s\n", ms >= 0 ? "yes" : "no");
  if (timing) std::printf("elapsed time: %.3f ms\n", ms);

  long long wrong_chunks = 0, wrong_final = 0;
  for (int i = 0; i < kTotal; ++i) {
    const int chunk = i / kChunk;
    const int scaled = input[i] * 2 + chunk;
    wrong_chunks += chunks_out[i] != scaled;
    wrong_final += final_out[i] != scaled + 7;
  }
  std::printf("stage 1 (per stream): %lld wrong of %d\n", wrong_chunks, kTotal);
  std::printf("stage 2 (after cudaStreamWaitEvent): %lld wrong of %d\n", wrong_final, kTotal);

  for (int s = 0; s < kStreams; ++s) {
    CHECK(cudaEventDestroy(done[s]));
    CHECK(cudaStreamDestroy(streams[s]));
  }
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  CHECK(cudaFree(dev));
  CHECK(cudaFreeHost(input));
  CHECK(cudaFreeHost(chunks_out));
  CHECK(cudaFreeHost(final_out));
  const bool passed = wrong_chunks == 0 && wrong_final == 0 && ms >= 0;
  std::printf("%s\n", passed ? "PASSED" : "FAILED");
  return passed ? 0 : 1;
}
