#include "plugins/cuda/backend/module_loads.h"

#include <mutex>
#include <optional>

#include "backend/services/module_cache.h"
#include "common/error.h"
#include "common/log.h"
#include "common/wire_record.h"
#include "plugins/cuda/backend/request_checks.h"
#include "plugins/cuda/common/driver_wire.h"

namespace gvirtus::cuda {
namespace {

// One session per worker process: the cache it was given, opened when it began.
std::mutex cache_mutex;
std::optional<services::ModuleCache> cache;

services::ModuleCache* module_cache() {
  std::lock_guard lock(cache_mutex);
  return cache ? &*cache : nullptr;  // never reset while the session runs
}

}  // namespace

void open_module_cache(const SessionInfo& session) {
  std::lock_guard lock(cache_mutex);
  cache.reset();
  if (session.module_cache_dir.empty() || session.module_cache_max_bytes == 0) return;
  try {
    cache.emplace(session.module_cache_dir, session.module_cache_max_bytes, kMaxModuleImageBytes);
  } catch (const Error& e) {
    // It was usable when the daemon started; a session without it still works, only slower.
    GVIRTUS_LOG(kWarning) << "cuda: this session runs without the module cache: " << e.what();
  }
}

RequestedImage read_requested_image(WireReader& in) {
  RequestedImage requested;
  switch (in.get<uint8_t>()) {
    case kImageBytes:
      requested.bytes = in.get_blob(kMaxModuleImageBytes);
      requested.size = requested.bytes.size();
      break;
    case kImageByHash: {
      const auto by_hash = get_record<ImageByHash>(in);
      if (by_hash.size == 0 || by_hash.size > kMaxModuleImageBytes) {
        raise(ErrorKind::kInvalidInput, "a module image named by hash with a size of " +
                                            std::to_string(by_hash.size) + " bytes");
      }
      requested.by_hash = true;
      requested.hash = by_hash.hash;
      requested.size = by_hash.size;
      break;
    }
    default:
      raise(ErrorKind::kInvalidInput, "a module image in an unknown form");
  }
  return requested;
}

ImageForDriver image_for_driver(const RequestedImage& requested, CUresult& result) {
  if (!requested.by_hash) {
    if (result == CUDA_SUCCESS && !image_is_sound(requested.bytes)) {
      result = CUDA_ERROR_INVALID_IMAGE;
    }
    return {kImageLoaded,
            result == CUDA_SUCCESS ? aligned_copy(requested.bytes) : std::vector<uint64_t>{}};
  }
  services::ModuleCache* kept = module_cache();
  if (kept == nullptr) return {kImageNoCache, {}};
  auto found = kept->find(requested.hash);
  // The size is the client's word; the hash decides, but an entry of another size is not it.
  if (!found || found->size != requested.size) return {kImageUnknown, {}};
  return {kImageLoaded, std::move(found->words)};
}

void keep_loaded_image(const RequestedImage& requested) {
  if (requested.by_hash) return;
  if (services::ModuleCache* kept = module_cache()) {
    kept->store(content_hash(requested.bytes), requested.bytes);
  }
}

}  // namespace gvirtus::cuda
