// The per-thread default stream variants that programs built with
// `nvcc --default-stream per-thread` call instead of the plain functions (cuda_runtime_api.h maps
// cudaMemcpy to cudaMemcpy_ptds, and so on). The _ptsz forms name the default stream as the
// calling thread's own (cudaStreamPerThread); the _ptds forms of synchronous calls behave as the
// plain ones, which finish before they return either way. The backend runs each client thread's
// calls on a thread of its own, so cudaStreamPerThread is the client thread's own there too.
#include "plugins/cudart/frontend/stub_call.h"

// Declared by crt/device_functions.h for nvcc-compiled code only.
extern "C" cudaError_t __cudaLaunchKernel(cudaKernel_t, dim3, dim3, void**, size_t, cudaStream_t);

namespace {

cudaStream_t per_thread(cudaStream_t stream) {
  return stream == nullptr ? cudaStreamPerThread : stream;
}

}  // namespace

GVIRTUS_CUDART_EXPORT cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 grid,
                                                          dim3 block, void** args,
                                                          size_t shared_bytes,
                                                          cudaStream_t stream) {
  return __cudaLaunchKernel(kernel, grid, block, args, shared_bytes, per_thread(stream));
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaLaunchKernel_ptsz(const void* function, dim3 grid, dim3 block,
                                                        void** args, size_t shared_bytes,
                                                        cudaStream_t stream) {
  return cudaLaunchKernel(function, grid, block, args, shared_bytes, per_thread(stream));
}

// The configuration's stream is what becomes the thread's own.
GVIRTUS_CUDART_EXPORT cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t* config,
                                                           const void* function, void** args) {
  if (config == nullptr) return cudaLaunchKernelExC(config, function, args);
  cudaLaunchConfig_t own = *config;
  own.stream = per_thread(own.stream);
  return cudaLaunchKernelExC(&own, function, args);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaMemcpy_ptds(void* dst, const void* src, size_t count,
                                                  cudaMemcpyKind kind) {
  return cudaMemcpy(dst, src, count, kind);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaMemcpyAsync_ptsz(void* dst, const void* src, size_t count,
                                                       cudaMemcpyKind kind, cudaStream_t stream) {
  return cudaMemcpyAsync(dst, src, count, kind, per_thread(stream));
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaMemPrefetchBatchAsync_ptsz(
    void** dptrs, size_t* sizes, size_t count, cudaMemLocation* prefetchLocs,
    size_t* prefetchLocIdxs, size_t numPrefetchLocs, unsigned long long flags,
    cudaStream_t stream) {
  return cudaMemPrefetchBatchAsync(dptrs, sizes, count, prefetchLocs, prefetchLocIdxs,
                                   numPrefetchLocs, flags, per_thread(stream));
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaMemDiscardBatchAsync_ptsz(void** dptrs, size_t* sizes,
                                                                size_t count,
                                                                unsigned long long flags,
                                                                cudaStream_t stream) {
  return cudaMemDiscardBatchAsync(dptrs, sizes, count, flags, per_thread(stream));
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaMemDiscardAndPrefetchBatchAsync_ptsz(
    void** dptrs, size_t* sizes, size_t count, cudaMemLocation* prefetchLocs,
    size_t* prefetchLocIdxs, size_t numPrefetchLocs, unsigned long long flags,
    cudaStream_t stream) {
  return cudaMemDiscardAndPrefetchBatchAsync(dptrs, sizes, count, prefetchLocs, prefetchLocIdxs,
                                             numPrefetchLocs, flags, per_thread(stream));
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaMemcpyArrayToArray_ptds(cudaArray_t dst, size_t wOffsetDst,
                                                              size_t hOffsetDst,
                                                              cudaArray_const_t src,
                                                              size_t wOffsetSrc, size_t hOffsetSrc,
                                                              size_t count, cudaMemcpyKind kind) {
  return cudaMemcpyArrayToArray(dst, wOffsetDst, hOffsetDst, src, wOffsetSrc, hOffsetSrc, count,
                                kind);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaMemcpy2DArrayToArray_ptds(
    cudaArray_t dst, size_t wOffsetDst, size_t hOffsetDst, cudaArray_const_t src, size_t wOffsetSrc,
    size_t hOffsetSrc, size_t width, size_t height, cudaMemcpyKind kind) {
  return cudaMemcpy2DArrayToArray(dst, wOffsetDst, hOffsetDst, src, wOffsetSrc, hOffsetSrc, width,
                                  height, kind);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaMemcpy2D_ptds(void* dst, size_t dpitch, const void* src,
                                                    size_t spitch, size_t width, size_t height,
                                                    cudaMemcpyKind kind) {
  return cudaMemcpy2D(dst, dpitch, src, spitch, width, height, kind);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaMemcpy2DAsync_ptsz(void* dst, size_t dpitch, const void* src,
                                                         size_t spitch, size_t width, size_t height,
                                                         cudaMemcpyKind kind, cudaStream_t stream) {
  return cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, height, kind, per_thread(stream));
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaMemcpyToSymbol_ptds(const void* symbol, const void* src,
                                                          size_t count, size_t offset,
                                                          cudaMemcpyKind kind) {
  return cudaMemcpyToSymbol(symbol, src, count, offset, kind);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaMemcpyFromSymbol_ptds(void* dst, const void* symbol,
                                                            size_t count, size_t offset,
                                                            cudaMemcpyKind kind) {
  return cudaMemcpyFromSymbol(dst, symbol, count, offset, kind);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaMemcpyToSymbolAsync_ptsz(const void* symbol, const void* src,
                                                               size_t count, size_t offset,
                                                               cudaMemcpyKind kind,
                                                               cudaStream_t stream) {
  return cudaMemcpyToSymbolAsync(symbol, src, count, offset, kind, per_thread(stream));
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaMemcpyFromSymbolAsync_ptsz(void* dst, const void* symbol,
                                                                 size_t count, size_t offset,
                                                                 cudaMemcpyKind kind,
                                                                 cudaStream_t stream) {
  return cudaMemcpyFromSymbolAsync(dst, symbol, count, offset, kind, per_thread(stream));
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaMemset_ptds(void* ptr, int value, size_t count) {
  return cudaMemset(ptr, value, count);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaMemsetAsync_ptsz(void* ptr, int value, size_t count,
                                                       cudaStream_t stream) {
  return cudaMemsetAsync(ptr, value, count, per_thread(stream));
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaMemset2D_ptds(void* ptr, size_t pitch, int value,
                                                    size_t width, size_t height) {
  return cudaMemset2D(ptr, pitch, value, width, height);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaMemset2DAsync_ptsz(void* ptr, size_t pitch, int value,
                                                         size_t width, size_t height,
                                                         cudaStream_t stream) {
  return cudaMemset2DAsync(ptr, pitch, value, width, height, per_thread(stream));
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaMallocAsync_ptsz(void** ptr, size_t size,
                                                       cudaStream_t stream) {
  return cudaMallocAsync(ptr, size, per_thread(stream));
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaFreeAsync_ptsz(void* ptr, cudaStream_t stream) {
  return cudaFreeAsync(ptr, per_thread(stream));
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream) {
  return cudaEventRecord(event, per_thread(stream));
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaEventRecordWithFlags_ptsz(cudaEvent_t event,
                                                                cudaStream_t stream,
                                                                unsigned flags) {
  return cudaEventRecordWithFlags(event, per_thread(stream), flags);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t stream, cudaEvent_t event,
                                                           unsigned flags) {
  return cudaStreamWaitEvent(per_thread(stream), event, flags);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream) {
  return cudaStreamSynchronize(per_thread(stream));
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaStreamQuery_ptsz(cudaStream_t stream) {
  return cudaStreamQuery(per_thread(stream));
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaStreamGetPriority_ptsz(cudaStream_t stream, int* priority) {
  return cudaStreamGetPriority(per_thread(stream), priority);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaStreamGetFlags_ptsz(cudaStream_t stream, unsigned* flags) {
  return cudaStreamGetFlags(per_thread(stream), flags);
}
