// gvirtus-bench-driver: the driver-mode row of `gvirtus-bench calls`, run by it with gvirtus's
// libcuda.so.1 first on LD_LIBRARY_PATH. Through the driver API as NVIDIA's runtime uses it, it
// loads a one-kernel module (PTX, which a GPU compiles and the simulated device parses), then
// measures the rate of asynchronous cuLaunchKernel (sent ahead; one cuCtxSynchronize drains them)
// and the latency of a synchronous query (cuStreamQuery on the null stream, which the stub asks
// the backend for every time) and of a synchronisation with nothing to wait for
// (cuCtxSynchronize): the backend relays its worker's output before both replies, asking the
// pipes only before the synchronisation's (a query prints nothing itself: backend/plugin.h).
// Prints one line: "launches_per_s=R query_median_us=U synchronize_median_us=S".
//   gvirtus-bench-driver [LAUNCHES [QUERIES]]
// Exit status 0, or 1 with the failing call named.
#include <cuda.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

constexpr char kPtx[] = R"(
.version 8.0
.target sm_52
.address_size 64
.visible .entry gvirtus_bench_empty(.param .u64 out, .param .u32 n)
{
  ret;
}
)";

bool ok(CUresult result, const char* what) {
  if (result == CUDA_SUCCESS) return true;
  const char* name = nullptr;
  cuGetErrorName(result, &name);
  std::fprintf(stderr, "gvirtus-bench-driver: %s failed: %d %s\n", what, static_cast<int>(result),
               name != nullptr ? name : "");
  return false;
}

using Clock = std::chrono::steady_clock;

// The median of `count` timed calls of `call`, in microseconds; false when a call failed.
template <typename Call>
bool median_us(long count, Call call, double& median) {
  std::vector<double> us;
  us.reserve(static_cast<size_t>(count));
  for (long i = 0; i < count; ++i) {
    const auto t = Clock::now();
    if (!call()) return false;
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t).count());
  }
  std::nth_element(us.begin(), us.begin() + us.size() / 2, us.end());
  median = us[us.size() / 2];
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const long launches = argc > 1 ? std::atol(argv[1]) : 100000;
  const long queries = argc > 2 ? std::atol(argv[2]) : 10000;
  if (launches <= 0 || queries <= 0) {
    std::fprintf(stderr, "usage: gvirtus-bench-driver [LAUNCHES [QUERIES]]\n");
    return 2;
  }
  CUdevice device;
  CUcontext context;
  CUmodule module;
  CUfunction function;
  CUdeviceptr out;
  if (!ok(cuInit(0), "cuInit") || !ok(cuDeviceGet(&device, 0), "cuDeviceGet") ||
      !ok(cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain") ||
      !ok(cuCtxSetCurrent(context), "cuCtxSetCurrent") ||
      !ok(cuModuleLoadData(&module, kPtx), "cuModuleLoadData") ||
      !ok(cuModuleGetFunction(&function, module, "gvirtus_bench_empty"), "cuModuleGetFunction") ||
      !ok(cuMemAlloc(&out, 256), "cuMemAlloc")) {
    return 1;
  }
  unsigned n = 1;
  void* params[] = {&out, &n};
  // Warm up: the layout query and the first launches.
  for (int i = 0; i < 100; ++i) {
    if (!ok(cuLaunchKernel(function, 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr),
            "cuLaunchKernel")) {
      return 1;
    }
  }
  if (!ok(cuCtxSynchronize(), "cuCtxSynchronize")) return 1;
  const auto start = Clock::now();
  for (long i = 0; i < launches; ++i) {
    if (!ok(cuLaunchKernel(function, 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr),
            "cuLaunchKernel")) {
      return 1;
    }
  }
  if (!ok(cuCtxSynchronize(), "cuCtxSynchronize")) return 1;
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  double query_us = 0, synchronize_us = 0;
  if (!median_us(
          queries, [] { return ok(cuStreamQuery(nullptr), "cuStreamQuery"); }, query_us) ||
      !median_us(
          queries, [] { return ok(cuCtxSynchronize(), "cuCtxSynchronize"); }, synchronize_us)) {
    return 1;
  }
  std::printf("launches_per_s=%.0f query_median_us=%.3f synchronize_median_us=%.3f\n",
              double(launches) / seconds, query_us, synchronize_us);
  cuMemFree(out);
  cuModuleUnload(module);
  cuDevicePrimaryCtxRelease(device);
  return 0;
}
