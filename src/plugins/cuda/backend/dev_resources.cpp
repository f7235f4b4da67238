// Device resources (CUdevResource, green contexts' SM shares; the descriptor's opaque_structs):
// the driver writes private bytes into each and reads them back when it is given one to split or
// to make a descriptor of. A client only hands back what it was given, so the session notes every
// resource its driver wrote, byte for byte, and refuses any other before the driver reads it.
#include <cuda.h>

#include <cstring>
#include <mutex>
#include <string>
#include <unordered_set>

#include "backend/services/rejections.h"
#include "cuda_vetting.h"

namespace gvirtus::cuda {
namespace {

// Bounded: a client that asks for resources in a loop makes the set forget an entry for each new
// one rather than grow (a forgotten resource is refused, as a made-up one).
constexpr size_t kMaxNoted = size_t{1} << 16;

std::mutex& mutex = *new std::mutex;
auto& noted = *new std::unordered_set<std::string>;

std::string bytes_of(const CUdevResource& resource) {
  return {reinterpret_cast<const char*>(&resource), sizeof resource};
}

}  // namespace

void note_dev_resources(const CUdevResource* items, size_t count) {
  if (items == nullptr) return;
  std::lock_guard lock(mutex);
  for (size_t i = 0; i < count; ++i) {
    if (noted.size() >= kMaxNoted) noted.erase(noted.begin());
    noted.insert(bytes_of(items[i]));
  }
}

CUresult vet_dev_resources(const CUdevResource* items, size_t count) {
  if (items == nullptr) return CUDA_SUCCESS;  // the driver's to refuse
  std::lock_guard lock(mutex);
  for (size_t i = 0; i < count; ++i) {
    if (noted.count(bytes_of(items[i])) == 0) {
      return static_cast<CUresult>(services::refuse(CUDA_ERROR_INVALID_VALUE, "cuda",
                                                    "device resource", &items[i],
                                                    "not one the driver gave this session"));
    }
  }
  return CUDA_SUCCESS;
}

}  // namespace gvirtus::cuda
