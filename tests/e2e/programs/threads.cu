// Several host threads, each with its own current device, streams, allocations, kernels, copies
// and last-error state, plus kernels from every thread into one shared allocation. Each thread
// collects its lines; they are printed after the joins in thread order, so the output does not
// depend on scheduling.
#include <cstdarg>
#include <string>
#include <thread>
#include <vector>

#include "check.h"

constexpr int kThreads = 4;
constexpr int kRounds = 3;
constexpr int kSlice = 10000;  // ints of the shared allocation per thread

struct Log {
  std::vector<std::string> lines;
  void note(const char* format, ...) {
    char text[256];
    va_list args;
    va_start(args, format);
    std::vsnprintf(text, sizeof text, format, args);
    va_end(args);
    lines.push_back(text);
  }
  bool ok(cudaError_t rc, const char* text) {
    note("%-44s -> %d %s", text, (int)rc, cudaGetErrorName(rc));
    return rc == cudaSuccess;
  }
  void expect(bool cond, const char* text) { note("check %-38s %s", text, cond ? "ok" : "FAILED"); }
};
#define T_OK(call) log.ok((call), #call)
#define T_SHOW(call) (void)log.ok((call), #call)
#define T_EXPECT(cond) log.expect((cond), #cond)

__global__ void k_affine(int* data, int n, int mul, int add) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = data[i] * mul + add;
}
__global__ void k_slice(int* slice, int n, int id) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    slice[i] = id * 1000000 + i;
}

void worker(int id, Log& log, int* shared) {
  T_SHOW(cudaSetDevice(0));
  int device = -1;
  if (T_OK(cudaGetDevice(&device))) log.note("current device %d", device);
  T_SHOW(cudaSetDevice(1));  // cudaErrorInvalidDevice with one device
  T_SHOW(cudaGetLastError());
  T_SHOW(cudaGetLastError());
  T_SHOW(cudaSetDevice(0));
  device = -1;
  if (T_OK(cudaGetDevice(&device))) log.note("current device %d", device);

  cudaStream_t stream = nullptr;
  const bool have_stream = id % 2 == 0
                               ? T_OK(cudaStreamCreate(&stream))
                               : T_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (int round = 0; round < kRounds; ++round) {
    const int n = 4096 + id * 1000 + round * 17;
    std::vector<int> host(n), back(n, -1);
    for (int i = 0; i < n; ++i) host[i] = i - id * 100 + round;
    int* dev = nullptr;
    if (!T_OK(cudaMalloc(&dev, n * sizeof(int)))) continue;
    const int mul = id + 2, add = round * 100 - id;
    if (T_OK(cudaMemcpyAsync(dev, host.data(), n * sizeof(int), cudaMemcpyHostToDevice, stream))) {
      k_affine<<<(n + 255) / 256, 256, 0, stream>>>(dev, n, mul, add);
      if (log.ok(cudaGetLastError(), "launch k_affine") &&
          T_OK(
              cudaMemcpyAsync(back.data(), dev, n * sizeof(int), cudaMemcpyDeviceToHost, stream)) &&
          T_OK(cudaStreamSynchronize(stream))) {
        bool all = true;
        for (int i = 0; i < n; ++i) all = all && back[i] == host[i] * mul + add;
        log.note("round %d: %d values", round, n);
        T_EXPECT(all);
      }
    }
    T_SHOW(cudaFree(dev));
  }

  // This thread's slice of the shared allocation, from the per-thread default stream.
  k_slice<<<8, 128, 0, cudaStreamPerThread>>>(shared + id * kSlice, kSlice, id);
  T_SHOW(cudaGetLastError());
  T_SHOW(cudaStreamSynchronize(cudaStreamPerThread));

  cudaEvent_t event = nullptr;
  if (T_OK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming))) {
    T_SHOW(cudaEventRecord(event, stream));
    T_SHOW(cudaEventSynchronize(event));
    T_SHOW(cudaEventQuery(event));
    T_SHOW(cudaEventDestroy(event));
  }
  if (have_stream) T_SHOW(cudaStreamDestroy(stream));
  T_SHOW(cudaGetLastError());
}

int main() {
  int count = -1;
  if (OK(cudaGetDeviceCount(&count))) std::printf("devices: %s\n", count > 0 ? "some" : "none");
  int* shared = nullptr;
  const bool have_shared = OK(cudaMalloc(&shared, kThreads * kSlice * sizeof(int)));
  if (have_shared) SHOW(cudaMemset(shared, 0xff, kThreads * kSlice * sizeof(int)));

  std::vector<Log> logs(kThreads);
  std::vector<std::thread> threads;
  for (int id = 0; id < kThreads; ++id)
    threads.emplace_back(worker, id, std::ref(logs[id]), shared);
  for (std::thread& t : threads) t.join();
  for (int id = 0; id < kThreads; ++id) {
    std::printf("-- thread %d\n", id);
    for (const std::string& line : logs[id].lines) std::printf("%s\n", line.c_str());
  }

  std::printf("-- main thread\n");
  SHOW(cudaGetLastError());  // the threads' errors were theirs
  int device = -1;
  if (OK(cudaGetDevice(&device))) std::printf("current device %d\n", device);
  if (have_shared) {
    std::vector<int> all(kThreads * kSlice, 0);
    if (OK(cudaMemcpy(all.data(), shared, all.size() * sizeof(int), cudaMemcpyDeviceToHost))) {
      for (int id = 0; id < kThreads; ++id) {
        bool slice_ok = true;
        for (int i = 0; i < kSlice; ++i)
          slice_ok = slice_ok && all[id * kSlice + i] == id * 1000000 + i;
        std::printf("slice %d: ", id);
        EXPECT(slice_ok);
      }
    }
    SHOW(cudaFree(shared));
  }
  SHOW(cudaDeviceSynchronize());
  SHOW(cudaGetLastError());
  return 0;
}
