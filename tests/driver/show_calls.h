// Shared by the driver programs that print each call and its result (driver_api.cu,
// host_mapped.cu), for the tests to find line by line.
#pragma once

#include <cuda.h>

#include <cstdio>

#define SHOW(call) std::printf("%s -> %d\n", #call, static_cast<int>(call))

// Standard output line by line, set before main() runs: where a program crashes, its output ends
// at the line before the crash (a pipe's full buffer would lose it all).
inline const int kShowLineBuffered = std::setvbuf(stdout, nullptr, _IOLBF, BUFSIZ);

// Initialises the driver and makes device 0's primary context current, each call shown: the
// context, with the device in `device`.
inline CUcontext show_primary_context(CUdevice& device) {
  CUcontext context = nullptr;
  SHOW(cuInit(0));
  SHOW(cuDeviceGet(&device, 0));
  SHOW(cuDevicePrimaryCtxRetain(&context, device));
  SHOW(cuCtxSetCurrent(context));
  return context;
}
