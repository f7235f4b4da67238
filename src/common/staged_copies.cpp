// Graph copies of the client's own memory, staged through blocks on the backend (staged_copies.h).
#include "common/staged_copies.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace gvirtus::staging {
namespace {

using Wide = unsigned __int128;

template <typename Each>
void each_row(const Region& r, Each&& row) {
  for (uint64_t s = 0; s < r.slices; ++s) {
    for (uint64_t y = 0; y < r.rows; ++y) row(s * r.slice + y * r.pitch);
  }
}

}  // namespace

bool region_of(const void* base, uint64_t x, uint64_t y, uint64_t z, uint64_t pitch,
               uint64_t height, uint64_t width, uint64_t rows, uint64_t slices, Region& region) {
  if (base == nullptr || width == 0 || rows == 0 || slices == 0) return false;
  if ((rows > 1 || slices > 1) && pitch < width) return false;
  if (slices > 1 && height < rows) return false;
  const uint64_t row_step = rows > 1 || slices > 1 ? pitch : width;
  const Wide slice_step = slices > 1 ? Wide{pitch} * height : Wide{row_step} * rows;
  const Wide offset = Wide{x} + Wide{y} * pitch + Wide{z} * pitch * height;
  const Wide span = Wide{slices - 1} * slice_step + Wide{rows - 1} * row_step + width;
  if (Wide{reinterpret_cast<uintptr_t>(base)} + offset + span > UINTPTR_MAX) return false;
  region = Region{static_cast<std::byte*>(const_cast<void*>(base)) + static_cast<uint64_t>(offset),
                  width,
                  rows,
                  slices,
                  row_step,
                  static_cast<uint64_t>(slice_step)};
  return true;
}

int Staging::block_for(uint32_t route, const Region& region, uint64_t& block) {
  const BlockKey key{route, reinterpret_cast<uintptr_t>(region.first), region.span()};
  std::lock_guard lock(mutex_);
  if (const auto it = blocks_.find(key); it != blocks_.end()) {
    block = it->second;
    return 0;
  }
  uint64_t made = 0;
  if (const int status = calls_.allocate(region.span(), made); status != 0) return status;
  blocks_.emplace(key, made);
  block = made;
  return 0;
}

const Transfer* Staging::transfer_for(const Region& region, uint64_t block, bool to_device,
                                      uint32_t route) {
  const TransferKey key{key_of(region), block, to_device, route};
  std::lock_guard lock(mutex_);
  auto& slot = transfers_[key];
  if (!slot) slot = std::make_unique<Transfer>(Transfer{region, block, to_device, route});
  return slot.get();
}

const HostCopy* Staging::host_copy_for(const Region& source, const Region& destination) {
  std::lock_guard lock(mutex_);
  auto& slot = host_copies_[{key_of(source), key_of(destination)}];
  if (!slot) slot = std::make_unique<HostCopy>(HostCopy{source, destination});
  return slot.get();
}

void run_host_copy(void* data) {
  const auto& copy = *static_cast<const HostCopy*>(data);
  const Region &from = copy.source, &to = copy.destination;
  if (from.contiguous() && to.contiguous()) {
    std::memmove(to.first, from.first, from.span());
    return;
  }
  for (uint64_t s = 0; s < from.slices; ++s) {
    for (uint64_t y = 0; y < from.rows; ++y) {
      std::memmove(to.first + s * to.slice + y * to.pitch,
                   from.first + s * from.slice + y * from.pitch, from.width);
    }
  }
}

int Staging::run(const Transfer& t) const {
  const Region& r = t.region;
  auto write = [&](uint64_t offset, uint64_t bytes) {
    for (uint64_t done = 0; done < bytes;) {
      const uint64_t chunk = std::min(kChunkBytes, bytes - done);
      if (const int s = calls_.write(t.block + offset + done, r.first + offset + done, chunk)) {
        return s;
      }
      done += chunk;
    }
    return 0;
  };
  auto read = [&](uint64_t offset, std::byte* to, uint64_t bytes) {
    for (uint64_t done = 0; done < bytes;) {
      const uint64_t chunk = std::min(kChunkBytes, bytes - done);
      if (const int s = calls_.read(t.block + offset + done, to + done, chunk)) return s;
      done += chunk;
    }
    return 0;
  };
  int status = 0;
  if (t.to_device) {
    if (r.contiguous()) return write(0, r.span());
    each_row(r, [&](uint64_t offset) {
      if (status == 0) status = write(offset, r.width);
    });
    return status;
  }
  if (r.contiguous()) return read(0, r.first, r.span());
  std::vector<std::byte> bytes(r.span());
  if ((status = read(0, bytes.data(), bytes.size())) != 0) return status;
  each_row(r, [&](uint64_t offset) { std::memcpy(r.first + offset, &bytes[offset], r.width); });
  return 0;
}

}  // namespace gvirtus::staging
