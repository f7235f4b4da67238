// A kernel whose parameter layout differs between its sm_75 and sm_90 code, as CUTLASS's kernels
// differ between architectures in the libraries PyTorch loads: built into a fatbin alone (-fatbin,
// device code only), for kernel_layouts()' ArchConflicts policies.
struct Params {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  char bytes[16];
#else
  char bytes[8];
#endif
};

__global__ void k_conflict(Params p, int* out) {
  out[0] = p.bytes[0];
}
