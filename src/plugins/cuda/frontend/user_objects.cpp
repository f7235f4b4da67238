// User objects in the client libcuda.so.1 (rows 267-271; wire: backend/user_objects.h). The
// destructor is the application's: it travels as a token (host_functions.h) and runs in this
// process, on the session's callback thread, once the backend's driver has let go of the
// object's last reference - never on the calling thread, as the driver promises with
// CU_USER_OBJECT_NO_DESTRUCTOR_SYNC. The backend counts the session's references and refuses a
// release of references not held with CUDA_ERROR_INVALID_VALUE, where the driver's behaviour
// would be undefined. In a pool, an object lives on the backend of the calling thread's route
// when it is made, and every later call about it goes there.
#include <cuda.h>

#include "common/call_marshal.h"
#include "cuda_remote_calls.h"
#include "frontend/route_scope.h"
#include "plugins/cuda/frontend/host_functions.h"
#include "plugins/cuda/frontend/pool_routes.h"

namespace cr = gvirtus::cuda;
using cr::Fn;
using gvirtus::WireReader;
using gvirtus::WireWriter;
namespace marshal = gvirtus::marshal;

namespace {

// A call about `object` (its graph first for the graph forms) that replies with its result only.
CUresult about_object(Fn fn, CUgraph graph, CUuserObject object, unsigned int count,
                      const unsigned int* flags) {
  if (object == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const gvirtus::stub::RouteScope route(cr::pool_backend_of_handle("user object", object));
  return cr::remote_sync(
      fn,
      [&](WireWriter& w) {
        if (fn == Fn::cuGraphRetainUserObject || fn == Fn::cuGraphReleaseUserObject) {
          marshal::put_value(w, graph);
        }
        marshal::put_value(w, object);
        w.put<uint32_t>(count);
        if (flags != nullptr) w.put<uint32_t>(*flags);
      },
      [](WireReader&) {});
}

}  // namespace

#define GVIRTUS_EXPORT extern "C" __attribute__((visibility("default")))

GVIRTUS_EXPORT CUresult cuUserObjectCreate(CUuserObject* object_out, void* ptr, CUhostFn destroy,
                                           unsigned int initialRefcount, unsigned int flags) {
  if (object_out == nullptr || destroy == nullptr) return CUDA_ERROR_INVALID_VALUE;
  uint64_t token = 0;
  if (const CUresult r = cr::host_function_token(destroy, ptr, token); r != CUDA_SUCCESS) {
    return r;
  }
  CUuserObject made = nullptr;
  const CUresult result = cr::remote_sync(
      Fn::cuUserObjectCreate,
      [&](WireWriter& w) {
        w.put<uint64_t>(token);
        w.put<uint32_t>(initialRefcount);
        w.put<uint32_t>(flags);
      },
      [&](WireReader& r) {
        if (r.remaining() != 0) made = marshal::get_value<CUuserObject>(r);
      });
  if (result != CUDA_SUCCESS || made == nullptr) {
    cr::drop_host_function(token);
    return result != CUDA_SUCCESS ? result : CUDA_ERROR_INVALID_VALUE;
  }
  cr::pool_note_handle("user object", made);
  *object_out = made;
  return CUDA_SUCCESS;
}

GVIRTUS_EXPORT CUresult cuUserObjectRetain(CUuserObject object, unsigned int count) {
  return about_object(Fn::cuUserObjectRetain, nullptr, object, count, nullptr);
}

GVIRTUS_EXPORT CUresult cuUserObjectRelease(CUuserObject object, unsigned int count) {
  return about_object(Fn::cuUserObjectRelease, nullptr, object, count, nullptr);
}

GVIRTUS_EXPORT CUresult cuGraphRetainUserObject(CUgraph graph, CUuserObject object,
                                                unsigned int count, unsigned int flags) {
  return about_object(Fn::cuGraphRetainUserObject, graph, object, count, &flags);
}

GVIRTUS_EXPORT CUresult cuGraphReleaseUserObject(CUgraph graph, CUuserObject object,
                                                 unsigned int count) {
  return about_object(Fn::cuGraphReleaseUserObject, graph, object, count, nullptr);
}
