// Host functions in stream order (cuLaunchHostFunc, cuStreamAddCallback): they are the
// application's code, so they run in the application, on the session's callback thread, while
// the backend's stream waits for them (frontend/host_callbacks.h; backend/host_functions.h). The
// stub registers the function, sends its token ahead in the function's place and returns at
// once, as the driver does; the stream's later work starts once the function has returned. A
// capturing stream takes the backend's gate into its graph, which then runs the function each
// time it is launched.
#include "plugins/cuda/frontend/host_functions.h"

#include "common/call_marshal.h"
#include "cuda_remote_calls.h"
#include "frontend/frontend_abi.h"
#include "frontend/route_scope.h"
#include "plugins/cuda/frontend/pool_routes.h"

namespace gvirtus::cuda {
namespace {

void run_host_function(const gvirtus_host_callback* callback, int32_t) {
  reinterpret_cast<CUhostFn>(callback->function)(callback->data);
}

void run_stream_callback(const gvirtus_host_callback* callback, int32_t status) {
  reinterpret_cast<CUstreamCallback>(callback->function)(
      static_cast<CUstream>(callback->extra), static_cast<CUresult>(status), callback->data);
}

// The session's callback thread serves the route's backend; the failure as the driver's status.
CUresult serving() {
  switch (gvirtus_host_callbacks_serve(call_id(Fn::gvirtusHostCallbackNext))) {
    case GVIRTUS_OK:
      return CUDA_SUCCESS;
    case static_cast<int>(ErrorKind::kUnimplemented):
      return CUDA_ERROR_NOT_SUPPORTED;
    case static_cast<int>(ErrorKind::kFailed):
      return CUDA_ERROR_INVALID_VALUE;
    default:  // disconnected, timed out, overloaded, unreadable
      return CUDA_ERROR_DEVICE_UNAVAILABLE;
  }
}

CUresult register_callback(const gvirtus_host_callback& callback, uint64_t& token) {
  if (const CUresult served = serving(); served != CUDA_SUCCESS) return served;
  token = gvirtus_host_callback_add(&callback);
  return token != 0 ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

// Sends the enqueue of a registered callback ahead; a failure to send forgets it.
CUresult enqueue(Fn fn, CUstream stream, const gvirtus_host_callback& callback) {
  const stub::RouteScope route(pool_backend_of_handle("stream", stream));
  uint64_t token = 0;
  if (const CUresult r = register_callback(callback, token); r != CUDA_SUCCESS) return r;
  const CUresult sent = remote_async(fn, [&](WireWriter& w) {
    marshal::put_value(w, stream);
    w.put<uint64_t>(token);
  });
  if (sent != CUDA_SUCCESS) drop_host_function(token);
  return sent;
}

}  // namespace

CUresult host_function_token(CUhostFn fn, void* data, uint64_t& token) {
  const gvirtus_host_callback callback{run_host_function, reinterpret_cast<void*>(fn), data,
                                       nullptr};
  return register_callback(callback, token);
}

bool host_function_of(uint64_t token, CUhostFn& fn, void*& data) {
  gvirtus_host_callback callback{};
  if (gvirtus_host_callback_find(token, &callback) == 0 || callback.run != run_host_function) {
    return false;
  }
  fn = reinterpret_cast<CUhostFn>(callback.function);
  data = callback.data;
  return true;
}

CUresult host_callback_token(const gvirtus_host_callback& callback, uint64_t& token) {
  return register_callback(callback, token);
}

void drop_host_function(uint64_t token) {
  gvirtus_host_callback_drop(token);
}

}  // namespace gvirtus::cuda

namespace cr = gvirtus::cuda;

extern "C" __attribute__((visibility("default"))) CUresult cuLaunchHostFunc(CUstream hStream,
                                                                            CUhostFn fn,
                                                                            void* userData) {
  if (fn == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const gvirtus_host_callback callback{cr::run_host_function, reinterpret_cast<void*>(fn), userData,
                                       nullptr};
  return cr::enqueue(cr::Fn::cuLaunchHostFunc, hStream, callback);
}

extern "C" __attribute__((visibility("default"))) CUresult cuStreamAddCallback(
    CUstream hStream, CUstreamCallback callback, void* userData, unsigned int flags) {
  if (callback == nullptr || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  const gvirtus_host_callback registered{cr::run_stream_callback, reinterpret_cast<void*>(callback),
                                         userData, hStream};
  return cr::enqueue(cr::Fn::cuStreamAddCallback, hStream, registered);
}
