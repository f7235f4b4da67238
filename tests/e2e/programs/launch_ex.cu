// Extended launches (cudaLaunchKernelEx, the C++ form of cudaLaunchKernelExC): without attributes,
// with a priority, with a cluster shape of one block, and the C form on the per-thread stream,
// each checked against the CPU; a stream's synchronisation policy set and read back; then an
// attribute id the runtime does not know, and what the last-error calls report after it.
#include <vector>

#include "check.h"

// The per-thread default stream's form, which nvcc --default-stream per-thread maps
// cudaLaunchKernelExC to; declared here for a program built without that option.
extern "C" cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t*, const void*, void**);

__global__ void scale(float* out, const float* in, float factor, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * factor;
}

namespace {

constexpr int kN = 1 << 12;

bool launch_and_check(const char* what, cudaLaunchConfig_t& config, float* out, const float* in,
                      float factor, const std::vector<float>& host) {
  cudaError_t rc = cudaLaunchKernelEx(&config, scale, out, in, factor, kN);
  std::printf("%-44s -> %d %s\n", what, (int)rc, cudaGetErrorName(rc));
  if (rc != cudaSuccess) return false;
  if (!OK(cudaStreamSynchronize(config.stream))) return false;
  std::vector<float> back(kN);
  if (!OK(cudaMemcpy(back.data(), out, kN * sizeof(float), cudaMemcpyDeviceToHost))) return false;
  bool same = true;
  for (int i = 0; i < kN; ++i) same = same && back[i] == host[i] * factor;
  std::printf("check %-38s %s\n", what, same ? "ok" : "FAILED");
  return same;
}

}  // namespace

int main() {
  std::vector<float> host(kN);
  for (int i = 0; i < kN; ++i) host[i] = static_cast<float>(i % 97) - 40.0f;
  float* in = nullptr;
  float* out = nullptr;
  if (!OK(cudaMalloc(&in, kN * sizeof(float))) || !OK(cudaMalloc(&out, kN * sizeof(float)))) {
    return 1;
  }
  if (!OK(cudaMemcpy(in, host.data(), kN * sizeof(float), cudaMemcpyHostToDevice))) return 1;
  cudaStream_t stream = nullptr;
  if (!OK(cudaStreamCreate(&stream))) return 1;

  cudaLaunchConfig_t config{};
  config.gridDim = dim3(kN / 128);
  config.blockDim = dim3(128);
  config.stream = stream;
  launch_and_check("no attributes", config, out, in, 2.0f, host);

  cudaLaunchAttribute attributes[2] = {};
  attributes[0].id = cudaLaunchAttributePriority;
  attributes[0].val.priority = 0;
  config.attrs = attributes;
  config.numAttrs = 1;
  launch_and_check("a priority", config, out, in, 3.0f, host);

  attributes[1].id = cudaLaunchAttributeClusterDimension;
  attributes[1].val.clusterDim.x = 1;
  attributes[1].val.clusterDim.y = 1;
  attributes[1].val.clusterDim.z = 1;
  config.numAttrs = 2;
  launch_and_check("a priority and clusters of one", config, out, in, 4.0f, host);

  // Cluster occupancy under the same configuration: clusters of one fit, and some size does.
  int clusters = -1, cluster_size = -1;
  if (OK(cudaOccupancyMaxActiveClusters(&clusters, reinterpret_cast<const void*>(scale), &config)))
    EXPECT(clusters > 0);
  config.numAttrs = 1;  // no cluster dimension: the largest the kernel may use
  if (OK(cudaOccupancyMaxPotentialClusterSize(&cluster_size, reinterpret_cast<const void*>(scale),
                                              &config)))
    EXPECT(cluster_size > 0);

  // The C form on the per-thread default stream (a null stream in the _ptsz form's configuration).
  config.stream = nullptr;
  config.numAttrs = 1;
  float factor = 5.0f;
  int n = kN;
  void* args[] = {&out, &in, &factor, &n};
  cudaError_t rc = cudaLaunchKernelExC_ptsz(&config, reinterpret_cast<const void*>(scale), args);
  std::printf("%-44s -> %d %s\n", "the C form on the per-thread stream", (int)rc,
              cudaGetErrorName(rc));
  if (rc == cudaSuccess && OK(cudaStreamSynchronize(cudaStreamPerThread))) {
    std::vector<float> back(kN);
    if (OK(cudaMemcpy(back.data(), out, kN * sizeof(float), cudaMemcpyDeviceToHost))) {
      bool same = true;
      for (int i = 0; i < kN; ++i) same = same && back[i] == host[i] * factor;
      std::printf("check %-38s %s\n", "the C form on the per-thread stream",
                  same ? "ok" : "FAILED");
    }
  }

  cudaLaunchAttributeValue policy{};
  policy.syncPolicy = cudaSyncPolicySpin;
  SHOW(cudaStreamSetAttribute(stream, cudaLaunchAttributeSynchronizationPolicy, &policy));
  cudaLaunchAttributeValue read{};
  if (OK(cudaStreamGetAttribute(stream, cudaLaunchAttributeSynchronizationPolicy, &read))) {
    EXPECT(read.syncPolicy == cudaSyncPolicySpin);
  }
  SHOW(cudaStreamGetAttribute(stream, static_cast<cudaLaunchAttributeID>(9999), &read));

  config.stream = stream;
  attributes[0].id = static_cast<cudaLaunchAttributeID>(9999);
  config.numAttrs = 1;
  rc = cudaLaunchKernelEx(&config, scale, out, in, 1.0f, kN);
  std::printf("%-44s -> %d %s\n", "an attribute the runtime does not know", (int)rc,
              cudaGetErrorName(rc));
  SHOW(cudaGetLastError());
  SHOW(cudaGetLastError());
  SHOW(cudaStreamDestroy(stream));
  SHOW(cudaFree(in));
  SHOW(cudaFree(out));
  return 0;
}
