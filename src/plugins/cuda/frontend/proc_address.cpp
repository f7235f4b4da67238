#include "plugins/cuda/frontend/proc_address.h"

#include <dlfcn.h>

#include <algorithm>
#include <iterator>
#include <string_view>

namespace gvirtus::cuda {
namespace {

struct Entry {
  std::string_view base;
  int version;  // the CUDA version that introduced this ABI
  bool per_thread;
  const char* symbol;
};

// Sorted by base, then per_thread (false first), then version.
constexpr Entry kEntries[] = {
#include "cuda_proc_address.inc"
};

// The newest entry of `base` with this stream kind introduced at or before `version`, or null;
// `found_any` says whether `base` has entries of this kind at all.
const Entry* newest(std::string_view base, bool per_thread, int version, bool& found_any) {
  const auto first =
      std::lower_bound(std::begin(kEntries), std::end(kEntries), base,
                       [](const Entry& e, std::string_view b) { return e.base < b; });
  const Entry* best = nullptr;
  for (auto it = first; it != std::end(kEntries) && it->base == base; ++it) {
    if (it->per_thread != per_thread) continue;
    found_any = true;
    if (it->version <= version && (best == nullptr || it->version > best->version)) best = &*it;
  }
  return best;
}

}  // namespace

ProcAddress resolve_proc_address(std::string_view name, int cuda_version, uint64_t flags) {
  // With CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, a function that has per-thread variants
  // gets only those: below the first one the driver says "version not sufficient" rather than
  // fall back to an older legacy ABI (cuMemcpyHtoD at 3020 with flags 2). A function with none
  // gets its legacy ABIs. This is a real driver's answer, not cuda.h's wording.
  bool has_per_thread = false;
  if (flags == CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) {
    const Entry* e = newest(name, true, cuda_version, has_per_thread);
    if (e != nullptr) return {CU_GET_PROC_ADDRESS_SUCCESS, e->symbol};
    if (has_per_thread) return {CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT, nullptr};
  }
  bool known = false;
  if (const Entry* e = newest(name, false, cuda_version, known)) {
    return {CU_GET_PROC_ADDRESS_SUCCESS, e->symbol};
  }
  return {known ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND,
          nullptr};
}

}  // namespace gvirtus::cuda
