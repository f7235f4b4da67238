// The image of a module load (cuModuleLoadData, cuModuleLoadDataEx, cuLibraryLoadData) as the
// request names it - its bytes, or its content hash for the module cache to supply them
// (common/driver_wire.h) - made ready for the driver, and kept in the cache once it loads.
//
// Bytes from the wire are validated (request_checks.h: exactly as large as their headers say,
// parsing as an image) before the driver sees them. Bytes from the cache were validated when they
// were stored, after which they loaded on a driver, and they still hash to their name
// (backend/services/module_cache.h), so they are not validated again: that is most of what a
// cache hit saves besides the transfer (decompressing every entry of every fatbinary).
#pragma once

#include <cuda.h>

#include <cstdint>
#include <span>
#include <vector>

#include "backend/plugin.h"
#include "common/content_hash.h"
#include "common/wire.h"
#include "plugins/cuda/common/driver_wire.h"

namespace gvirtus::cuda {

// Opens the module cache the session was given (SessionInfo::module_cache_dir), if any.
void open_module_cache(const SessionInfo& session);

struct RequestedImage {
  bool by_hash = false;
  ContentHash hash{};
  uint64_t size = 0;
  std::span<const std::byte> bytes;  // when !by_hash: in the request
};

// The image part of a load request. Throws Error{kInvalidInput} when malformed.
RequestedImage read_requested_image(WireReader& in);

// Runs `load(image)` on the requested image's bytes, 8-byte aligned, and writes the reply's first
// part: i32 result and u8 answer (driver_wire.h). Returns whether `load` ran (the answer
// kImageLoaded: the caller writes the handle and outputs that follow); otherwise the client sends
// the bytes. An image whose bytes came in the request is kept in the cache when it loads.
template <typename Load>
bool load_requested_image(const RequestedImage& requested, WireWriter& out, CUresult& result,
                          Load load);

// What load_requested_image needs without the template: the bytes ready for the driver, or an
// answer other than kImageLoaded (then `words` is empty); CUDA_ERROR_INVALID_IMAGE in `result`
// for bytes that are not a sound image.
struct ImageForDriver {
  uint8_t answer;
  std::vector<uint64_t> words;
};
ImageForDriver image_for_driver(const RequestedImage& requested, CUresult& result);
// After the driver loaded `requested` from its own bytes: keeps them in the cache.
void keep_loaded_image(const RequestedImage& requested);

template <typename Load>
bool load_requested_image(const RequestedImage& requested, WireWriter& out, CUresult& result,
                          Load load) {
  ImageForDriver image = image_for_driver(requested, result);
  if (image.answer == kImageLoaded && result == CUDA_SUCCESS) {
    result = load(static_cast<const void*>(image.words.data()));
    if (result == CUDA_SUCCESS) keep_loaded_image(requested);
  }
  out.put<int32_t>(result);
  out.put<uint8_t>(image.answer);
  return image.answer == kImageLoaded;
}

}  // namespace gvirtus::cuda
