// cudaGetDriverEntryPoint(ByVersion): driver functions found by name and called through the
// pointer returned; a name no driver has; an invalid flag. (No null pointer for the function: a
// native run ends with a segmentation fault there.)
#include <cuda.h>

#include "check.h"

int main() {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // a crash keeps the lines before it
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
  if (OK(cudaGetDriverEntryPointByVersion("cuDriverGetVersion", &fn, 12000, cudaEnableDefault,
                                          &status))) {
    EXPECT(fn != nullptr && status == cudaDriverEntryPointSuccess);
    if (fn != nullptr) {
      int version = 0;
      const CUresult rc = reinterpret_cast<CUresult (*)(int*)>(fn)(&version);
      std::printf("cuDriverGetVersion through the pointer -> %d\n", (int)rc);
      EXPECT(rc != CUDA_SUCCESS || version >= 13000);
    }
  }
  // A name no driver has: cudaSuccess (on a GPU, whatever the documentation says), the pointer
  // nulled and the status saying why.
  fn = reinterpret_cast<void*>(0x1);
  if (OK(cudaGetDriverEntryPointByVersion("cuNoSuchFunction", &fn, 12000, cudaEnableDefault,
                                          &status))) {
    EXPECT(fn == nullptr && status == cudaDriverEntryPointSymbolNotFound);
  }
  fn = nullptr;
  if (OK(cudaGetDriverEntryPointByVersion("cuMemAlloc", &fn, 12000, cudaEnableLegacyStream,
                                          &status))) {
    EXPECT(fn != nullptr && status == cudaDriverEntryPointSuccess);
  }
  SHOW(cudaGetDriverEntryPointByVersion("cuMemAlloc", &fn, 12000, 7, &status));
  SHOW(cudaGetLastError());
  return 0;
}
