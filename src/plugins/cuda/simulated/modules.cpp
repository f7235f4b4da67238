// Modules of the simulated device: an image (fatbinary, cubin or PTX) is parsed by gvirtus's own
// bounded parsers for its kernels and their parameter layouts - the facts a launch needs - and
// nothing is compiled. A malformed image is CUDA_ERROR_INVALID_IMAGE.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <string_view>

#include "common/log.h"
#include "decompress.h"
#include "elf_nv_info.h"
#include "elf_symbols.h"
#include "fatbin_container.h"
#include "plugins/cuda/common/driver_wire.h"
#include "plugins/cuda/common/module_image.h"
#include "ptx_params.h"
#include "ptx_variables.h"
#include "state.h"

namespace sim = gvirtus::simulated;
namespace fatbin = gvirtus::fatbin;

namespace {

// The kernels of an image the size of its own headers (the backend checked them against what
// arrived).
std::vector<fatbin::KernelLayout> kernels_of(const void* image, size_t size) {
  const std::span<const std::byte> bytes(static_cast<const std::byte*>(image), size);
  switch (gvirtus::cuda::module_image_kind(image, size)) {
    case gvirtus::cuda::ModuleImageKind::kFatbin:
      return fatbin::kernel_layouts(bytes, fatbin::ArchConflicts::kHighestArch);
    case gvirtus::cuda::ModuleImageKind::kCubin:
      return fatbin::elf_kernel_layouts(bytes);
    case gvirtus::cuda::ModuleImageKind::kPtx:
      break;
  }
  return fatbin::ptx_kernel_layouts(
      std::string_view(static_cast<const char*>(image), size - 1));  // without the NUL
}

// The device variables of an image: from its cubins' symbol tables, or when it has none (PTX only,
// as a fatbinary cut down to an architecture it has no SASS for is) from its PTX declarations.
std::map<std::string, fatbin::Variable> variables_of(const void* image, size_t size) {
  const std::span<const std::byte> bytes(static_cast<const std::byte*>(image), size);
  std::map<std::string, fatbin::Variable> out;
  const auto take = [&](std::vector<fatbin::Variable> found) {
    for (auto& v : found) out.emplace(v.name, std::move(v));
  };
  switch (gvirtus::cuda::module_image_kind(image, size)) {
    case gvirtus::cuda::ModuleImageKind::kFatbin: {
      take(fatbin::fatbin_variables(bytes));
      const auto entries = fatbin::fatbin_entries(bytes);
      const auto is = [](fatbin::EntryKind kind) {
        return [kind](const fatbin::Entry& e) { return e.kind == static_cast<uint16_t>(kind); };
      };
      if (std::any_of(entries.begin(), entries.end(), is(fatbin::EntryKind::kElf))) break;
      for (const auto& e : entries) {
        if (!is(fatbin::EntryKind::kPtx)(e)) continue;
        const std::vector<std::byte> text = fatbin::entry_bytes(e);
        take(gvirtus::sim::ptx_variables(
            std::string_view(reinterpret_cast<const char*>(text.data()), text.size())));
      }
      break;
    }
    case gvirtus::cuda::ModuleImageKind::kCubin:
      take(fatbin::elf_variables(bytes));
      break;
    case gvirtus::cuda::ModuleImageKind::kPtx:
      take(gvirtus::sim::ptx_variables(
          std::string_view(static_cast<const char*>(image), size - 1)));  // without the NUL
      break;
  }
  return out;
}

void free_variables(sim::State& s, sim::Module& module) {
  for (const auto& [name, address] : module.placed) {
    s.allocations.erase(address);
    s.allocation_bytes.erase(address);
    s.module_memory.erase(address);
    sim::disown(s, sim::memory_key(address));
  }
  module.placed.clear();
  for (const uintptr_t region : module.managed_regions) {
    s.module_memory.erase(region);
    sim::free_managed(s, region);
  }
  module.managed_regions.clear();
  module.placed_managed.clear();
  module.managed_used = 0;
}

// The module `hmod` and its variable `name`.
CUresult module_variable(sim::State& s, CUmodule hmod, const char* name, sim::Module*& module,
                         const fatbin::Variable*& variable) {
  if (name == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const auto found = s.modules.find(hmod);
  if (found == s.modules.end()) return CUDA_ERROR_INVALID_HANDLE;
  const auto it = found->second->variables.find(name);
  if (it == found->second->variables.end()) return CUDA_ERROR_NOT_FOUND;
  module = found->second.get();
  variable = &it->second;
  return CUDA_SUCCESS;
}

// A placed variable's memory as the image initialises it (the rest stays zeroed).
void initialise(std::byte* memory, const fatbin::Variable& variable) {
  if (!variable.initial.empty()) {
    std::memcpy(memory, variable.initial.data(),
                std::min<size_t>(variable.initial.size(), variable.bytes));
  }
}

const fatbin::KernelLayout* find_kernel(const sim::Module& module, const char* name) {
  const auto found = module.kernel_index.find(std::string_view(name));
  return found != module.kernel_index.end() ? &module.kernels[found->second] : nullptr;
}

}  // namespace

CUfunction sim::function_handle(State& s, CUmodule module, const fatbin::KernelLayout& kernel) {
  // One handle per kernel, as natively.
  if (const auto found = s.function_by_layout.find(&kernel); found != s.function_by_layout.end()) {
    return found->second;
  }
  auto function = std::make_unique<Function>(Function{module, &kernel, {}});
  const auto handle = reinterpret_cast<CUfunction>(function.get());
  s.function_by_layout.emplace(&kernel, handle);
  s.function_by_kernel.emplace(&function->kernel_tag, handle);
  s.functions.emplace(handle, std::move(function));
  return handle;
}

GVIRTUS_SIMULATED_EXPORT CUresult cuModuleLoadData(CUmodule* module, const void* image) {
  return sim::guarded([&](sim::State& s) {
    if (module == nullptr || image == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const size_t size =
        gvirtus::cuda::module_image_size(image, gvirtus::cuda::kMaxModuleImageBytes);
    if (size == 0) return CUDA_ERROR_INVALID_IMAGE;
    auto loaded = std::make_unique<sim::Module>();
    loaded->kernels = kernels_of(image, size);
    for (size_t i = 0; i < loaded->kernels.size(); ++i) {
      loaded->kernel_index.emplace(loaded->kernels[i].name, i);
    }
    loaded->variables = variables_of(image, size);
    const auto handle = reinterpret_cast<CUmodule>(loaded.get());
    s.modules.emplace(handle, std::move(loaded));
    sim::own(s, handle);
    *module = handle;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuModuleUnload(CUmodule hmod) {
  return sim::guarded([&](sim::State& s) {
    const auto module = s.modules.find(hmod);
    if (module == s.modules.end()) return CUDA_ERROR_INVALID_HANDLE;
    free_variables(s, *module->second);
    s.modules.erase(module);
    sim::disown(s, hmod);
    sim::forget_functions_if(s, [&](const sim::Function& f) { return f.module == hmod; });
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuModuleGetFunction(CUfunction* hfunc, CUmodule hmod,
                                                      const char* name) {
  return sim::guarded([&](sim::State& s) {
    if (hfunc == nullptr || name == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const auto module = s.modules.find(hmod);
    if (module == s.modules.end()) return CUDA_ERROR_INVALID_HANDLE;
    const fatbin::KernelLayout* kernel = find_kernel(*module->second, name);
    if (kernel == nullptr) {
      std::string known;
      for (const auto& k : module->second->kernels) known += " " + k.name;
      GVIRTUS_LOG(kInfo) << "simulated device: no kernel " << name << " in module " << hmod
                         << " (it has:" << (known.empty() ? " none" : known) << ")";
      return CUDA_ERROR_NOT_FOUND;
    }
    *hfunc = sim::function_handle(s, hmod, *kernel);
    return CUDA_SUCCESS;
  });
}

// A module's variable, placed in memory the first time it is asked for, initialised as the image
// says (zeroed otherwise).
GVIRTUS_SIMULATED_EXPORT CUresult cuModuleGetGlobal_v2(CUdeviceptr* dptr, size_t* bytes,
                                                       CUmodule hmod, const char* name) {
  return sim::guarded([&](sim::State& s) {
    sim::Module* module = nullptr;
    const fatbin::Variable* variable = nullptr;
    if (const CUresult r = module_variable(s, hmod, name, module, variable); r != CUDA_SUCCESS) {
      return r;
    }
    const uint64_t size = variable->bytes;
    auto placed = module->placed.find(name);
    if (placed == module->placed.end()) {
      const size_t rounded = (size + 255) / 256 * 256;
      sim::HostBuffer memory(sim::allocate_device_memory(rounded, 256));
      if (!memory) return CUDA_ERROR_OUT_OF_MEMORY;
      std::memset(memory.get(), 0, rounded);
      initialise(memory.get(), *variable);
      const auto address = reinterpret_cast<uintptr_t>(memory.get());
      s.allocations.emplace(address, std::move(memory));
      s.allocation_bytes.emplace(address, size);
      s.module_memory.insert(address);
      sim::own(s, sim::memory_key(address));
      placed = module->placed.emplace(name, address).first;
    }
    if (dptr != nullptr) *dptr = placed->second;
    if (bytes != nullptr) *bytes = size;
    return CUDA_SUCCESS;
  });
}

// A module's managed variable: in managed memory of the module's own, packed with its others
// (state.h), initialised as the image says.
CUresult sim::managed_variable(State& s, CUmodule hmod, const char* name, CUdeviceptr* dptr,
                               size_t* bytes) {
  Module* module = nullptr;
  const fatbin::Variable* variable = nullptr;
  if (const CUresult r = module_variable(s, hmod, name, module, variable); r != CUDA_SUCCESS) {
    return r;
  }
  const uint64_t size = variable->bytes;
  auto placed = module->placed_managed.find(name);
  if (placed == module->placed_managed.end()) {
    const uintptr_t address = place_managed_variable(s, *module, size);
    if (address == 0) return CUDA_ERROR_OUT_OF_MEMORY;
    initialise(reinterpret_cast<std::byte*>(address), *variable);
    placed = module->placed_managed.emplace(name, address).first;
  }
  if (dptr != nullptr) *dptr = placed->second;
  if (bytes != nullptr) *bytes = size;
  return CUDA_SUCCESS;
}

GVIRTUS_SIMULATED_EXPORT CUresult cuFuncGetParamInfo(CUfunction func, size_t paramIndex,
                                                     size_t* paramOffset, size_t* paramSize) {
  return sim::guarded([&](sim::State& s) {
    sim::Function* const it = sim::function_of(s, func);  // a function or its kernel
    if (it == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    const auto& params = it->layout->params;
    if (paramIndex >= params.size()) return CUDA_ERROR_INVALID_VALUE;
    if (paramOffset != nullptr) *paramOffset = params[paramIndex].offset;
    if (paramSize != nullptr) *paramSize = params[paramIndex].size;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuFuncGetAttribute(int* pi, CUfunction_attribute attrib,
                                                     CUfunction hfunc) {
  return sim::guarded([&](sim::State& s) {
    if (pi == nullptr || attrib < 0 || attrib >= CU_FUNC_ATTRIBUTE_MAX) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    sim::Function* const it = sim::function_of(s, hfunc);  // a function or its kernel
    if (it == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    if (const auto set = it->attributes.find(attrib); set != it->attributes.end()) {
      *pi = set->second;
      return CUDA_SUCCESS;
    }
    switch (attrib) {
      case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
        *pi = 1024;
        break;
      case CU_FUNC_ATTRIBUTE_NUM_REGS:
        *pi = 32;
        break;
      case CU_FUNC_ATTRIBUTE_PTX_VERSION:
      case CU_FUNC_ATTRIBUTE_BINARY_VERSION:
        *pi = 90;
        break;
      case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
        *pi = 49152;
        break;
      default:
        *pi = 0;
        break;
    }
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib,
                                                     int value) {
  return sim::guarded([&](sim::State& s) {
    if (attrib < 0 || attrib >= CU_FUNC_ATTRIBUTE_MAX) return CUDA_ERROR_INVALID_VALUE;
    sim::Function* const it = sim::function_of(s, hfunc);  // a function or its kernel
    if (it == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    it->attributes[attrib] = value;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config) {
  return sim::guarded([&](sim::State& s) {
    if (config < CU_FUNC_CACHE_PREFER_NONE || config > CU_FUNC_CACHE_PREFER_EQUAL) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    return sim::function_of(s, hfunc) != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
  });
}

// The deprecated per-function bank size: accepted for a known function, doing nothing.
GVIRTUS_SIMULATED_EXPORT CUresult cuFuncSetSharedMemConfig(CUfunction hfunc,
                                                           CUsharedconfig config) {
  return sim::guarded([&](sim::State& s) {
    if (config < CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE ||
        config > CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    return sim::function_of(s, hfunc) != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
  });
}

// Occupancy as a simple model: 2048 threads per multiprocessor, at most 32 blocks.
GVIRTUS_SIMULATED_EXPORT CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(
    int* numBlocks, CUfunction func, int blockSize, size_t dynamicSMemSize) {
  return sim::guarded([&](sim::State& s) {
    if (numBlocks == nullptr || blockSize <= 0 || blockSize > 1024) return CUDA_ERROR_INVALID_VALUE;
    if (sim::function_of(s, func) == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    const int by_threads = 2048 / blockSize;
    const int by_shared = dynamicSMemSize == 0
                              ? 32
                              : static_cast<int>(std::min<size_t>(233472 / dynamicSMemSize, 32));
    *numBlocks = std::min({by_threads, by_shared, 32});
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
    int* numBlocks, CUfunction func, int blockSize, size_t dynamicSMemSize, unsigned int flags) {
  if ((flags & ~unsigned{CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE}) != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  return cuOccupancyMaxActiveBlocksPerMultiprocessor(numBlocks, func, blockSize, dynamicSMemSize);
}

// The shared memory a block may still ask for when numBlocks blocks share a multiprocessor: the
// model's 228 KiB per multiprocessor (227 KiB at most per block), less the kernel's static part.
GVIRTUS_SIMULATED_EXPORT CUresult cuOccupancyAvailableDynamicSMemPerBlock(size_t* dynamicSmemSize,
                                                                          CUfunction func,
                                                                          int numBlocks,
                                                                          int blockSize) {
  return sim::guarded([&](sim::State& s) {
    if (dynamicSmemSize == nullptr || numBlocks <= 0 || blockSize <= 0 || blockSize > 1024) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (sim::function_of(s, func) == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    if (numBlocks * blockSize > 2048 || numBlocks > 32) {
      *dynamicSmemSize = 0;
      return CUDA_SUCCESS;
    }
    *dynamicSmemSize = std::min<size_t>(233472 / numBlocks, 232448);
    return CUDA_SUCCESS;
  });
}
