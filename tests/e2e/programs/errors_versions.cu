// Errors and versions: sticky initialisation failures, last-error semantics, names and strings.
#include <cstring>

#include "check.h"

int main() {
  int rt = -1, drv = -1, count = -1;
  SHOW(cudaRuntimeGetVersion(&rt));
  std::printf("runtime version %d\n", rt);
  SHOW(cudaDriverGetVersion(&drv));
  std::printf("driver version known: %s\n", drv > 0 ? "yes" : "no");
  SHOW(cudaGetLastError());
  SHOW(cudaGetDeviceCount(&count));
  std::printf("count after call: %s\n", count > 0 ? "positive" : count == 0 ? "zero" : "untouched");
  SHOW(cudaPeekAtLastError());
  SHOW(cudaGetLastError());
  SHOW(cudaGetLastError());
  SHOW(cudaSetDevice(12345));  // no such device, GPU or not
  SHOW(cudaGetLastError());
  SHOW(cudaGetLastError());
  for (int code : {0, 1, 2, 35, 100, 200, 700, 801, 999, 12345}) {
    std::printf("%d %s: %s\n", code, cudaGetErrorName((cudaError_t)code),
                cudaGetErrorString((cudaError_t)code));
  }
  return 0;
}
