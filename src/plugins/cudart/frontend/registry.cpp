// The stub's module, kernel and variable records, and their preparation in a backend session.
#include "plugins/cudart/frontend/registry.h"

#include <cuda.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/log.h"
#include "common/wire_record.h"
#include "frontend/process_session.h"
#include "plugins/cuda/common/jit_options.h"
#include "plugins/cuda/common/module_image.h"
#include "plugins/cudart/common/module_wire.h"
#include "plugins/cudart/fatbin/elf_nv_info.h"
#include "plugins/cudart/fatbin/ptx_params.h"
#include "plugins/cudart/frontend/registration.h"
#include "plugins/cudart/frontend/stub_call.h"

namespace gvirtus::cudart {

struct Module {
  explicit Module(const void* w) : wrapper(w) {}
  uint64_t id() const { return reinterpret_cast<uintptr_t>(this); }

  const void* wrapper;  // the program's fatbin wrapper, valid while the module is registered
  // A module the program loaded itself (cudaLibraryLoadData, libraries.cpp): its own copy of the
  // image (a fatbinary, a cubin or PTX), and whether the program has unloaded it. An unloaded
  // library's record stays, without its image, so that its id and its kernels' never name
  // anything else on the backend.
  std::vector<std::byte> owned_image;
  bool unloaded = false;
  bool library() const { return wrapper == nullptr; }  // a registered module has its wrapper
  std::vector<std::unique_ptr<Kernel>> kernels;
  std::vector<std::unique_ptr<Variable>> variables;

  std::mutex mutex;  // guards the fields below, and serialises preparing this module's records
  std::span<const std::byte> image;  // the fatbinary, once located
  bool layouts_read = false;
  std::vector<fatbin::KernelLayout> layouts;
  const void* loaded_in = nullptr;  // the session that has the module
};

namespace {

struct Registry {
  std::shared_mutex mutex;
  std::vector<std::unique_ptr<Module>> modules;
  std::unordered_map<const void*, Kernel*> kernels_by_function;
  std::unordered_map<const void*, Kernel*> kernels_by_handle;
  std::unordered_map<const void*, Variable*> variables;
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: unregistration runs from atexit
  return *r;
}

const void* current_session() {
  return process_session::token();
}

// Ships the module's fatbinary to the current session. Called with module.mutex held.
cudaError_t load_module_locked(Module& module, const void* session, const JitRequest& jit = {}) {
  if (module.loaded_in == session) return cudaSuccess;
  if (module.unloaded) {  // a library the program unloaded: its kernels' handles went with it
    return record_local_error(cudaErrorInvalidResourceHandle);
  }
  if (module.image.empty()) {
    try {
      module.image = fatbin::fatbin_from_wrapper(module.wrapper);
    } catch (const Error& e) {
      GVIRTUS_LOG(kWarning) << "a registered module cannot be read: " << e.what();
      const cudaError_t init = runtime_init_status();
      return record_local_error(init != cudaSuccess ? init : cudaErrorInvalidKernelImage);
    }
  }
  const uint64_t total = module.image.size();
  uint64_t offset = 0;
  do {  // at least one chunk, so that even an empty image gets the backend's verdict
    const size_t n = static_cast<size_t>(std::min<uint64_t>(kModuleChunkBytes, total - offset));
    const bool last = offset + n == total;
    const auto* options = reinterpret_cast<const CUjit_option*>(jit.options);
    const cudaError_t rc = remote_sync(
        Fn::cudaModuleLoad,
        [&](WireWriter& w) {
          put_record(w, ModuleChunk{module.id(), total, offset});
          w.put_blob(module.image.data() + offset, n);
          cuda::put_jit_options(w, options, jit.values, last ? jit.count : 0);
        },
        [&](WireReader& r) {
          if (last && r.remaining() != 0) {
            cuda::get_jit_outputs(r, options, jit.values, jit.count);
          }
        });
    if (rc != cudaSuccess) return rc;
    offset += n;
  } while (offset < total);
  module.loaded_in = session;
  return cudaSuccess;
}

// The module's kernels' parameter layouts, read once from its image: a fatbinary (a registered
// module's always), or a library's cubin or PTX. Called with module.mutex held.
cudaError_t read_layouts_locked(Module& module) {
  if (module.layouts_read) return cudaSuccess;
  try {
    switch (cuda::module_image_kind(module.image.data(), module.image.size())) {
      case cuda::ModuleImageKind::kFatbin:
        module.layouts = fatbin::kernel_layouts(module.image);
        break;
      case cuda::ModuleImageKind::kCubin:
        module.layouts = fatbin::elf_kernel_layouts(module.image);
        break;
      case cuda::ModuleImageKind::kPtx:
        module.layouts = fatbin::ptx_kernel_layouts(std::string_view(
            reinterpret_cast<const char*>(module.image.data()), module.image.size()));
        break;
    }
  } catch (const Error& e) {
    GVIRTUS_LOG(kWarning) << "kernel layouts of a module cannot be read: " << e.what();
    return record_local_error(cudaErrorInvalidKernelImage);
  }
  module.layouts_read = true;
  return cudaSuccess;
}

// The kernel's parameter layout from the module's image. Called with module.mutex held.
cudaError_t read_layout_locked(Kernel& kernel) {
  Module& module = *kernel.module;
  if (const cudaError_t rc = read_layouts_locked(module); rc != cudaSuccess) return rc;
  for (const fatbin::KernelLayout& layout : module.layouts) {
    if (layout.name == kernel.name) {
      kernel.layout = &layout;
      return cudaSuccess;
    }
  }
  GVIRTUS_LOG(kWarning) << "kernel " << kernel.name << " is registered but not in its module";
  return record_local_error(cudaErrorInvalidDeviceFunction);
}

}  // namespace

Kernel* find_kernel(const void* function) {
  Registry& r = registry();
  std::shared_lock lock(r.mutex);
  if (auto it = r.kernels_by_function.find(function); it != r.kernels_by_function.end()) {
    return it->second;
  }
  const auto it = r.kernels_by_handle.find(function);
  return it != r.kernels_by_handle.end() ? it->second : nullptr;
}

Variable* find_variable(const void* host_variable) {
  Registry& r = registry();
  std::shared_lock lock(r.mutex);
  const auto it = r.variables.find(host_variable);
  return it != r.variables.end() ? it->second : nullptr;
}

cudaError_t prepare(Kernel& kernel) {
  const void* session = current_session();
  if (kernel.resolved_in.load(std::memory_order_acquire) == session) return cudaSuccess;
  Module& module = *kernel.module;
  std::lock_guard lock(module.mutex);
  if (kernel.resolved_in.load(std::memory_order_relaxed) == session) return cudaSuccess;
  if (cudaError_t rc = load_module_locked(module, session); rc != cudaSuccess) return rc;
  if (kernel.layout == nullptr) {
    if (cudaError_t rc = read_layout_locked(kernel); rc != cudaSuccess) return rc;
  }
  const fatbin::KernelLayout& layout = *kernel.layout;
  const cudaError_t rc = remote_sync(
      Fn::cudaKernelResolve,
      [&](WireWriter& w) {
        put_record(w, KernelResolve{module.id(), kernel.id()});
        w.put_string(kernel.name);
        put_record(w, KernelLayout{static_cast<uint32_t>(layout.param_bytes),
                                   static_cast<uint32_t>(layout.params.size())});
        for (const fatbin::ParamInfo& p : layout.params) {
          put_record(w, ParamSlot{static_cast<uint32_t>(p.offset), static_cast<uint32_t>(p.size)});
        }
      },
      [](WireReader&) {});
  if (rc == cudaSuccess) kernel.resolved_in.store(session, std::memory_order_release);
  return rc;
}

cudaError_t function_of(Kernel& kernel, cudaFunction_t& out) {
  if (const cudaError_t rc = prepare(kernel); rc != cudaSuccess) return rc;
  uint64_t function = 0;
  const cudaError_t rc = remote_sync(
      Fn::cudaGetFuncBySymbol, [&](WireWriter& w) { w.put<uint64_t>(kernel.id()); },
      [&](WireReader& r) {
        if (r.remaining() != 0) function = r.get<uint64_t>();
      });
  if (rc != cudaSuccess) return rc;
  out = reinterpret_cast<cudaFunction_t>(static_cast<uintptr_t>(function));
  Registry& r = registry();
  std::unique_lock lock(r.mutex);
  r.kernels_by_handle[out] = &kernel;
  return cudaSuccess;
}

cudaError_t prepare(Variable& variable) {
  const void* session = current_session();
  if (variable.resolved_in.load(std::memory_order_acquire) == session) return cudaSuccess;
  Module& module = *variable.module;
  std::lock_guard lock(module.mutex);
  if (variable.resolved_in.load(std::memory_order_relaxed) == session) return cudaSuccess;
  if (cudaError_t rc = load_module_locked(module, session); rc != cudaSuccess) return rc;
  const cudaError_t rc = remote_sync(
      Fn::cudaVarResolve,
      [&](WireWriter& w) {
        put_record(w, VarResolve{module.id(), variable.managed ? uint8_t{1} : uint8_t{0}});
        w.put_string(variable.name);
      },
      [&](WireReader& r) {
        if (r.remaining() == 0) return;  // failed: nothing follows the result
        const auto resolved = get_record<ResolvedVar>(r);
        variable.address = resolved.address;
        variable.bytes = resolved.bytes;
      });
  if (rc == cudaSuccess) variable.resolved_in.store(session, std::memory_order_release);
  return rc;
}

// Libraries the program loads itself (registry.h).

Module* load_library(std::vector<std::byte> image, cudaError_t& result, const JitRequest& jit) {
  auto owned = std::make_unique<Module>(nullptr);
  Module* module = owned.get();
  module->owned_image = std::move(image);
  module->image = module->owned_image;
  {
    std::lock_guard lock(module->mutex);
    result = load_module_locked(*module, current_session(), jit);
  }
  if (result != cudaSuccess) return nullptr;
  Registry& r = registry();
  std::unique_lock lock(r.mutex);
  r.modules.push_back(std::move(owned));
  return module;
}

Module* find_library(const void* handle) {
  Registry& r = registry();
  std::shared_lock lock(r.mutex);
  for (const auto& module : r.modules) {
    if (module.get() == handle)
      return module->library() && !module->unloaded ? module.get() : nullptr;
  }
  return nullptr;
}

cudaError_t library_kernel_names(Module& module, std::vector<std::string>& names) {
  std::lock_guard lock(module.mutex);
  if (const cudaError_t rc = read_layouts_locked(module); rc != cudaSuccess) return rc;
  names.clear();
  for (const fatbin::KernelLayout& layout : module.layouts) names.push_back(layout.name);
  return cudaSuccess;
}

cudaError_t library_kernel(Module& module, const char* name, Kernel*& out) {
  std::lock_guard lock(module.mutex);
  if (const cudaError_t rc = read_layouts_locked(module); rc != cudaSuccess) return rc;
  const auto layout = std::find_if(module.layouts.begin(), module.layouts.end(),
                                   [&](const fatbin::KernelLayout& l) { return l.name == name; });
  if (layout == module.layouts.end()) return record_local_error(cudaErrorSymbolNotFound);
  for (const auto& kernel : module.kernels) {
    if (kernel->name == name) {
      out = kernel.get();
      return cudaSuccess;
    }
  }
  auto kernel = std::make_unique<Kernel>();
  kernel->module = &module;
  kernel->host_function = nullptr;
  kernel->name = name;
  kernel->layout = &*layout;
  out = kernel.get();
  Registry& r = registry();
  std::unique_lock registry_lock(r.mutex);
  r.kernels_by_handle[kernel.get()] = kernel.get();
  module.kernels.push_back(std::move(kernel));
  return cudaSuccess;
}

cudaError_t library_variable(Module& module, const char* name, Variable*& out, bool managed) {
  {
    std::lock_guard lock(module.mutex);
    for (const auto& variable : module.variables) {
      if (variable->name == name && variable->managed == managed) out = variable.get();
    }
    if (out == nullptr) {
      auto variable = std::make_unique<Variable>();
      variable->module = &module;
      variable->name = name;
      variable->size = 0;  // the backend's runtime says
      variable->managed = managed;
      out = variable.get();
      module.variables.push_back(std::move(variable));
    }
  }
  return prepare(*out);
}

std::vector<Variable*> registered_managed_variables(Module& module) {
  std::vector<Variable*> out;
  std::shared_lock lock(registry().mutex);  // registration adds under it
  for (const auto& variable : module.variables) {
    if (variable->slot != nullptr) out.push_back(variable.get());
  }
  return out;
}

cudaError_t unload_library(Module& module) {
  std::lock_guard lock(module.mutex);
  if (module.loaded_in == current_session()) {
    const cudaError_t rc = remote_sync(
        Fn::cudaModuleUnload, [&](WireWriter& w) { w.put<uint64_t>(module.id()); },
        [](WireReader&) {});
    if (rc != cudaSuccess) return rc;
  }
  module.unloaded = true;
  module.loaded_in = nullptr;
  module.owned_image = {};
  module.image = {};
  Registry& r = registry();
  std::unique_lock registry_lock(r.mutex);
  for (const auto& kernel : module.kernels) r.kernels_by_handle.erase(kernel.get());
  return cudaSuccess;
}

// Registration (registration.h): called by the exported __cuda* entry points.

Module* register_module(const void* wrapper) {
  auto module = std::make_unique<Module>(wrapper);
  Module* raw = module.get();
  Registry& r = registry();
  std::unique_lock lock(r.mutex);
  r.modules.push_back(std::move(module));
  return raw;
}

void register_kernel(Module* module, const void* host_function, const char* name) {
  if (module == nullptr || name == nullptr) return;
  auto kernel = std::make_unique<Kernel>();
  kernel->module = module;
  kernel->host_function = host_function;
  kernel->name = name;
  Registry& r = registry();
  std::unique_lock lock(r.mutex);
  r.kernels_by_function[host_function] = kernel.get();
  r.kernels_by_handle[kernel.get()] = kernel.get();
  module->kernels.push_back(std::move(kernel));
}

namespace {

void register_any_variable(Module* module, const void* host_variable, const char* name, size_t size,
                           void** managed_slot) {
  if (module == nullptr || name == nullptr) return;
  auto variable = std::make_unique<Variable>();
  variable->module = module;
  variable->name = name;
  variable->size = size;
  variable->managed = managed_slot != nullptr;
  variable->slot = managed_slot;
  Registry& r = registry();
  std::unique_lock lock(r.mutex);
  r.variables[host_variable] = variable.get();
  module->variables.push_back(std::move(variable));
}

}  // namespace

void register_variable(Module* module, const void* host_variable, const char* name, size_t size) {
  register_any_variable(module, host_variable, name, size, nullptr);
}

void register_managed_variable(Module* module, void** slot, const char* name, size_t size) {
  register_any_variable(module, slot, name, size, slot);
}

void unregister_module(Module* module) {
  Registry& r = registry();
  std::unique_lock lock(r.mutex);
  const auto it = std::find_if(r.modules.begin(), r.modules.end(),
                               [&](const auto& m) { return m.get() == module; });
  if (it == r.modules.end()) return;
  for (const auto& kernel : module->kernels) {
    r.kernels_by_function.erase(kernel->host_function);
    r.kernels_by_handle.erase(kernel.get());
  }
  std::erase_if(r.variables, [&](const auto& entry) { return entry.second->module == module; });
  r.modules.erase(it);
}

}  // namespace gvirtus::cudart
