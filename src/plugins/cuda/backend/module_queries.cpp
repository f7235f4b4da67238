// Module and library enumeration, function and kernel names (module_queries.h; wire:
// common/driver_wire.h's EnumerateRequest). The module or library must be the session's and the
// count at most kMaxEnumerated (more is malformed); every handle the driver returns becomes the
// session's, as cuModuleGetFunction's does. A name is copied into the reply: the driver's string
// lives in the worker.
#include "plugins/cuda/backend/module_queries.h"

#include <cstring>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/wire_record.h"
#include "cuda_real.h"
#include "cuda_vetting.h"
#include "plugins/cuda/common/driver_wire.h"

namespace gvirtus::cuda {
namespace {

template <typename Owner, typename Handle, typename Enumerate>
void enumerate(WireReader& in, WireWriter& out, CUresult& result, Enumerate real_call) {
  const auto request = get_record<EnumerateRequest>(in);
  in.expect_end();
  if (request.count > kMaxEnumerated) {
    raise(ErrorKind::kInvalidInput, "an enumeration of " + std::to_string(request.count) +
                                        " handles (at most " + std::to_string(kMaxEnumerated) +
                                        ")");
  }
  const auto owner = reinterpret_cast<Owner>(static_cast<uintptr_t>(request.handle));
  std::vector<Handle> handles(request.count);
  result = vet(owner);
  if (result == CUDA_SUCCESS && real_call == nullptr) result = CUDA_ERROR_NOT_SUPPORTED;
  if (result == CUDA_SUCCESS) result = real_call(handles.data(), request.count, owner);
  out.put<int32_t>(result);
  if (result != CUDA_SUCCESS) return;
  // The driver fills at most `count` entries and leaves the rest as they were (null here).
  uint32_t filled = 0;
  while (filled < request.count && handles[filled] != nullptr) ++filled;
  out.put<uint32_t>(filled);
  for (uint32_t i = 0; i < filled; ++i) {
    adopt(handles[i]);
    marshal::put_value(out, handles[i]);
  }
}

template <typename Handle, typename GetName>
void name_of(WireReader& in, WireWriter& out, CUresult& result, GetName real_call) {
  const auto handle = reinterpret_cast<Handle>(static_cast<uintptr_t>(in.get<uint64_t>()));
  in.expect_end();
  const char* name = nullptr;
  result = handle == nullptr ? CUDA_ERROR_INVALID_VALUE : vet(handle);
  if (result == CUDA_SUCCESS && real_call == nullptr) result = CUDA_ERROR_NOT_SUPPORTED;
  if (result == CUDA_SUCCESS) result = real_call(&name, handle);
  if (result == CUDA_SUCCESS && name == nullptr) result = CUDA_ERROR_UNKNOWN;
  // A name longer than either side passes on (no kernel's is) is not sent.
  const size_t length = result == CUDA_SUCCESS ? ::strnlen(name, kMaxKernelNameBytes) : 0;
  if (length == kMaxKernelNameBytes) result = CUDA_ERROR_NOT_SUPPORTED;
  out.put<int32_t>(result);
  if (result == CUDA_SUCCESS) out.put_string(std::string_view(name, length));
}

}  // namespace

bool run_module_query(Fn fn, WireReader& in, WireWriter& out, CUresult& result) {
  switch (fn) {
    case Fn::cuModuleEnumerateFunctions:
      enumerate<CUmodule, CUfunction>(in, out, result, real().cuModuleEnumerateFunctions);
      return true;
    case Fn::cuLibraryEnumerateKernels:
      enumerate<CUlibrary, CUkernel>(in, out, result, real().cuLibraryEnumerateKernels);
      return true;
    case Fn::cuFuncGetName:
      name_of<CUfunction>(in, out, result, real().cuFuncGetName);
      return true;
    case Fn::cuKernelGetName:
      name_of<CUkernel>(in, out, result, real().cuKernelGetName);
      return true;
    default:
      return false;
  }
}

}  // namespace gvirtus::cuda
