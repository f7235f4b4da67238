// Green contexts through the driver API (CUDA 12.4's): device 0's SMs as a resource, split into
// groups, one group made into a descriptor and provisioned as a green context; its context made
// current, memory allocated and set there, a stream of its own with work and events on it; what
// each query says of them; the refusals the driver gives; and, destroyed, the green context is
// refused. Each call is printed with its result for the test to find (simulated_mode_test.cpp).
#include <cuda.h>

#include <cstdio>

#include "show_calls.h"

int main() {
  CUdevice device = 0;
  const CUcontext primary = show_primary_context(device);

  CUdevResource whole{};
  SHOW(cuDeviceGetDevResource(device, &whole, CU_DEV_RESOURCE_TYPE_SM));
  std::printf("device SMs: %u, smallest group %u, alignment %u\n", whole.sm.smCount,
              whole.sm.minSmPartitionSize, whole.sm.smCoscheduledAlignment);
  CUdevResource bad_type{};
  SHOW(cuDeviceGetDevResource(device, &bad_type, CU_DEV_RESOURCE_TYPE_INVALID));

  // How many groups of 16 there would be, then two of them, and what is left.
  unsigned groups = 0;
  SHOW(cuDevSmResourceSplitByCount(nullptr, &groups, &whole, nullptr, 0, 16));
  std::printf("groups of 16 possible: %u\n", groups);
  CUdevResource split[2]{};
  CUdevResource remaining{};
  groups = 2;
  SHOW(cuDevSmResourceSplitByCount(split, &groups, &whole, &remaining, 0, 12));
  std::printf("made %u groups of %u and %u SMs, %u left\n", groups, split[0].sm.smCount,
              split[1].sm.smCount, remaining.sm.smCount);
  unsigned too_many = 1;
  SHOW(cuDevSmResourceSplitByCount(split, &too_many, &whole, nullptr, 0, 1000));
  SHOW(cuDevSmResourceSplitByCount(split, &too_many, &whole, nullptr, 0x80, 8));

  CUdevResourceDesc desc = nullptr;
  SHOW(cuDevResourceGenerateDesc(&desc, split, 1));
  CUgreenCtx green = nullptr;
  SHOW(cuGreenCtxCreate(&green, desc, device, 0));
  SHOW(cuGreenCtxCreate(&green, desc, device, CU_GREEN_CTX_DEFAULT_STREAM));
  unsigned long long id = 0;
  SHOW(cuGreenCtxGetId(green, &id));
  std::printf("green context id: %s\n", id != 0 ? "given" : "none");
  CUdevResource share{};
  SHOW(cuGreenCtxGetDevResource(green, &share, CU_DEV_RESOURCE_TYPE_SM));
  std::printf("green context SMs: %u\n", share.sm.smCount);

  // Its context works as any other: current, a device, memory, its share of SMs.
  CUcontext context = nullptr;
  SHOW(cuCtxFromGreenCtx(&context, green));
  SHOW(cuCtxSetCurrent(context));
  CUdevice current_device = -1;
  SHOW(cuCtxGetDevice(&current_device));
  std::printf("its device: %d\n", current_device);
  SHOW(cuCtxGetDevResource(context, &share, CU_DEV_RESOURCE_TYPE_SM));
  std::printf("its context's SMs: %u\n", share.sm.smCount);
  CUdeviceptr memory = 0;
  SHOW(cuMemAlloc(&memory, 1 << 20));

  CUstream stream = nullptr;
  SHOW(cuGreenCtxStreamCreate(&stream, green, 0, 0));
  SHOW(cuGreenCtxStreamCreate(&stream, green, CU_STREAM_NON_BLOCKING, 0));
  CUgreenCtx of_stream = nullptr;
  SHOW(cuStreamGetGreenCtx(stream, &of_stream));
  std::printf("the stream's green context: %s\n", of_stream == green ? "it" : "another");
  CUcontext stream_context = nullptr;
  SHOW(cuStreamGetCtx(stream, &stream_context));
  std::printf("the stream's context: %s\n", stream_context == context ? "its" : "another");
  CUcontext regular = nullptr;
  CUgreenCtx green_too = nullptr;
  SHOW(cuStreamGetCtx_v2(stream, &regular, &green_too));
  std::printf("both of the stream's contexts: %s, %s\n",
              regular == primary ? "the primary context" : "another",
              green_too == green ? "the green context" : "another");
  SHOW(cuMemsetD32Async(memory, 7, (1 << 20) / 4, stream));
  CUevent event = nullptr;
  SHOW(cuEventCreate(&event, 0));
  SHOW(cuGreenCtxRecordEvent(green, event));
  SHOW(cuGreenCtxWaitEvent(green, event));
  SHOW(cuStreamSynchronize(stream));
  unsigned word = 0;
  SHOW(cuMemcpyDtoH(&word, memory, sizeof word));
  std::printf("set on its stream: %u\n", word);

  SHOW(cuEventDestroy(event));
  SHOW(cuStreamDestroy(stream));
  SHOW(cuMemFree(memory));
  SHOW(cuGreenCtxDestroy(green));
  SHOW(cuGreenCtxGetId(green, &id));
  SHOW(cuGreenCtxDestroy(green));
  return 0;
}
