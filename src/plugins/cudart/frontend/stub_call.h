// How the stub's CUDA runtime functions reach the backend.
//
// remote_sync() sends one call and waits; remote_async() sends one call without waiting. Both
// convert every gvirtus failure into a cudaError_t here, once, so no exception ever crosses the
// stub's C ABI: an unreachable or lost backend is cudaErrorDevicesUnavailable, a call the backend
// does not know is cudaErrorNotSupported.
//
// Reply payload of every cudart call: i32 cudaError_t result, then the call's outputs.
#pragma once

#include <cuda_runtime_api.h>

#include "common/function_ref.h"
#include "common/wire.h"
#include "frontend/process_session.h"
#include "plugins/cudart/common/marshal.h"
#include "plugins/cudart/cudart_calls.h"
#include "plugins/cudart/cudart_remote_calls.h"

// Marks a CUDA runtime function the stub exports. The library is built with hidden visibility
// (nothing of gvirtus's own C++ leaks into the application) and a version script that puts every
// export under the node libcudart.so.13, as NVIDIA's library does.
#define GVIRTUS_CUDART_EXPORT extern "C" __attribute__((visibility("default")))

namespace gvirtus::cudart {

using Encoder = FunctionRef<void(WireWriter&)>;
using Decoder = FunctionRef<void(WireReader&)>;

// Sends `fn` with the arguments `encode` writes and waits for its result; `decode` reads the
// outputs that follow the result. Returns the backend's result, or the error that prevented it.
cudaError_t remote_sync(Fn fn, Encoder encode, Decoder decode);

// A synchronous call split in two (process_session::begin_call), so that a thread keeps several in
// flight: remote_begin() sends it, remote_finish() waits for its result exactly as remote_sync()
// would have. Every begun call must be finished, in the order begun.
struct RemotePending {
  Fn fn;
  cudaError_t failed = cudaSuccess;  // the call could not be sent: this is its result
  process_session::PendingCall call{};
};
//
// `data`, when given, follows what `encode` wrote in the request, sent from where it lies (a
// host-to-device copy's source goes from the application's buffer to the transport, no copy in
// between). `landing`, when given, is where the reply's tail may land directly
// (process_session::Landing); the decoder then sees the reply without it and landing->landed set.
RemotePending remote_begin(Fn fn, Encoder encode, ByteView data = {},
                           process_session::Landing* landing = nullptr);
cudaError_t remote_finish(const RemotePending& pending, Decoder decode);

// Sends `fn` without waiting. Returns cudaSuccess once sent; a failure on the backend is recorded
// there and reported by later calls, as CUDA reports asynchronous errors.
// `data` as for remote_begin().
cudaError_t remote_async(Fn fn, Encoder encode, ByteView data = {});

// The result the real runtime would give every call that needs a device, once the backend has
// shown that its runtime cannot initialise (no driver, no device); cudaSuccess otherwise.
cudaError_t known_init_failure();

// Whether the runtime behind the backend can initialise, as the real runtime checks before it
// answers anything: the remembered initialisation failure, or, the first time in a session, the
// result of initialising it (cudaFree(nullptr)). Calls the stub answers by itself use it so that,
// like natively, a driverless machine reports cudaErrorInsufficientDriver rather than the error
// the call would otherwise give.
cudaError_t runtime_init_status();

// After a call the backend answered (current_device.cpp): NVIDIA's runtime has made the current
// device's primary context current on the calling thread by its first call that needs a context,
// and the driver stub of the process follows it (frontend_abi.h's gvirtus_runtime_context). The
// stub's own initialisation check makes none current.
void note_runtime_context(Fn fn);

// The calling thread's current device as far as the stub knows it without asking (the last
// cudaSetDevice or cudaGetDevice answer of this session), else 0, a new thread's device
// (current_device.cpp).
int known_device();

// Records an error the stub produced by itself, without the backend, as the calling thread's
// last error (the real runtime records every failure so), and returns it. cudaGetLastError and
// cudaPeekAtLastError report it.
cudaError_t record_local_error(cudaError_t error);

// What the runtime answers for an argument it refuses before doing anything (a null output):
// `error`, or the initialisation failure where the runtime cannot start (it initialises first);
// recorded as the last error.
cudaError_t refuse_locally(cudaError_t error);

// What the runtime answers for a function that is no kernel it registered (a host function's
// address) in a launch or a cudaFunc* query: cudaErrorInvalidResourceHandle (CUDA 13.0's runtime
// on an H200, driver 580), recorded as the last error; the initialisation failure first where the
// runtime cannot start.
cudaError_t unknown_function();

// Counts the remote results that may have changed state the stub keeps on the side (a sticky
// context error, a lost backend): caches made at another count are not to be trusted.
uint64_t state_epoch();

// What a successful "alloc" or "free" row did, recorded on the stub's side (device_memory.cpp):
// the generated stub calls these (allocation_hooks in cudart_descriptor.json).
void note_allocated(Fn fn, const void* address, uint64_t bytes);
// Forgets what was noted at `address` by the time the allocation clock read `noted_by` (read
// before the free was sent: an allocation another thread got at the address since stays).
void note_freed(Fn fn, const void* address, uint64_t noted_by);
uint64_t allocation_clock();

// The calling thread's pending locally produced error (cudaSuccess if none); `take` clears it.
cudaError_t local_last_error(bool take);

}  // namespace gvirtus::cudart
