// A module's functions and a library's kernels enumerated, and their names, in the client
// libcuda.so.1 (wire: common/driver_wire.h). The handles are the backend's, as cuModuleGetFunction
// gives them. A name the driver returns lives as long as its function; the stub's copy lives as
// long as the process (names are interned: a handle reused for another kernel gets the new name,
// and a pointer handed out before stays valid).
#include <cuda.h>

#include <mutex>
#include <set>
#include <string>

#include "common/call_marshal.h"
#include "common/wire_record.h"
#include "cuda_remote_calls.h"
#include "plugins/cuda/common/driver_wire.h"
#include "plugins/cuda/frontend/lazy_libraries.h"
#include "plugins/cuda/frontend/modules.h"

namespace cr = gvirtus::cuda;

namespace {

template <typename Handle, typename Owner>
CUresult enumerate(cr::Fn fn, Handle* handles, unsigned int count, Owner owner) {
  if (handles == nullptr || count == 0) return CUDA_ERROR_INVALID_VALUE;
  // More than the wire carries at once: the rest of the caller's buffer is what no module fills.
  const uint32_t asked = count < cr::kMaxEnumerated ? count : cr::kMaxEnumerated;
  const cr::EnumerateRequest request{reinterpret_cast<uintptr_t>(owner), asked};
  return cr::remote_sync(
      fn, [&](gvirtus::WireWriter& w) { gvirtus::put_record(w, request); },
      [&](gvirtus::WireReader& r) {
        if (r.remaining() == 0) return;  // a failure brings no handles
        const uint32_t filled = r.get<uint32_t>();
        if (filled > asked) {
          gvirtus::raise(gvirtus::ErrorKind::kInvalidInput, "an enumeration longer than asked");
        }
        for (uint32_t i = 0; i < filled; ++i) handles[i] = gvirtus::marshal::get_value<Handle>(r);
      });
}

const char* interned(std::string_view name) {
  static std::mutex& mutex = *new std::mutex;
  static auto& names = *new std::set<std::string, std::less<>>;  // never destroyed (exit handlers)
  std::lock_guard lock(mutex);
  auto found = names.find(name);
  if (found == names.end()) found = names.emplace(name).first;
  return found->c_str();
}

template <typename Handle>
CUresult name_of(cr::Fn fn, const char** name, Handle handle) {
  if (name == nullptr || handle == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const char* answer = nullptr;
  const CUresult result = cr::remote_sync(
      fn, [&](gvirtus::WireWriter& w) { w.put<uint64_t>(reinterpret_cast<uintptr_t>(handle)); },
      [&](gvirtus::WireReader& r) {
        if (r.remaining() != 0) answer = interned(r.get_string(cr::kMaxKernelNameBytes));
      });
  if (result == CUDA_SUCCESS) *name = answer;
  return result;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) CUresult cuModuleEnumerateFunctions(
    CUfunction* functions, unsigned int numFunctions, CUmodule mod) {
  return enumerate(cr::Fn::cuModuleEnumerateFunctions, functions, numFunctions, mod);
}

extern "C" __attribute__((visibility("default"))) CUresult cuLibraryEnumerateKernels(
    CUkernel* kernels, unsigned int numKernels, CUlibrary lib) {
  CUlibrary backend = nullptr;
  if (const CUresult r = cr::backend_library(lib, &backend); r != CUDA_SUCCESS) return r;
  const CUresult result =
      enumerate(cr::Fn::cuLibraryEnumerateKernels, kernels, numKernels, backend);
  if (result == CUDA_SUCCESS && kernels != nullptr)
    cr::note_kernels(lib, std::span(kernels, numKernels));
  return result;
}

extern "C" __attribute__((visibility("default"))) CUresult cuFuncGetName(const char** name,
                                                                         CUfunction hfunc) {
  return name_of(cr::Fn::cuFuncGetName, name, hfunc);
}

extern "C" __attribute__((visibility("default"))) CUresult cuKernelGetName(const char** name,
                                                                           CUkernel hfunc) {
  return name_of(cr::Fn::cuKernelGetName, name, hfunc);
}
