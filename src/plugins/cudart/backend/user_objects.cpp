// User objects (rows 285-289 of cudart_calls.txt; the wire is the cuda plugin's, its
// backend/user_objects.h, with cudaUserObject_t for CUuserObject). The destructor is the
// client's, named by a token; the runtime gets a gate nothing waits on in its place
// (services/host_gates.h). References are counted by the session's ledger
// (services/user_object_ledger.h): a release of references the session does not hold, or a use
// of an object it holds none of, is cudaErrorInvalidValue before the runtime sees it, kept as the
// thread's pending error (the ledger refuses through services::refuse).
#include <cuda_runtime_api.h>

#include "backend/services/host_gates.h"
#include "backend/services/user_object_ledger.h"
#include "plugins/cudart/backend/handlers.h"
#include "plugins/cudart/backend/user_objects.h"
#include "plugins/cudart/backend/vetting.h"
#include "plugins/cudart/common/graph_wire.h"

namespace gvirtus::cudart {
namespace {

services::UserObjectLedger& ledger() {
  static auto* const kept = new services::UserObjectLedger(cudaErrorInvalidValue, "cudart");
  return *kept;
}

void CUDART_CB run_destructor(void* gate) {
  services::HostGates::notify(gate);
}

cudaError_t create(WireReader& in, WireWriter& out) {
  const auto token = in.get<uint64_t>();
  const auto count = in.get<uint32_t>();
  const auto flags = in.get<uint32_t>();
  in.expect_end();
  cudaUserObject_t object = nullptr;
  cudaError_t result = token != 0 ? cudaSuccess : cudaErrorInvalidValue;
  if (result == cudaSuccess) {
    result = static_cast<cudaError_t>(ledger().create(count, [&](const void*& made) -> int32_t {
      services::Gate* gate = services::host_gates().make(token, true);
      if (gate == nullptr) return cudaErrorMemoryAllocation;  // HostGates::kMaxGates live
      const cudaError_t r = ::cudaUserObjectCreate(&object, gate, run_destructor, count, flags);
      if (r != cudaSuccess) {
        services::host_gates().discard(gate);
        object = nullptr;
      }
      made = object;
      return r;
    }));
  }
  out.put<int32_t>(result);
  out.put<uint64_t>(result == cudaSuccess ? wire_handle(object) : 0);
  return result;
}

}  // namespace

bool run_user_object_call(Fn fn, WireReader& in, WireWriter& out, cudaError_t& result) {
  switch (fn) {
    case Fn::cudaUserObjectCreate:
      result = create(in, out);
      return true;
    case Fn::cudaUserObjectRetain:
    case Fn::cudaUserObjectRelease: {
      const auto object = handle_from_wire<cudaUserObject_t>(in.get<uint64_t>());
      const auto count = in.get<uint32_t>();
      in.expect_end();
      const bool retain = fn == Fn::cudaUserObjectRetain;
      auto call = [&]() -> int32_t {
        return retain ? ::cudaUserObjectRetain(object, count)
                      : ::cudaUserObjectRelease(object, count);
      };
      result = static_cast<cudaError_t>(retain ? ledger().retain(object, count, call)
                                               : ledger().release(object, count, call));
      out.put<int32_t>(result);
      return true;
    }
    case Fn::cudaGraphRetainUserObject: {
      const auto graph = handle_from_wire<cudaGraph_t>(in.get<uint64_t>());
      const auto object = handle_from_wire<cudaUserObject_t>(in.get<uint64_t>());
      const auto count = in.get<uint32_t>();
      const auto flags = in.get<uint32_t>();
      in.expect_end();
      result = first_failure(
          graph != nullptr ? vet(graph) : cudaErrorInvalidValue,
          flags == 0 || flags == cudaGraphUserObjectMove ? cudaSuccess : cudaErrorInvalidValue);
      if (result == cudaSuccess) {
        result = static_cast<cudaError_t>(ledger().graph_retain(
            graph, object, count, flags == cudaGraphUserObjectMove,
            [&]() -> int32_t { return ::cudaGraphRetainUserObject(graph, object, count, flags); }));
      }
      out.put<int32_t>(result);
      return true;
    }
    case Fn::cudaGraphReleaseUserObject: {
      const auto graph = handle_from_wire<cudaGraph_t>(in.get<uint64_t>());
      const auto object = handle_from_wire<cudaUserObject_t>(in.get<uint64_t>());
      const auto count = in.get<uint32_t>();
      in.expect_end();
      result = graph != nullptr ? vet(graph) : cudaErrorInvalidValue;
      if (result == cudaSuccess) {
        result =
            static_cast<cudaError_t>(ledger().graph_release(graph, object, count, [&]() -> int32_t {
              return ::cudaGraphReleaseUserObject(graph, object, count);
            }));
      }
      out.put<int32_t>(result);
      return true;
    }
    default:
      return false;
  }
}

void forget_user_object_references(cudaGraph_t graph) {
  ledger().forget_graph(graph);
}

void forget_all_user_objects() {
  ledger().forget_all();
}

}  // namespace gvirtus::cudart
