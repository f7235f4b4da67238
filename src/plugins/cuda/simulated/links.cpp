// The JIT linker of the simulated device, which compiles nothing: PTX inputs are joined into one
// PTX text (whose kernels the module loader then finds, as it finds any PTX's), and a single
// cubin or fatbinary input is the link's image as it is. Other inputs (objects, libraries,
// LTO-IR), or cubins to join, are beyond it: CUDA_ERROR_NOT_SUPPORTED, said in the log. JIT
// options are checked and unused, as the loader's are.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "common/log.h"
#include "state.h"

namespace sim = gvirtus::simulated;

namespace {

bool options_sound(unsigned count, CUjit_option* options, void** values) {
  return count == 0 || (options != nullptr && values != nullptr);
}

// The link's info log from its options, kept: the options' arrays live as long as the link.
void keep_info_log(sim::Link& link, unsigned count, CUjit_option* options, void** values) {
  for (unsigned i = 0; i < count; ++i) {
    if (options[i] == CU_JIT_INFO_LOG_BUFFER) link.info_log = static_cast<char*>(values[i]);
    if (options[i] == CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES) {
      link.info_capacity = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(values[i]));
      link.info_filled = &values[i];
    }
  }
}

// A line in the info log, as a real linker logs each input (ptxas's "info" lines): the buffer
// holds what fits with its NUL, and the size option the bytes filled.
void log_info(sim::Link& link, const std::string& line) {
  link.info += line + "\n";
  if (link.info_log == nullptr || link.info_capacity == 0 || link.info_filled == nullptr) return;
  const size_t filled = std::min(link.info.size(), link.info_capacity - 1);
  std::memcpy(link.info_log, link.info.data(), filled);
  link.info_log[filled] = '\0';
  *link.info_filled = reinterpret_cast<void*>(static_cast<uintptr_t>(filled));
}

}  // namespace

GVIRTUS_SIMULATED_EXPORT CUresult cuLinkCreate_v2(unsigned int numOptions, CUjit_option* options,
                                                  void** optionValues, CUlinkState* stateOut) {
  return sim::guarded([&](sim::State& s) {
    if (stateOut == nullptr || !options_sound(numOptions, options, optionValues)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    auto link = std::make_unique<sim::Link>();
    keep_info_log(*link, numOptions, options, optionValues);
    const auto state = reinterpret_cast<CUlinkState>(link.get());
    s.links.emplace(state, std::move(link));
    *stateOut = state;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuLinkAddData_v2(CUlinkState state, CUjitInputType type,
                                                   void* data, size_t size, const char* name,
                                                   unsigned int numOptions, CUjit_option* options,
                                                   void** optionValues) {
  return sim::guarded([&](sim::State& s) {
    const auto link = s.links.find(state);
    if (link == s.links.end()) return CUDA_ERROR_INVALID_HANDLE;
    if (data == nullptr || size == 0 || !options_sound(numOptions, options, optionValues)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    const auto* bytes = static_cast<const std::byte*>(data);
    switch (type) {
      case CU_JIT_INPUT_PTX: {
        const auto* text = static_cast<const char*>(data);
        link->second->ptx.emplace_back(text, ::strnlen(text, size));
        log_info(*link->second, "simulated device: PTX " +
                                    std::string(name != nullptr ? name : "") + " joined (" +
                                    std::to_string(size) + " bytes)");
        return CUDA_SUCCESS;
      }
      case CU_JIT_INPUT_CUBIN:
      case CU_JIT_INPUT_FATBINARY:
        link->second->images.emplace_back(bytes, bytes + size);
        log_info(*link->second,
                 "simulated device: image " + std::string(name != nullptr ? name : "") + " taken");
        return CUDA_SUCCESS;
      default:
        GVIRTUS_LOG(kNotice) << "simulated device: link input " << (name != nullptr ? name : "")
                             << " of type " << static_cast<int>(type)
                             << " is beyond its linker (PTX, or one cubin or fatbinary)";
        return CUDA_ERROR_NOT_SUPPORTED;
    }
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuLinkComplete(CUlinkState state, void** cubinOut,
                                                 size_t* sizeOut) {
  return sim::guarded([&](sim::State& s) {
    const auto link = s.links.find(state);
    if (link == s.links.end()) return CUDA_ERROR_INVALID_HANDLE;
    if (cubinOut == nullptr || sizeOut == nullptr) return CUDA_ERROR_INVALID_VALUE;
    sim::Link& l = *link->second;
    if (!l.ptx.empty() && l.images.empty()) {
      std::string joined;
      for (const auto& text : l.ptx) joined += text + "\n";
      const auto* begin = reinterpret_cast<const std::byte*>(joined.data());
      l.linked.assign(begin, begin + joined.size() + 1);  // with the NUL
    } else if (l.ptx.empty() && l.images.size() == 1) {
      l.linked = l.images.front();
    } else {
      GVIRTUS_LOG(kNotice) << "simulated device: a link of " << l.ptx.size() << " PTX and "
                           << l.images.size()
                           << " binary inputs is beyond its linker (PTX, or one binary)";
      return CUDA_ERROR_NOT_SUPPORTED;
    }
    *cubinOut = l.linked.data();
    *sizeOut = l.linked.size();
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuLinkDestroy(CUlinkState state) {
  return sim::guarded([&](sim::State& s) {
    return s.links.erase(state) != 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
  });
}
