// What the client libcuda.so.1 answers without asking the backend again (context_answers.h),
// printed call by call: the current context set again, a primary context's state asked five times,
// a context's id (by handle and as the current one), a library kernel's function and attribute, a
// function's occupancy - then the changes after which each is asked again: an attribute set (a set
// of the value it has is answered here), a device change another stub of the process reported (the
// frontend's device generation), the primary context's new flags (its state), and its reset
// (inactive: asked every time). GVIRTUS_STATS, read by the test, counts the round trips. argv[1]: a
// fatbinary with saxpy.
#include <cuda.h>
#include <dlfcn.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <vector>

#include "show_calls.h"

namespace {

void show_state(CUdevice device) {
  unsigned flags = 0;
  int active = -1;
  const CUresult rc = cuDevicePrimaryCtxGetState(device, &flags, &active);
  std::printf("primary state -> %d: flags %u active %d\n", static_cast<int>(rc), flags, active);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  CUdevice device = 0;
  const CUcontext context = show_primary_context(device);
  // The context current already: nothing to send.
  for (int i = 0; i < 3; ++i) SHOW(cuCtxSetCurrent(context));
  for (int i = 0; i < 5; ++i) show_state(device);

  unsigned long long id = 0, again = 0, current = 0;
  SHOW(cuCtxGetId(context, &id));
  for (int i = 0; i < 4; ++i) SHOW(cuCtxGetId(context, &again));
  SHOW(cuCtxGetId(nullptr, &current));
  std::printf("context id the same each time: %s\n", id == again && id == current ? "yes" : "no");

  std::ifstream file(argv[1], std::ios::binary);
  const std::vector<char> image{std::istreambuf_iterator<char>(file), {}};
  CUlibrary library = nullptr;
  SHOW(cuLibraryLoadData(&library, image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  CUkernel kernel = nullptr;
  SHOW(cuLibraryGetKernel(&kernel, library, "_Z5saxpyifPKfPf"));
  CUfunction function = nullptr, same = nullptr;
  SHOW(cuKernelGetFunction(&function, kernel));
  for (int i = 0; i < 2; ++i) SHOW(cuKernelGetFunction(&same, kernel));
  std::printf("kernel's function the same each time: %s\n", function == same ? "yes" : "no");

  int blocks = 0, blocks_again = 0;
  SHOW(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&blocks, function, 256, 0, 0));
  SHOW(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&blocks_again, function, 256, 0, 0));
  SHOW(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_again, function, 256, 0));
  std::printf("occupancy the same each time: %s\n", blocks == blocks_again ? "yes" : "no");
  // A kernel's attribute: asked once; a set of the value it has answered here, of another sent.
  int limit = -1, limit_again = -1;
  SHOW(cuKernelGetAttribute(&limit, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, kernel,
                            device));
  SHOW(cuKernelGetAttribute(&limit_again, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, kernel,
                            device));
  std::printf("attribute the same each time: %s\n", limit == limit_again ? "yes" : "no");
  SHOW(
      cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, limit, kernel, device));
  SHOW(cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 1024, kernel, device));
  SHOW(cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 1024, kernel, device));
  SHOW(cuKernelGetAttribute(&limit_again, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, kernel,
                            device));
  std::printf("attribute after the set: %d\n", limit_again);
  // A new attribute of the kernel's function: its occupancy asked again.
  SHOW(cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 50));
  SHOW(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_again, function, 256, 0));

  // The runtime stub of the process reset a device (it bumps the frontend's device generation,
  // as here): every answer is asked again.
  using Bump = void (*)();
  const auto bump = reinterpret_cast<Bump>(::dlsym(RTLD_DEFAULT, "gvirtus_device_generation_bump"));
  if (bump != nullptr) bump();  // natively there is no gvirtus: the same output, asked anyway
  show_state(device);
  show_state(device);
  // New flags: the state is asked again, and says so.
  SHOW(cuDevicePrimaryCtxSetFlags(device, CU_CTX_SCHED_BLOCKING_SYNC));
  show_state(device);
  show_state(device);
  // A reset: inactive, asked every time.
  SHOW(cuLibraryUnload(library));
  SHOW(cuDevicePrimaryCtxReset(device));
  show_state(device);
  show_state(device);
  return 0;
}
