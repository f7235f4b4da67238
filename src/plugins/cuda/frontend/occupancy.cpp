// cuOccupancyMaxPotentialBlockSize(WithFlags) in the client libcuda.so.1. The caller may pass a
// function of its own that gives the dynamic shared memory each block size needs: code in this
// process, which the backend cannot call. So the stub searches as the driver does, here: every
// block size a warp apart, from the largest the function allows down, each asked of the backend
// (cuOccupancyMaxActiveBlocksPerMultiprocessor), keeping the size that keeps the most threads
// resident, and the grid that fills every multiprocessor with it.
#include <cuda.h>

#include <algorithm>

namespace {

CUresult max_potential_block_size(int* minGridSize, int* blockSize, CUfunction func,
                                  CUoccupancyB2DSize blockSizeToDynamicSMemSize,
                                  size_t dynamicSMemSize, int blockSizeLimit, unsigned flags) {
  if (minGridSize == nullptr || blockSize == nullptr || func == nullptr || blockSizeLimit < 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  CUdevice device = 0;
  if (const CUresult r = cuCtxGetDevice(&device); r != CUDA_SUCCESS) return r;
  int function_limit = 0, warp = 0, multiprocessors = 0, threads_per_sm = 0;
  if (const CUresult r =
          cuFuncGetAttribute(&function_limit, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, func);
      r != CUDA_SUCCESS) {
    return r;
  }
  for (const auto& [out, attribute] :
       {std::pair{&warp, CU_DEVICE_ATTRIBUTE_WARP_SIZE},
        std::pair{&multiprocessors, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT},
        std::pair{&threads_per_sm, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR}}) {
    if (const CUresult r = cuDeviceGetAttribute(out, attribute, device); r != CUDA_SUCCESS) {
      return r;
    }
  }
  if (warp <= 0) return CUDA_ERROR_INVALID_VALUE;
  const int largest =
      blockSizeLimit > 0 ? std::min(function_limit, blockSizeLimit) : function_limit;
  int best_threads = 0, best_block = 0, best_blocks_per_sm = 0;
  for (int block = largest / warp * warp; block > 0; block -= warp) {
    const size_t shared =
        blockSizeToDynamicSMemSize != nullptr ? blockSizeToDynamicSMemSize(block) : dynamicSMemSize;
    int blocks_per_sm = 0;
    const CUresult r = cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&blocks_per_sm, func,
                                                                            block, shared, flags);
    if (r != CUDA_SUCCESS) return r;
    if (blocks_per_sm * block > best_threads) {
      best_threads = blocks_per_sm * block;
      best_block = block;
      best_blocks_per_sm = blocks_per_sm;
    }
    if (best_threads == threads_per_sm) break;  // every thread slot filled: none does better
  }
  *blockSize = best_block;
  *minGridSize = best_blocks_per_sm * multiprocessors;
  return CUDA_SUCCESS;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) CUresult cuOccupancyMaxPotentialBlockSize(
    int* minGridSize, int* blockSize, CUfunction func,
    CUoccupancyB2DSize blockSizeToDynamicSMemSize, size_t dynamicSMemSize, int blockSizeLimit) {
  return max_potential_block_size(minGridSize, blockSize, func, blockSizeToDynamicSMemSize,
                                  dynamicSMemSize, blockSizeLimit, CU_OCCUPANCY_DEFAULT);
}

extern "C" __attribute__((visibility("default"))) CUresult
cuOccupancyMaxPotentialBlockSizeWithFlags(int* minGridSize, int* blockSize, CUfunction func,
                                          CUoccupancyB2DSize blockSizeToDynamicSMemSize,
                                          size_t dynamicSMemSize, int blockSizeLimit,
                                          unsigned int flags) {
  return max_potential_block_size(minGridSize, blockSize, func, blockSizeToDynamicSMemSize,
                                  dynamicSMemSize, blockSizeLimit, flags);
}
