// An application asking the runtime for driver functions by name (cudaGetDriverEntryPoint and
// ByVersion), run through gvirtus-run by driver_entry_points_test.cpp: each pointer returned must
// be gvirtus's own driver stub's (the library file it lies in is printed), an unknown name comes
// back null with "symbol not found", and an invalid flag is refused. Prints "entry points: ok"
// when every check holds, or the first one that failed.
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstring>

namespace {

int fail(const char* what) {
  std::printf("entry points: FAILED %s\n", what);
  return 1;
}

// The file of the library holding `address`.
const char* library_of(void* address) {
  Dl_info info{};
  return ::dladdr(address, &info) != 0 && info.dli_fname != nullptr ? info.dli_fname : "?";
}

}  // namespace

int main() {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion("cuDriverGetVersion", &fn, 12000, cudaEnableDefault,
                                       &status) != cudaSuccess) {
    return fail("cudaGetDriverEntryPointByVersion(cuDriverGetVersion)");
  }
  if (fn == nullptr || status != cudaDriverEntryPointSuccess) return fail("cuDriverGetVersion");
  std::printf("cuDriverGetVersion from %s\n", library_of(fn));
  void* alloc = nullptr;
  if (cudaGetDriverEntryPoint("cuMemAlloc", &alloc, cudaEnableDefault, &status) != cudaSuccess ||
      alloc == nullptr || status != cudaDriverEntryPointSuccess) {
    return fail("cudaGetDriverEntryPoint(cuMemAlloc)");
  }
  std::printf("cuMemAlloc from %s\n", library_of(alloc));
  void* missing = &status;
  if (cudaGetDriverEntryPointByVersion("cuNoSuchFunction", &missing, 12000, cudaEnableDefault,
                                       &status) != cudaSuccess ||
      missing != nullptr || status != cudaDriverEntryPointSymbolNotFound) {
    return fail("an unknown name");
  }
  if (cudaGetDriverEntryPointByVersion("cuMemAlloc", &fn, 12000, 7, &status) !=
      cudaErrorInvalidValue) {
    return fail("an invalid flag");
  }
  std::printf("entry points: ok\n");
  return 0;
}
