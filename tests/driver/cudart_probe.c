/* Starts a shared CUDA runtime by its name and reports its version and the device count: what it
 * asks of libcuda.so.1 as it starts can then be captured with the logging stand-in
 * (proc_address_logger.c; data/README.md). Loaded with dlopen, so one probe serves any runtime
 * whose directory LD_LIBRARY_PATH names, without its headers.
 *   cudart-probe [LIBRARY]     LIBRARY defaults to libcudart.so.12
 * Exit 0 once the runtime answered (whatever it answered), 2 if it cannot be loaded. */
#include <dlfcn.h>
#include <stdio.h>

typedef int (*IntQuery)(int*);

int main(int argc, char** argv) {
  const char* library = argc > 1 ? argv[1] : "libcudart.so.12";
  void* runtime = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (runtime == NULL) {
    fprintf(stderr, "cudart-probe: %s\n", dlerror());
    return 2;
  }
  IntQuery runtime_version = (IntQuery)dlsym(runtime, "cudaRuntimeGetVersion");
  IntQuery device_count = (IntQuery)dlsym(runtime, "cudaGetDeviceCount");
  if (runtime_version == NULL || device_count == NULL) {
    fprintf(stderr, "cudart-probe: %s is not a CUDA runtime\n", library);
    return 2;
  }
  int version = 0;
  int devices = -1;
  const int version_status = runtime_version(&version);
  const int count_status = device_count(&devices);
  printf("%s: cudaRuntimeGetVersion %d (%d), cudaGetDeviceCount %d (%d devices)\n", library,
         version_status, version, count_status, devices);
  return 0;
}
