// curandGenerateUniform (Philox4_32_10) of 4096 floats, checked for range (0,1] and mean near 0.5.
#include <curand.h>

#include <vector>

#include "library_check.h"

#define CHECK_CURAND(call) CHECK_STATUS("cuRAND", call, CURAND_STATUS_SUCCESS)

int main() {
  const size_t n = 4096;
  std::vector<float> values(n, 0.f);
  float* dvalues;
  CHECK_CUDA(cudaMalloc(&dvalues, n * sizeof(float)));
  curandGenerator_t generator;
  CHECK_CURAND(curandCreateGenerator(&generator, CURAND_RNG_PSEUDO_PHILOX4_32_10));
  CHECK_CURAND(curandSetPseudoRandomGeneratorSeed(generator, 1234ULL));
  CHECK_CURAND(curandGenerateUniform(generator, dvalues, n));
  CHECK_CUDA(cudaMemcpy(values.data(), dvalues, n * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK_CURAND(curandDestroyGenerator(generator));
  CHECK_CUDA(cudaFree(dvalues));
  double sum = 0;
  bool above_zero = true, at_most_one = true;  // NaN fails both
  for (float v : values) {
    sum += v;
    if (!(v > 0)) above_zero = false;
    if (!(v <= 1)) at_most_one = false;
  }
  const double got[3] = {sum / n, above_zero ? 1. : 0., at_most_one ? 1. : 0.};
  const double want[3] = {0.5, 1., 1.};
  return report(got, want, 3, 0.05);
}
