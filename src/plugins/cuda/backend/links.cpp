// The JIT linker on the backend (links.h; wire: common/driver_wire.h). A link state is the
// session's handle; its JIT options - with log buffers of ours, which the driver fills until the
// state is destroyed - live beside it here. Inputs are hostile until checked: a cubin or a
// fatbinary must be exactly what its headers say (the module loader's check), PTX must end in its
// NUL within its bytes; object files, libraries and LTO-IR are the driver linker's to judge, as
// PTX text is its compiler's. Every call returns the link's logs so far, failures included (the
// error log says why a link failed).
#include "plugins/cuda/backend/links.h"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/call_marshal.h"
#include "common/error.h"
#include "common/wire_record.h"
#include "cuda_real.h"
#include "cuda_vetting.h"
#include "plugins/cuda/backend/request_checks.h"
#include "plugins/cuda/common/driver_wire.h"
#include "plugins/cuda/common/jit_options.h"

namespace gvirtus::cuda {
namespace {

std::mutex links_mutex;
std::map<CUlinkState, std::unique_ptr<JitOptions>> links;  // one session per worker process

// The link's options' outputs (nothing for a state the session does not hold: its caller failed).
void put_link_outputs(WireWriter& out, CUlinkState state) {
  std::lock_guard lock(links_mutex);
  const auto link = links.find(state);
  if (link != links.end()) link->second->put_outputs(out);
}

// Whether an input of `type` is what it claims, before the driver's linker reads it.
bool input_is_sound(uint32_t type, std::span<const std::byte> data) {
  switch (type) {
    case CU_JIT_INPUT_CUBIN:
    case CU_JIT_INPUT_FATBINARY:
      return image_is_sound(data);
    case CU_JIT_INPUT_PTX:
      return !data.empty() && data.back() == std::byte{0};
    default:  // objects, libraries, LTO-IR: the linker's own to parse
      return !data.empty();
  }
}

CUlinkState state_of(uint64_t value) {
  return reinterpret_cast<CUlinkState>(static_cast<uintptr_t>(value));
}

void create(WireReader& in, WireWriter& out, CUresult& result) {
  auto jit = std::make_unique<JitOptions>(in);
  in.expect_end();
  CUlinkState state = nullptr;
  result = real().cuLinkCreate_v2 != nullptr ? CUDA_SUCCESS : CUDA_ERROR_NOT_SUPPORTED;
  if (result == CUDA_SUCCESS) {
    result = real().cuLinkCreate_v2(jit->count(), jit->options(), jit->values(), &state);
  }
  out.put<int32_t>(result);
  marshal::put_value(out, result == CUDA_SUCCESS ? state : nullptr);
  jit->put_outputs(out);
  if (result != CUDA_SUCCESS) return;
  adopt(state);
  std::lock_guard lock(links_mutex);
  links[state] = std::move(jit);
}

void add_data(WireReader& in, WireWriter& out, CUresult& result) {
  const auto request = get_record<LinkInputRequest>(in);
  const auto data = in.get_blob(kMaxModuleImageBytes);
  const std::string name(in.get_string(kMaxLinkInputNameBytes));
  JitOptions jit(in);
  in.expect_end();
  if (request.type >= CU_JIT_NUM_INPUT_TYPES) {
    raise(ErrorKind::kInvalidInput, "link input type " + std::to_string(request.type));
  }
  const CUlinkState state = state_of(request.state);
  result = vet(state);
  if (result == CUDA_SUCCESS && real().cuLinkAddData_v2 == nullptr) {
    result = CUDA_ERROR_NOT_SUPPORTED;
  }
  if (result == CUDA_SUCCESS && !input_is_sound(request.type, data)) {
    result = CUDA_ERROR_INVALID_IMAGE;
  }
  if (result == CUDA_SUCCESS) {
    auto aligned = aligned_copy(data);
    result = real().cuLinkAddData_v2(state, static_cast<CUjitInputType>(request.type),
                                     aligned.data(), data.size(), name.c_str(), jit.count(),
                                     jit.options(), jit.values());
  }
  out.put<int32_t>(result);
  jit.put_outputs(out);
  put_link_outputs(out, state);
}

void complete(WireReader& in, WireWriter& out, CUresult& result) {
  const CUlinkState state = state_of(in.get<uint64_t>());
  in.expect_end();
  void* image = nullptr;
  size_t size = 0;
  result = vet(state);
  if (result == CUDA_SUCCESS && real().cuLinkComplete == nullptr) result = CUDA_ERROR_NOT_SUPPORTED;
  if (result == CUDA_SUCCESS) result = real().cuLinkComplete(state, &image, &size);
  if (result == CUDA_SUCCESS && (image == nullptr || size == 0 || size > kMaxModuleImageBytes)) {
    result = CUDA_ERROR_INVALID_IMAGE;
  }
  out.put<int32_t>(result);
  if (result == CUDA_SUCCESS) {
    out.put_blob(image, size);
  } else {
    out.put_blob(nullptr, 0);
  }
  put_link_outputs(out, state);
}

void destroy(WireReader& in, WireWriter& out, CUresult& result) {
  const CUlinkState state = state_of(in.get<uint64_t>());
  in.expect_end();
  auto released = release(state);
  result = released.vetted();
  if (result == CUDA_SUCCESS && real().cuLinkDestroy == nullptr) result = CUDA_ERROR_NOT_SUPPORTED;
  if (result == CUDA_SUCCESS) result = real().cuLinkDestroy(state);
  if (result == CUDA_SUCCESS) {
    released.destroyed();
    std::lock_guard lock(links_mutex);
    links.erase(state);
  }
  out.put<int32_t>(result);
}

}  // namespace

bool run_link(Fn fn, WireReader& in, WireWriter& out, CUresult& result) {
  switch (fn) {
    case Fn::cuLinkCreate_v2:
      create(in, out, result);
      return true;
    case Fn::cuLinkAddData_v2:
      add_data(in, out, result);
      return true;
    case Fn::cuLinkComplete:
      complete(in, out, result);
      return true;
    case Fn::cuLinkDestroy:
      destroy(in, out, result);
      return true;
    default:
      return false;
  }
}

}  // namespace gvirtus::cuda
