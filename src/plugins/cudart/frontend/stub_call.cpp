#include "plugins/cudart/frontend/stub_call.h"

#include <atomic>
#include <optional>

#include "common/error.h"
#include "common/log.h"
#include "frontend/call_stats.h"
#include "frontend/context_faults.h"
#include "frontend/generated_stub.h"
#include "frontend/process_session.h"
#include "frontend/route_scope.h"

namespace gvirtus::cudart {
namespace {

// The stub opens its plugin in the process's session when it is loaded: before the first
// connection it joins the handshake; loaded into a process whose session is live already (by
// dlopen, after another stub's calls), it joins that session.
const bool registered = [] {
  stub::join_session(kIdentity, [](uint16_t f) { return name_of(Fn(f)).data(); });
  return true;
}();

// Initialisation failures are permanent for a process in the real runtime: every later call that
// needs a device fails the same way. Remembering them lets asynchronous calls return exactly what
// the real runtime would, without a round trip.
std::atomic<int> g_init_failure{cudaSuccess};

bool is_init_failure(cudaError_t e) {
  return e == cudaErrorInsufficientDriver || e == cudaErrorNoDevice ||
         e == cudaErrorInitializationError || e == cudaErrorSystemDriverMismatch ||
         e == cudaErrorCompatNotSupportedOnDevice;
}

// Errors after which the runtime's answers may change: sticky context errors (a kernel fault and
// the like, 700-799), an uncorrectable ECC error, and a backend the stub has lost.
bool may_change_state(cudaError_t e) {
  return (e >= 700 && e < 800) || e == cudaErrorECCUncorrectable ||
         e == cudaErrorDevicesUnavailable;
}

std::atomic<uint64_t> g_state_epoch{0};

// The runtime's context faults (frontend/context_faults.h): the sticky errors (a kernel fault),
// cleared by cudaDeviceReset; cudaErrorDevicesUnavailable; and the calls it answers without a
// context - queries, and the loading of modules and resolving of their kernels and variables,
// which the backend does through the runtime's context-independent libraries.
constexpr int32_t kStickyErrors[] = {cudaErrorECCUncorrectable,   cudaErrorIllegalAddress,
                                     cudaErrorLaunchTimeout,      cudaErrorAssert,
                                     cudaErrorHardwareStackError, cudaErrorIllegalInstruction,
                                     cudaErrorMisalignedAddress,  cudaErrorInvalidAddressSpace,
                                     cudaErrorInvalidPc,          cudaErrorLaunchFailure};
constexpr uint16_t kClearingCalls[] = {static_cast<uint16_t>(Fn::cudaDeviceReset)};
constexpr uint16_t kContextFreeCalls[] = {static_cast<uint16_t>(Fn::cudaModuleLoad),
                                          static_cast<uint16_t>(Fn::cudaKernelResolve),
                                          static_cast<uint16_t>(Fn::cudaVarResolve),
                                          static_cast<uint16_t>(Fn::cudaGetDeviceProperties),
                                          static_cast<uint16_t>(Fn::cudaGetDeviceCount),
                                          static_cast<uint16_t>(Fn::cudaGetDevice),
                                          static_cast<uint16_t>(Fn::cudaGetLastError),
                                          static_cast<uint16_t>(Fn::cudaPeekAtLastError),
                                          static_cast<uint16_t>(Fn::cudaDriverGetVersion),
                                          static_cast<uint16_t>(Fn::cudaRuntimeGetVersion),
                                          static_cast<uint16_t>(Fn::cudaDeviceGetAttribute)};
constexpr stub::ContextFaults kContextFaults{kStickyErrors, cudaErrorDevicesUnavailable,
                                             kClearingCalls, kContextFreeCalls};
constinit stub::ContextFaultState g_context(kContextFaults, cudaSuccess);

cudaError_t to_cuda_error(const Error& e, Fn fn) {
  GVIRTUS_LOG(kDebug) << name_of(fn) << ": " << e.what();
  switch (e.kind()) {
    case ErrorKind::kUnimplemented:
      return cudaErrorNotSupported;
    case ErrorKind::kDisconnected:
    case ErrorKind::kTimedOut:
    case ErrorKind::kOverloaded:
      g_state_epoch.fetch_add(1, std::memory_order_relaxed);
      return kBackendLost;  // the descriptor's value (cudart_descriptor.json)
    default:
      return cudaErrorUnknown;
  }
}

// Errors the stub produced without a round trip, per thread like the runtime's last error.
thread_local cudaError_t t_local_error = cudaSuccess;

// Whether this thread is in runtime_init_status's own call.
thread_local bool t_checking_init = false;

// The runtime's calls that make no context current natively (they need none).
bool needs_no_context(Fn fn) {
  switch (fn) {
    case Fn::cudaGetDeviceCount:
    case Fn::cudaGetDevice:
    case Fn::cudaSetDevice:  // cudaSetDevice tells of its own device (current_device.cpp)
    case Fn::cudaDriverGetVersion:
    case Fn::cudaRuntimeGetVersion:
    case Fn::cudaGetDeviceProperties:
    case Fn::cudaDeviceGetAttribute:
    case Fn::cudaGetDeviceFlags:
    case Fn::cudaSetDeviceFlags:
    case Fn::cudaDeviceCanAccessPeer:
    case Fn::cudaGetLastError:
    case Fn::cudaPeekAtLastError:
    case Fn::cudaChooseDevice:
    case Fn::cudaDeviceGetPCIBusId:
    case Fn::cudaDeviceGetByPCIBusId:
    case Fn::cudaSetValidDevices:
    case Fn::gvirtusHostCallbackNext:
      return true;
    default:
      return false;
  }
}

thread_local bool t_context_told = false;

}  // namespace

cudaError_t record_local_error(cudaError_t error) {
  if (error != cudaSuccess) t_local_error = error;
  return error;
}

cudaError_t refuse_locally(cudaError_t error) {
  const cudaError_t init = runtime_init_status();
  return record_local_error(init != cudaSuccess ? init : error);
}

cudaError_t unknown_function() {
  return refuse_locally(cudaErrorInvalidResourceHandle);
}

cudaError_t local_last_error(bool take) {
  const cudaError_t error = t_local_error;
  if (take) t_local_error = cudaSuccess;
  return error;
}

void note_runtime_context(Fn fn) {
  if (t_context_told || t_checking_init || needs_no_context(fn)) return;
  t_context_told = true;
  // Never a call of its own here: the call noted may be one sent ahead whose backend thread is
  // still busy with it (a host function waiting for this very thread).
  gvirtus_runtime_context_set(known_device());
}

cudaError_t runtime_init_status() {
  if (const cudaError_t failed = known_init_failure(); failed != cudaSuccess) return failed;
  // One check per session: a forked child has its own session and checks again.
  static std::atomic<const void*> checked_in{nullptr};
  const void* session = process_session::token();
  if (checked_in.load(std::memory_order_acquire) == session) return cudaSuccess;
  t_checking_init = true;  // the check is the stub's: the program made no context current
  const cudaError_t rc = ::cudaFree(nullptr);
  t_checking_init = false;
  if (is_init_failure(rc) || rc == cudaErrorDevicesUnavailable) return rc;
  checked_in.store(session, std::memory_order_release);
  return cudaSuccess;
}

uint64_t state_epoch() {
  return g_state_epoch.load(std::memory_order_relaxed);
}

cudaError_t known_init_failure() {
  return static_cast<cudaError_t>(g_init_failure.load(std::memory_order_relaxed));
}

// In a client's pool of several backends the runtime stub serves the first backend's devices only
// (docs/cluster.md: NVIDIA's own runtime, linked statically as nvcc does by default, runs on the
// pool's libcuda.so.1 and sees them all): its calls are pinned there, whatever route the thread's
// driver calls took. Nothing to route with one backend.
std::optional<uint32_t> pinned_backend() {
  static std::atomic<bool> said{false};
  return stub::pinned_to_first_backend(
      said, "libcudart.so.13",
      "a program linked with NVIDIA's runtime statically (nvcc's default) sees every backend's "
      "devices");
}

// What every synchronous reply goes through: the result, then the call's outputs.
cudaError_t read_result(Fn fn, FunctionRef<void(process_session::ReplyDecoder)> wait,
                        Decoder decode) {
  cudaError_t result = cudaErrorUnknown;
  auto read_reply = [&](WireReader& in) {
    result = static_cast<cudaError_t>(in.get<int32_t>());
    decode(in);
    in.expect_end();
  };
  wait(read_reply);
  if (is_init_failure(result)) g_init_failure.store(result, std::memory_order_relaxed);
  if (may_change_state(result)) g_state_epoch.fetch_add(1, std::memory_order_relaxed);
  g_context.follow(static_cast<uint16_t>(fn), result);
  // The driver stub of the process keeps answers about the primary context (its state, its id,
  // its functions' occupancy): a reset, new flags or a function's new attributes change them.
  if (result == cudaSuccess &&
      (fn == Fn::cudaDeviceReset || fn == Fn::cudaSetDeviceFlags || fn == Fn::cudaInitDevice ||
       fn == Fn::cudaFuncSetAttribute || fn == Fn::cudaFuncSetCacheConfig ||
       fn == Fn::cudaDeviceSetCacheConfig)) {
    process_session::device_generation_bump();
  }
  // The backend now holds a newer error than any the stub recorded (see last_error.cpp).
  if (result != cudaSuccess && fn != Fn::cudaGetLastError && fn != Fn::cudaPeekAtLastError) {
    t_local_error = cudaSuccess;
  }
  return result;
}

cudaError_t remote_sync(Fn fn, Encoder encode, Decoder decode) {
  (void)registered;
  const stub::RouteScope route(pinned_backend());
  try {
    WireWriter& args = stub::encoder();
    encode(args);
    const ByteView pieces[] = {args.view()};
    const cudaError_t result = read_result(
        fn,
        [&](process_session::ReplyDecoder read) {
          process_session::call(call_id(fn), pieces, read);
        },
        decode);
    if (result == cudaSuccess) note_runtime_context(fn);
    return result;
  } catch (const Error& e) {
    return to_cuda_error(e, fn);
  } catch (...) {
    return cudaErrorUnknown;  // e.g. bad_alloc: never let an exception cross the C ABI
  }
}

RemotePending remote_begin(Fn fn, Encoder encode, ByteView data,
                           process_session::Landing* landing) {
  (void)registered;
  RemotePending pending{fn};
  const stub::RouteScope route(pinned_backend());
  try {
    WireWriter& args = stub::encoder();
    encode(args);
    const ByteView pieces[] = {args.view(), data};
    pending.call =
        process_session::begin_call(call_id(fn), process_session::request_pieces(pieces), landing);
  } catch (const Error& e) {
    pending.failed = to_cuda_error(e, fn);
  } catch (...) {
    pending.failed = cudaErrorUnknown;
  }
  return pending;
}

cudaError_t remote_finish(const RemotePending& pending, Decoder decode) {
  if (pending.failed != cudaSuccess) return pending.failed;
  const stub::RouteScope route(pinned_backend());
  try {
    const cudaError_t result = read_result(
        pending.fn,
        [&](process_session::ReplyDecoder read) {
          process_session::finish_call(pending.call, read);
        },
        decode);
    if (result == cudaSuccess) note_runtime_context(pending.fn);
    return result;
  } catch (const Error& e) {
    return to_cuda_error(e, pending.fn);
  } catch (...) {
    return cudaErrorUnknown;
  }
}

cudaError_t remote_async(Fn fn, Encoder encode, ByteView data) {
  (void)registered;
  const stub::RouteScope route(pinned_backend());
  if (const cudaError_t failed = known_init_failure(); failed != cudaSuccess) return failed;
  if (g_context.has_sticky()) return static_cast<cudaError_t>(g_context.sticky());
  if (g_context.unavailable()) {  // rare: the data is copied into the request
    auto with_data = [&](WireWriter& w) {
      encode(w);
      w.put_raw(data.data(), data.size());
    };
    return remote_sync(fn, with_data, [](WireReader&) {});
  }
  try {
    WireWriter& args = stub::encoder();
    encode(args);
    const ByteView pieces[] = {args.view(), data};
    process_session::send_async(call_id(fn), process_session::request_pieces(pieces));
    note_runtime_context(fn);
    return cudaSuccess;
  } catch (const Error& e) {
    return to_cuda_error(e, fn);
  } catch (...) {
    return cudaErrorUnknown;
  }
}

}  // namespace gvirtus::cudart
