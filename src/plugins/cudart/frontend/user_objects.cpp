// User objects in the runtime stub (rows 285-289; wire: the cuda plugin's backend/user_objects.h).
// The destructor is the application's: it travels as a token (host_functions.h) and runs in this
// process, on the session's callback thread, once the backend's runtime has let go of the
// object's last reference - never on the calling thread, as cudaUserObjectNoDestructorSync
// promises. The backend counts the session's references and refuses a release of references not
// held with cudaErrorInvalidValue, where the runtime's behaviour would be undefined.
#include <cuda_runtime_api.h>

#include "plugins/cudart/common/graph_wire.h"
#include "plugins/cudart/frontend/host_functions.h"
#include "plugins/cudart/frontend/stub_call.h"

namespace cr = gvirtus::cudart;
using gvirtus::WireReader;
using gvirtus::WireWriter;

namespace {

// A call about `object` (its graph first for the graph forms) that replies with its result only.
cudaError_t about_object(cr::Fn fn, cudaGraph_t graph, cudaUserObject_t object, unsigned int count,
                         const unsigned int* flags) {
  if (const cudaError_t init = cr::runtime_init_status(); init != cudaSuccess) {
    return cr::record_local_error(init);  // as natively, before the arguments
  }
  return cr::remote_sync(
      fn,
      [&](WireWriter& w) {
        if (fn == cr::Fn::cudaGraphRetainUserObject || fn == cr::Fn::cudaGraphReleaseUserObject) {
          w.put<uint64_t>(cr::wire_handle(graph));
        }
        w.put<uint64_t>(cr::wire_handle(object));
        w.put<uint32_t>(count);
        if (flags != nullptr) w.put<uint32_t>(*flags);
      },
      [](WireReader&) {});
}

}  // namespace

GVIRTUS_CUDART_EXPORT cudaError_t cudaUserObjectCreate(cudaUserObject_t* object_out, void* ptr,
                                                       cudaHostFn_t destroy,
                                                       unsigned int initialRefcount,
                                                       unsigned int flags) {
  if (object_out == nullptr || destroy == nullptr) return cr::refuse_locally(cudaErrorInvalidValue);
  if (const cudaError_t init = cr::runtime_init_status(); init != cudaSuccess) {
    return cr::record_local_error(init);
  }
  uint64_t token = 0;
  if (const cudaError_t r = cr::host_function_token(destroy, ptr, token); r != cudaSuccess) {
    return r;
  }
  uint64_t made = 0;
  const cudaError_t result = cr::remote_sync(
      cr::Fn::cudaUserObjectCreate,
      [&](WireWriter& w) {
        w.put<uint64_t>(token);
        w.put<uint32_t>(initialRefcount);
        w.put<uint32_t>(flags);
      },
      [&](WireReader& r) {
        if (r.remaining() != 0) made = r.get<uint64_t>();
      });
  if (result != cudaSuccess || made == 0) {
    cr::drop_host_function(token);
    return result != cudaSuccess ? result : cr::record_local_error(cudaErrorInvalidValue);
  }
  *object_out = cr::handle_from_wire<cudaUserObject_t>(made);
  return cudaSuccess;
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaUserObjectRetain(cudaUserObject_t object,
                                                       unsigned int count) {
  return about_object(cr::Fn::cudaUserObjectRetain, nullptr, object, count, nullptr);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaUserObjectRelease(cudaUserObject_t object,
                                                        unsigned int count) {
  return about_object(cr::Fn::cudaUserObjectRelease, nullptr, object, count, nullptr);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphRetainUserObject(cudaGraph_t graph,
                                                            cudaUserObject_t object,
                                                            unsigned int count,
                                                            unsigned int flags) {
  return about_object(cr::Fn::cudaGraphRetainUserObject, graph, object, count, &flags);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphReleaseUserObject(cudaGraph_t graph,
                                                             cudaUserObject_t object,
                                                             unsigned int count) {
  return about_object(cr::Fn::cudaGraphReleaseUserObject, graph, object, count, nullptr);
}
