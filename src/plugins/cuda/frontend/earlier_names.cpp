// The driver's earlier names for functions it still has under new ones: cuda.h maps each old name
// to the current function by a macro, so a program or a runtime built against an older cuda.h -
// or one asking cuGetProcAddress for an earlier version - calls the old symbol. Each takes the
// same arguments as the function it became (cuStreamBeginCapture, which had no mode, captures
// in CU_STREAM_CAPTURE_MODE_GLOBAL, as the earlier driver did; cuStreamGetCtx_v2, which also
// names the stream's green context, is asked of the backend). Pointer-size changes (the 32-bit
// forms of cuMemAlloc and its kind) are not here: those functions are gone from 64-bit programs.
#include <cuda.h>

#include "cuda_remote_calls.h"
#include "plugins/cuda/frontend/per_thread.h"

#undef cuCtxPopCurrent
#undef cuCtxPushCurrent
#undef cuStreamDestroy
#undef cuEventDestroy
#undef cuStreamBeginCapture
#undef cuEventElapsedTime
#undef cuStreamWriteValue32
#undef cuStreamWaitValue32
#undef cuStreamWriteValue64
#undef cuStreamWaitValue64

namespace cr = gvirtus::cuda;

#define GVIRTUS_EXPORT extern "C" __attribute__((visibility("default")))

GVIRTUS_EXPORT CUresult cuCtxPopCurrent(CUcontext* pctx) {
  return cuCtxPopCurrent_v2(pctx);
}

GVIRTUS_EXPORT CUresult cuCtxPushCurrent(CUcontext ctx) {
  return cuCtxPushCurrent_v2(ctx);
}

GVIRTUS_EXPORT CUresult cuStreamDestroy(CUstream hStream) {
  return cuStreamDestroy_v2(hStream);
}

GVIRTUS_EXPORT CUresult cuEventDestroy(CUevent hEvent) {
  return cuEventDestroy_v2(hEvent);
}

GVIRTUS_EXPORT CUresult cuEventElapsedTime(float* pMilliseconds, CUevent hStart, CUevent hEnd) {
  return cuEventElapsedTime_v2(pMilliseconds, hStart, hEnd);
}

GVIRTUS_EXPORT CUresult cuStreamBeginCapture(CUstream hStream) {
  return cuStreamBeginCapture_v2(hStream, CU_STREAM_CAPTURE_MODE_GLOBAL);
}

GVIRTUS_EXPORT CUresult cuStreamBeginCapture_ptsz(CUstream hStream) {
  return cuStreamBeginCapture_v2(cr::per_thread(hStream), CU_STREAM_CAPTURE_MODE_GLOBAL);
}

GVIRTUS_EXPORT CUresult cuStreamWriteValue32(CUstream stream, CUdeviceptr addr, cuuint32_t value,
                                             unsigned int flags) {
  return cuStreamWriteValue32_v2(stream, addr, value, flags);
}

GVIRTUS_EXPORT CUresult cuStreamWriteValue32_ptsz(CUstream stream, CUdeviceptr addr,
                                                  cuuint32_t value, unsigned int flags) {
  return cuStreamWriteValue32_v2(cr::per_thread(stream), addr, value, flags);
}

GVIRTUS_EXPORT CUresult cuStreamWaitValue32(CUstream stream, CUdeviceptr addr, cuuint32_t value,
                                            unsigned int flags) {
  return cuStreamWaitValue32_v2(stream, addr, value, flags);
}

GVIRTUS_EXPORT CUresult cuStreamWaitValue32_ptsz(CUstream stream, CUdeviceptr addr,
                                                 cuuint32_t value, unsigned int flags) {
  return cuStreamWaitValue32_v2(cr::per_thread(stream), addr, value, flags);
}

GVIRTUS_EXPORT CUresult cuStreamWriteValue64(CUstream stream, CUdeviceptr addr, cuuint64_t value,
                                             unsigned int flags) {
  return cuStreamWriteValue64_v2(stream, addr, value, flags);
}

GVIRTUS_EXPORT CUresult cuStreamWriteValue64_ptsz(CUstream stream, CUdeviceptr addr,
                                                  cuuint64_t value, unsigned int flags) {
  return cuStreamWriteValue64_v2(cr::per_thread(stream), addr, value, flags);
}

GVIRTUS_EXPORT CUresult cuStreamWaitValue64(CUstream stream, CUdeviceptr addr, cuuint64_t value,
                                            unsigned int flags) {
  return cuStreamWaitValue64_v2(stream, addr, value, flags);
}

GVIRTUS_EXPORT CUresult cuStreamWaitValue64_ptsz(CUstream stream, CUdeviceptr addr,
                                                 cuuint64_t value, unsigned int flags) {
  return cuStreamWaitValue64_v2(cr::per_thread(stream), addr, value, flags);
}

// Both of a stream's contexts, asked of the backend's driver: for a green context's stream, the
// green context and its device's primary context.
GVIRTUS_EXPORT CUresult cuStreamGetCtx_v2(CUstream hStream, CUcontext* pCtx,
                                          CUgreenCtx* pGreenCtx) {
  if (pCtx == nullptr && pGreenCtx == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return cr::remote::cuStreamGetCtx_v2(hStream, pCtx, pGreenCtx);
}

GVIRTUS_EXPORT CUresult cuStreamGetCtx_v2_ptsz(CUstream hStream, CUcontext* pCtx,
                                               CUgreenCtx* pGreenCtx) {
  return cuStreamGetCtx_v2(cr::per_thread(hStream), pCtx, pGreenCtx);
}
