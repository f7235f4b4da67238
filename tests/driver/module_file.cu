// Modules from files on the client's machine (cuModuleLoad, cuLibraryLoadFromFile): read by the
// stub and sent, since the backend's machine has no such file. argv[1]: a fatbinary with saxpy.
#include <cuda.h>

#include <cstdio>

#define SHOW(call) std::printf("%s -> %d\n", #call, static_cast<int>(call))

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  CUdevice device;
  CUcontext context;
  SHOW(cuInit(0));
  SHOW(cuDeviceGet(&device, 0));
  SHOW(cuDevicePrimaryCtxRetain(&context, device));
  SHOW(cuCtxSetCurrent(context));
  CUmodule module = nullptr;
  SHOW(cuModuleLoad(&module, "/nonexistent/saxpy.fatbin"));
  SHOW(cuModuleLoad(&module, argv[1]));
  CUfunction function;
  SHOW(cuModuleGetFunction(&function, module, "_Z5saxpyifPKfPf"));
  SHOW(cuModuleUnload(module));
  CUlibrary library;
  CUlibraryOption preserve = CU_LIBRARY_BINARY_IS_PRESERVED;
  SHOW(cuLibraryLoadFromFile(&library, argv[1], nullptr, nullptr, 0, &preserve, nullptr, 1));
  SHOW(cuLibraryLoadFromFile(&library, argv[1], nullptr, nullptr, 0, nullptr, nullptr, 0));
  CUkernel kernel;
  SHOW(cuLibraryGetKernel(&kernel, library, "_Z5saxpyifPKfPf"));
  SHOW(cuLibraryUnload(library));
  return 0;
}
