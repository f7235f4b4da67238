// The JIT linker in the client libcuda.so.1 (wire: common/driver_wire.h). The link runs on the
// backend; the stub keeps, per link state, the link's JIT options (copied: cuda.h keeps no
// reference to them) and the caller's value array (which cuda.h says stays valid for the state's
// life when options are outputs), writes the logs each call returns into the caller's buffers,
// and keeps the linked image until cuLinkDestroy, as the driver keeps it. cuLinkAddFile reads the
// file here, where it lies, and sends it as cuLinkAddData.
#include <cuda.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/call_marshal.h"
#include "common/wire_record.h"
#include "cuda_remote_calls.h"
#include "plugins/cuda/common/driver_wire.h"
#include "plugins/cuda/common/jit_options.h"
#include "plugins/cuda/frontend/modules.h"

namespace cr = gvirtus::cuda;

namespace {

struct Link {
  std::vector<CUjit_option> options;
  void** values = nullptr;            // the caller's
  std::vector<void*> created_values;  // as cuLinkCreate was given them: the log buffers' sizes
  std::vector<std::byte> image;
};

std::mutex& links_mutex = *new std::mutex;
auto& links = *new std::map<CUlinkState, std::shared_ptr<Link>>;  // never destroyed (exit handlers)

std::shared_ptr<Link> link_of(CUlinkState state) {
  std::lock_guard lock(links_mutex);
  const auto found = links.find(state);
  return found != links.end() ? found->second : nullptr;
}

// The link's outputs in a reply: into the caller's buffers and values.
void take_link_outputs(gvirtus::WireReader& r, Link& link) {
  cr::get_jit_outputs(r, link.options.data(), link.values,
                      static_cast<unsigned>(link.options.size()), link.created_values.data());
}

CUresult add_data(CUlinkState state, CUjitInputType type, const void* data, size_t size,
                  const char* name, unsigned numOptions, CUjit_option* options,
                  void** optionValues) {
  if (data == nullptr || size == 0 || type < 0 || type >= CU_JIT_NUM_INPUT_TYPES) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (size > cr::kMaxModuleImageBytes) return CUDA_ERROR_INVALID_IMAGE;
  if (const CUresult r = cr::check_jit_options(options, optionValues, numOptions);
      r != CUDA_SUCCESS) {
    return r;
  }
  const std::shared_ptr<Link> link = link_of(state);
  if (link == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  const std::string label = name != nullptr ? std::string(name).substr(0, 1024) : "";
  const cr::LinkInputRequest request{reinterpret_cast<uintptr_t>(state),
                                     static_cast<uint32_t>(type)};
  return cr::remote_sync(
      cr::Fn::cuLinkAddData_v2,
      [&](gvirtus::WireWriter& w) {
        gvirtus::put_record(w, request);
        w.put_blob(data, size);
        w.put_string(label);
        cr::put_jit_options(w, options, optionValues, numOptions);
      },
      [&](gvirtus::WireReader& r) {
        cr::get_jit_outputs(r, options, optionValues, numOptions);
        take_link_outputs(r, *link);
      });
}

}  // namespace

extern "C" __attribute__((visibility("default"))) CUresult cuLinkCreate_v2(unsigned int numOptions,
                                                                           CUjit_option* options,
                                                                           void** optionValues,
                                                                           CUlinkState* stateOut) {
  if (stateOut == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (const CUresult r = cr::check_jit_options(options, optionValues, numOptions);
      r != CUDA_SUCCESS) {
    return r;
  }
  auto link = std::make_shared<Link>();
  if (numOptions != 0) {
    link->options.assign(options, options + numOptions);
    link->created_values.assign(optionValues, optionValues + numOptions);
  }
  link->values = optionValues;
  CUlinkState state = nullptr;
  const CUresult result = cr::remote_sync(
      cr::Fn::cuLinkCreate_v2,
      [&](gvirtus::WireWriter& w) { cr::put_jit_options(w, options, optionValues, numOptions); },
      [&](gvirtus::WireReader& r) {
        state = gvirtus::marshal::get_value<CUlinkState>(r);
        take_link_outputs(r, *link);
      });
  if (result != CUDA_SUCCESS) return result;
  {
    std::lock_guard lock(links_mutex);
    links[state] = std::move(link);
  }
  *stateOut = state;
  return CUDA_SUCCESS;
}

extern "C" __attribute__((visibility("default"))) CUresult cuLinkAddData_v2(
    CUlinkState state, CUjitInputType type, void* data, size_t size, const char* name,
    unsigned int numOptions, CUjit_option* options, void** optionValues) {
  return add_data(state, type, data, size, name, numOptions, options, optionValues);
}

extern "C" __attribute__((visibility("default"))) CUresult cuLinkAddFile_v2(
    CUlinkState state, CUjitInputType type, const char* path, unsigned int numOptions,
    CUjit_option* options, void** optionValues) {
  std::vector<char> bytes;
  if (const CUresult r = cr::read_module_file(path, bytes); r != CUDA_SUCCESS) return r;
  // PTX text goes with the NUL the reader added; any other input is exactly the file's bytes.
  const size_t size = type == CU_JIT_INPUT_PTX ? bytes.size() : bytes.size() - 1;
  if (size == 0) return CUDA_ERROR_INVALID_IMAGE;
  return add_data(state, type, bytes.data(), size, path, numOptions, options, optionValues);
}

extern "C" __attribute__((visibility("default"))) CUresult cuLinkComplete(CUlinkState state,
                                                                          void** cubinOut,
                                                                          size_t* sizeOut) {
  if (cubinOut == nullptr || sizeOut == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const std::shared_ptr<Link> link = link_of(state);
  if (link == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  std::vector<std::byte> image;
  const CUresult result = cr::remote_sync(
      cr::Fn::cuLinkComplete,
      [&](gvirtus::WireWriter& w) { w.put<uint64_t>(reinterpret_cast<uintptr_t>(state)); },
      [&](gvirtus::WireReader& r) {
        const auto bytes = r.get_blob(cr::kMaxModuleImageBytes);
        image.assign(bytes.begin(), bytes.end());
        take_link_outputs(r, *link);
      });
  if (result != CUDA_SUCCESS) return result;
  if (image.empty()) return CUDA_ERROR_INVALID_IMAGE;
  std::lock_guard lock(links_mutex);
  link->image = std::move(image);  // valid until cuLinkDestroy, as the driver's
  *cubinOut = link->image.data();
  *sizeOut = link->image.size();
  return CUDA_SUCCESS;
}

extern "C" __attribute__((visibility("default"))) CUresult cuLinkDestroy(CUlinkState state) {
  if (link_of(state) == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  const CUresult result = cr::remote_sync(
      cr::Fn::cuLinkDestroy,
      [&](gvirtus::WireWriter& w) { w.put<uint64_t>(reinterpret_cast<uintptr_t>(state)); },
      [](gvirtus::WireReader&) {});
  if (result != CUDA_SUCCESS) return result;
  std::lock_guard lock(links_mutex);
  links.erase(state);
  return CUDA_SUCCESS;
}

// The CUDA 5.5 ABIs, which cuda.h maps to the _v2 names by macros (the same arguments).
#undef cuLinkCreate
#undef cuLinkAddData
#undef cuLinkAddFile
extern "C" __attribute__((visibility("default"))) CUresult cuLinkCreate(unsigned int numOptions,
                                                                        CUjit_option* options,
                                                                        void** optionValues,
                                                                        CUlinkState* stateOut) {
  return cuLinkCreate_v2(numOptions, options, optionValues, stateOut);
}

extern "C" __attribute__((visibility("default"))) CUresult cuLinkAddData(
    CUlinkState state, CUjitInputType type, void* data, size_t size, const char* name,
    unsigned int numOptions, CUjit_option* options, void** optionValues) {
  return add_data(state, type, data, size, name, numOptions, options, optionValues);
}

extern "C" __attribute__((visibility("default"))) CUresult cuLinkAddFile(
    CUlinkState state, CUjitInputType type, const char* path, unsigned int numOptions,
    CUjit_option* options, void** optionValues) {
  return cuLinkAddFile_v2(state, type, path, numOptions, options, optionValues);
}
