// User objects (user_objects.h).
#include "plugins/cuda/backend/user_objects.h"

#include "backend/services/host_gates.h"
#include "backend/services/user_object_ledger.h"
#include "common/call_marshal.h"
#include "cuda_real.h"
#include "cuda_vetting.h"
#include "plugins/cuda/backend/request_checks.h"

namespace gvirtus::cuda {
namespace {

using services::first_failure;

services::UserObjectLedger& ledger() {
  static auto* const kept = new services::UserObjectLedger(CUDA_ERROR_INVALID_VALUE, "cuda");
  return *kept;
}

void CUDA_CB run_destructor(void* gate) {
  services::HostGates::notify(gate);
}

void create(WireReader& in, WireWriter& out, CUresult& result) {
  const auto token = in.get<uint64_t>();
  const auto count = in.get<uint32_t>();
  const auto flags = in.get<uint32_t>();
  in.expect_end();
  const auto& d = real();
  CUuserObject object = nullptr;
  result = first_failure(CUDA_SUCCESS, token != 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE,
                         lacks(d.cuUserObjectCreate));
  if (result == CUDA_SUCCESS) {
    result = static_cast<CUresult>(ledger().create(count, [&](const void*& made) -> int32_t {
      services::Gate* gate = services::host_gates().make(token, true);
      if (gate == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;  // HostGates::kMaxGates live
      const CUresult r = d.cuUserObjectCreate(&object, gate, run_destructor, count, flags);
      if (r != CUDA_SUCCESS) {
        services::host_gates().discard(gate);
        object = nullptr;
      }
      made = object;
      return r;
    }));
  }
  out.put<int32_t>(result);
  marshal::put_value(out, result == CUDA_SUCCESS ? object : nullptr);
}

}  // namespace

bool run_user_object_call(Fn fn, WireReader& in, WireWriter& out, CUresult& result) {
  const auto& d = real();
  switch (fn) {
    case Fn::cuUserObjectCreate:
      create(in, out, result);
      return true;
    case Fn::cuUserObjectRetain:
    case Fn::cuUserObjectRelease: {
      const auto object = marshal::get_value<CUuserObject>(in);
      const auto count = in.get<uint32_t>();
      in.expect_end();
      const bool retain = fn == Fn::cuUserObjectRetain;
      result = retain ? lacks(d.cuUserObjectRetain) : lacks(d.cuUserObjectRelease);
      if (result == CUDA_SUCCESS) {
        auto call = [&]() -> int32_t {
          return retain ? d.cuUserObjectRetain(object, count)
                        : d.cuUserObjectRelease(object, count);
        };
        result = static_cast<CUresult>(retain ? ledger().retain(object, count, call)
                                              : ledger().release(object, count, call));
      }
      out.put<int32_t>(result);
      return true;
    }
    case Fn::cuGraphRetainUserObject: {
      const auto graph = marshal::get_value<CUgraph>(in);
      const auto object = marshal::get_value<CUuserObject>(in);
      const auto count = in.get<uint32_t>();
      const auto flags = in.get<uint32_t>();
      in.expect_end();
      result =
          first_failure(CUDA_SUCCESS, graph != nullptr ? vet(graph) : CUDA_ERROR_INVALID_VALUE,
                        flags == 0 || flags == CU_GRAPH_USER_OBJECT_MOVE ? CUDA_SUCCESS
                                                                         : CUDA_ERROR_INVALID_VALUE,
                        lacks(d.cuGraphRetainUserObject));
      if (result == CUDA_SUCCESS) {
        result = static_cast<CUresult>(ledger().graph_retain(
            graph, object, count, flags == CU_GRAPH_USER_OBJECT_MOVE,
            [&]() -> int32_t { return d.cuGraphRetainUserObject(graph, object, count, flags); }));
      }
      out.put<int32_t>(result);
      return true;
    }
    case Fn::cuGraphReleaseUserObject: {
      const auto graph = marshal::get_value<CUgraph>(in);
      const auto object = marshal::get_value<CUuserObject>(in);
      const auto count = in.get<uint32_t>();
      in.expect_end();
      result = first_failure(CUDA_SUCCESS, graph != nullptr ? vet(graph) : CUDA_ERROR_INVALID_VALUE,
                             lacks(d.cuGraphReleaseUserObject));
      if (result == CUDA_SUCCESS) {
        result =
            static_cast<CUresult>(ledger().graph_release(graph, object, count, [&]() -> int32_t {
              return d.cuGraphReleaseUserObject(graph, object, count);
            }));
      }
      out.put<int32_t>(result);
      return true;
    }
    default:
      return false;
  }
}

void forget_user_object_references(CUgraph graph) {
  ledger().forget_graph(graph);
}

void forget_all_user_objects() {
  ledger().forget_all();
}

}  // namespace gvirtus::cuda
