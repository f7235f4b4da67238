// Host functions in stream order (cudaLaunchHostFunc, cudaStreamAddCallback): they are the
// application's code, so they run in the application, on the session's callback thread, while
// the backend's stream waits for them (frontend/host_callbacks.h; backend/host_functions.h). The
// stub registers the function, sends its token ahead in the function's place and returns at
// once, as the runtime does; the stream's later work starts once the function has returned. A
// capturing stream takes the backend's gate into its graph, which then runs the function each
// time it is launched. The same as the driver stub's cuLaunchHostFunc.
#include "plugins/cudart/frontend/host_functions.h"

#include "common/error.h"
#include "frontend/frontend_abi.h"
#include "plugins/cudart/common/graph_wire.h"
#include "plugins/cudart/frontend/stub_call.h"

namespace cr = gvirtus::cudart;

namespace gvirtus::cudart {
namespace {

void run_host_function(const gvirtus_host_callback* callback, int32_t) {
  reinterpret_cast<cudaHostFn_t>(callback->function)(callback->data);
}

void run_stream_callback(const gvirtus_host_callback* callback, int32_t status) {
  reinterpret_cast<cudaStreamCallback_t>(callback->function)(
      static_cast<cudaStream_t>(callback->extra), static_cast<cudaError_t>(status), callback->data);
}

// The session's callback thread serves the calling thread's route; a failure as the runtime's
// status, recorded as the last error.
cudaError_t serving() {
  switch (gvirtus_host_callbacks_serve(call_id(Fn::gvirtusHostCallbackNext))) {
    case GVIRTUS_OK:
      return cudaSuccess;
    case static_cast<int>(ErrorKind::kUnimplemented):
      return record_local_error(cudaErrorNotSupported);
    case static_cast<int>(ErrorKind::kFailed):
      return record_local_error(cudaErrorInvalidValue);
    default:  // disconnected, timed out, overloaded, unreadable
      return record_local_error(cudaErrorDevicesUnavailable);
  }
}

cudaError_t register_callback(const gvirtus_host_callback& callback, uint64_t& token) {
  if (const cudaError_t served = serving(); served != cudaSuccess) return served;
  token = gvirtus_host_callback_add(&callback);
  return token != 0 ? cudaSuccess : record_local_error(cudaErrorMemoryAllocation);
}

// Sends the enqueue of a registered callback ahead; a failure to send forgets it.
cudaError_t enqueue(Fn fn, cudaStream_t stream, const gvirtus_host_callback& callback) {
  // As natively, a runtime that cannot start says so here (a call sent ahead would not).
  if (const cudaError_t init = runtime_init_status(); init != cudaSuccess) {
    return record_local_error(init);
  }
  uint64_t token = 0;
  if (const cudaError_t r = register_callback(callback, token); r != cudaSuccess) return r;
  const cudaError_t sent = remote_async(fn, [&](WireWriter& w) {
    w.put<uint64_t>(wire_handle(stream));
    w.put<uint64_t>(token);
  });
  if (sent != cudaSuccess) drop_host_function(token);
  return sent;
}

}  // namespace

cudaError_t host_function_token(cudaHostFn_t fn, void* data, uint64_t& token) {
  const gvirtus_host_callback callback{run_host_function, reinterpret_cast<void*>(fn), data,
                                       nullptr};
  return register_callback(callback, token);
}

bool host_function_of(uint64_t token, cudaHostFn_t& fn, void*& data) {
  gvirtus_host_callback callback{};
  if (gvirtus_host_callback_find(token, &callback) == 0 || callback.run != run_host_function) {
    return false;
  }
  fn = reinterpret_cast<cudaHostFn_t>(callback.function);
  data = callback.data;
  return true;
}

cudaError_t host_callback_token(const gvirtus_host_callback& callback, uint64_t& token) {
  return register_callback(callback, token);
}

void drop_host_function(uint64_t token) {
  gvirtus_host_callback_drop(token);
}

}  // namespace gvirtus::cudart

GVIRTUS_CUDART_EXPORT cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn,
                                                     void* userData) {
  if (fn == nullptr) return cr::refuse_locally(cudaErrorInvalidValue);
  const gvirtus_host_callback callback{cr::run_host_function, reinterpret_cast<void*>(fn), userData,
                                       nullptr};
  return cr::enqueue(cr::Fn::cudaLaunchHostFunc, stream, callback);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaStreamAddCallback(cudaStream_t stream,
                                                        cudaStreamCallback_t callback,
                                                        void* userData, unsigned int flags) {
  if (callback == nullptr || flags != 0) return cr::refuse_locally(cudaErrorInvalidValue);
  const gvirtus_host_callback registered{cr::run_stream_callback, reinterpret_cast<void*>(callback),
                                         userData, stream};
  return cr::enqueue(cr::Fn::cudaStreamAddCallback, stream, registered);
}
