// The device code the e2e program libraries.cu loads as a library (cudaLibraryLoadData,
// cudaLibraryLoadFromFile): built alone into library_kernels.fatbin next to each build of it.
// C names, so that the program asks for them as written.
extern "C" __device__ int lib_counter = 42;

extern "C" __global__ void lib_fill(int* out, int value, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = value + i;
}

extern "C" __global__ void lib_count(int* out) {
  *out = atomicAdd(&lib_counter, 1);
}
