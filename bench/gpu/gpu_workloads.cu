// gpu_workloads: the GPU workloads of `gvirtus-bench gpu`, timed, printed as one JSON object on
// standard output. Built like an application (nvcc -cudart shared), so the same binary runs
// natively and through gvirtus-run; the bench compares the two runs.
//
//   gpu_workloads [--quick]
//
// Every figure times the whole host-side operation with std::chrono (what an application sees,
// remoting included); kernels are also timed with CUDA events, which measure the GPU alone and
// so should not change when remoted:
//   saxpy     N = 2^24 floats: copy x and y in, kernel, copy y out, per iteration
//   matrixMul 1024x1024x1024 floats, shared-memory tiles: copy A and B in, kernel, copy C out
//   memcpy    H2D and D2H, pageable and pinned, 1 KiB .. 1 GiB in powers of 4
//   launch    100000 empty kernel launches, then one synchronisation
// Results are checked against the CPU (a wrong answer is not a benchmark). Exit status: 0 with
// the JSON; 2 and "no CUDA device: <error name>" on stderr when there is no usable device; 1 and
// the failed call on stderr for any other CUDA error or a wrong result.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CHECK(call)                                                                         \
  do {                                                                                      \
    const cudaError_t rc_ = (call);                                                         \
    if (rc_ != cudaSuccess) {                                                               \
      std::fprintf(stderr, "gpu_workloads: %s failed: %s\n", #call, cudaGetErrorName(rc_)); \
      std::exit(1);                                                                         \
    }                                                                                       \
  } while (0)

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

[[noreturn]] void wrong_result(const char* what, double error) {
  std::fprintf(stderr, "gpu_workloads: %s: wrong result (error %g)\n", what, error);
  std::exit(1);
}

// Events around the kernel alone: the GPU's time, whatever the host path costs.
struct EventTimer {
  cudaEvent_t start{}, stop{};
  EventTimer() {
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
  }
  ~EventTimer() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  float elapsed_ms() {
    CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    return ms;
  }
};

__global__ void saxpy_kernel(int n, float a, const float* x, float* y) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    y[i] = a * x[i] + y[i];
}

void saxpy(bool quick) {
  const int n = 1 << 24, iterations = quick ? 3 : 10;
  const float a = 2.5f;
  const size_t bytes = size_t(n) * sizeof(float);
  std::vector<float> x(n), y(n), out(n);
  for (int i = 0; i < n; ++i) x[i] = float(i % 1000) * 0.001f, y[i] = float(i % 77) - 38.0f;
  float *dx, *dy;
  CHECK(cudaMalloc(&dx, bytes));
  CHECK(cudaMalloc(&dy, bytes));
  EventTimer timer;
  std::vector<double> host_ms, kernel_ms;
  for (int it = 0; it < iterations; ++it) {
    const auto start = Clock::now();
    CHECK(cudaMemcpy(dx, x.data(), bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dy, y.data(), bytes, cudaMemcpyHostToDevice));
    CHECK(cudaEventRecord(timer.start));
    saxpy_kernel<<<4096, 256>>>(n, a, dx, dy);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(timer.stop));
    CHECK(cudaMemcpy(out.data(), dy, bytes, cudaMemcpyDeviceToHost));
    host_ms.push_back(ms_since(start));
    kernel_ms.push_back(timer.elapsed_ms());
  }
  double error = 0;
  for (int i = 0; i < n; ++i) error = std::fmax(error, std::fabs(out[i] - (a * x[i] + y[i])));
  if (error > 1e-4) wrong_result("saxpy", error);
  CHECK(cudaFree(dx));
  CHECK(cudaFree(dy));
  const double kernel = median(kernel_ms);
  std::printf(
      "  \"saxpy\": {\"n\": %d, \"iterations\": %d, \"host_ms\": %.4f, \"kernel_ms\": %.4f, "
      "\"kernel_GBps\": %.2f},\n",
      n, iterations, median(host_ms), kernel, 3.0 * bytes / (kernel * 1e6));
}

constexpr int kTile = 32;

__global__ void matmul_kernel(int n, const float* a, const float* b, float* c) {
  __shared__ float as[kTile][kTile], bs[kTile][kTile];
  const int row = blockIdx.y * kTile + threadIdx.y, col = blockIdx.x * kTile + threadIdx.x;
  float sum = 0;
  for (int t = 0; t < n; t += kTile) {
    as[threadIdx.y][threadIdx.x] = a[row * n + t + threadIdx.x];
    bs[threadIdx.y][threadIdx.x] = b[(t + threadIdx.y) * n + col];
    __syncthreads();
    for (int k = 0; k < kTile; ++k) sum += as[threadIdx.y][k] * bs[k][threadIdx.x];
    __syncthreads();
  }
  c[row * n + col] = sum;
}

void matrix_mul(bool quick) {
  const int n = 1024, iterations = quick ? 2 : 5;  // n is a multiple of kTile
  const size_t bytes = size_t(n) * n * sizeof(float);
  std::vector<float> a(size_t(n) * n), b(size_t(n) * n), c(size_t(n) * n);
  for (size_t i = 0; i < a.size(); ++i) a[i] = float(i % 13) * 0.1f, b[i] = float(i % 7) - 3.0f;
  float *da, *db, *dc;
  CHECK(cudaMalloc(&da, bytes));
  CHECK(cudaMalloc(&db, bytes));
  CHECK(cudaMalloc(&dc, bytes));
  EventTimer timer;
  std::vector<double> host_ms, kernel_ms;
  for (int it = 0; it < iterations; ++it) {
    const auto start = Clock::now();
    CHECK(cudaMemcpy(da, a.data(), bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(db, b.data(), bytes, cudaMemcpyHostToDevice));
    CHECK(cudaEventRecord(timer.start));
    matmul_kernel<<<dim3(n / kTile, n / kTile), dim3(kTile, kTile)>>>(n, da, db, dc);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(timer.stop));
    CHECK(cudaMemcpy(c.data(), dc, bytes, cudaMemcpyDeviceToHost));
    host_ms.push_back(ms_since(start));
    kernel_ms.push_back(timer.elapsed_ms());
  }
  // A few entries against the CPU: the full product would take seconds on the host.
  double error = 0;
  for (int probe = 0; probe < 64; ++probe) {
    const int row = (probe * 131) % n, col = (probe * 197) % n;
    double want = 0;
    for (int k = 0; k < n; ++k) want += double(a[size_t(row) * n + k]) * b[size_t(k) * n + col];
    error = std::fmax(error, std::fabs(c[size_t(row) * n + col] - want) / (1 + std::fabs(want)));
  }
  if (error > 1e-3) wrong_result("matrixMul", error);
  CHECK(cudaFree(da));
  CHECK(cudaFree(db));
  CHECK(cudaFree(dc));
  const double kernel = median(kernel_ms);
  std::printf(
      "  \"matrixMul\": {\"n\": %d, \"iterations\": %d, \"host_ms\": %.4f, \"kernel_ms\": %.4f, "
      "\"kernel_GFLOPs\": %.1f},\n",
      n, iterations, median(host_ms), kernel, 2.0 * n * n * double(n) / (kernel * 1e6));
}

// Bandwidth of one direction and host memory kind at one size: repeated synchronous copies,
// about 256 MiB in all (at least 3, at most 2000 copies), the whole loop timed.
void memcpy_point(size_t bytes, bool to_device, bool pinned, void* host, void* device, bool first) {
  const int copies = int(std::clamp<size_t>((size_t(256) << 20) / bytes, 3, 2000));
  const cudaMemcpyKind kind = to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
  CHECK(to_device ? cudaMemcpy(device, host, bytes, kind) : cudaMemcpy(host, device, bytes, kind));
  const auto start = Clock::now();
  for (int i = 0; i < copies; ++i) {
    CHECK(to_device ? cudaMemcpy(device, host, bytes, kind)
                    : cudaMemcpy(host, device, bytes, kind));
  }
  const double ms = ms_since(start);
  std::printf(
      "%s    {\"bytes\": %zu, \"direction\": \"%s\", \"memory\": \"%s\", \"copies\": %d, "
      "\"us\": %.3f, \"GBps\": %.3f}",
      first ? "" : ",\n", bytes, to_device ? "H2D" : "D2H", pinned ? "pinned" : "pageable", copies,
      ms * 1e3 / copies, double(bytes) * copies / (ms * 1e6));
}

void memcpy_bandwidth(bool quick) {
  const size_t largest = quick ? size_t(16) << 20 : size_t(1) << 30;
  void* device;
  CHECK(cudaMalloc(&device, largest));
  void* pinned;
  CHECK(cudaMallocHost(&pinned, largest));
  std::vector<char> pageable(largest);
  std::memset(pinned, 1, largest);  // touched, so page faults are not timed
  std::memset(pageable.data(), 1, largest);
  std::printf("  \"memcpy\": [\n");
  bool first = true;
  for (size_t bytes = 1024; bytes <= largest; bytes *= 4) {
    for (const bool to_device : {true, false}) {
      memcpy_point(bytes, to_device, false, pageable.data(), device, first);
      memcpy_point(bytes, to_device, true, pinned, device, false);
      first = false;
    }
  }
  std::printf("\n  ],\n");
  CHECK(cudaFreeHost(pinned));
  CHECK(cudaFree(device));
}

__global__ void empty_kernel() {}

void launch_rate(bool quick) {
  const int launches = quick ? 10000 : 100000;
  empty_kernel<<<1, 1>>>();  // the first launch loads the module: not part of the rate
  CHECK(cudaDeviceSynchronize());
  const auto start = Clock::now();
  for (int i = 0; i < launches; ++i) empty_kernel<<<1, 1>>>();
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  const double ms = ms_since(start);
  std::printf("  \"launch\": {\"launches\": %d, \"host_ms\": %.3f, \"launches_per_s\": %.0f}\n",
              launches, ms, launches / (ms / 1e3));
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  if (argc > 2 || (argc == 2 && !quick)) {
    std::fprintf(stderr, "usage: gpu_workloads [--quick]\n");
    return 2;
  }
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess || count == 0) {
    std::fprintf(stderr, "no CUDA device: %s\n",
                 cudaGetErrorName(rc != cudaSuccess ? rc : cudaErrorNoDevice));
    return 2;
  }
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("{\n  \"program\": \"gpu_workloads\",\n  \"device\": \"%s\",\n  \"quick\": %s,\n",
              prop.name, quick ? "true" : "false");
  saxpy(quick);
  matrix_mul(quick);
  memcpy_bandwidth(quick);
  launch_rate(quick);
  std::printf("}\n");
  return 0;
}
