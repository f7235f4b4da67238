#include "frontend/managed_variables.h"

#include <unistd.h>

#include <algorithm>

namespace gvirtus {
namespace {

uint64_t page_bytes() {
  static const auto bytes = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  return bytes;
}

}  // namespace

ManagedVariables& ManagedVariables::instance() {
  static auto* const variables = new ManagedVariables;  // a fault may come during exit
  return *variables;
}

bool ManagedVariables::move(Region& region, uint64_t address, std::byte* host, uint64_t bytes,
                            bool fetch) {
  std::lock_guard lock(region.mutex);
  for (const Variable& v : region.variables) {
    const uint64_t lo = std::max(address, v.address);
    const uint64_t hi = std::min(address + bytes, v.address + v.bytes);
    if (lo >= hi) continue;
    std::byte* at = host + (lo - address);
    const bool moved =
        fetch ? v.transfer.fetch(lo, at, hi - lo) : v.transfer.flush(lo, at, hi - lo);
    if (!moved) return false;
  }
  return true;
}

bool ManagedVariables::map_region(uint64_t address, uint64_t bytes, const Variable& variable,
                                  std::string& why) {
  auto region = std::make_shared<Region>();
  region->address = address;
  region->bytes = bytes;
  region->variables.push_back(variable);
  // The mirror's transfers of these pages: only the variables' bytes travel.
  ManagedTransfer transfer{
      [region](uint64_t at, void* host, size_t n) {
        return move(*region, at, static_cast<std::byte*>(host), n, true);
      },
      [region](uint64_t at, const void* host, size_t n) {
        return move(*region, at, const_cast<std::byte*>(static_cast<const std::byte*>(host)), n,
                    false);
      }};
  if (!ManagedMirror::instance().map(address, bytes, std::move(transfer), why)) return false;
  regions_.push_back(std::move(region));
  return true;
}

bool ManagedVariables::add(const void* stub, const void* owner, uint64_t address, uint64_t bytes,
                           const ManagedTransfer& transfer, std::string& why) {
  if (bytes == 0 || address == 0 || address + bytes < address) {
    why = "a managed variable must be a non-empty range";
    return false;
  }
  std::lock_guard lock(mutex_);
  for (const auto& region : regions_) {
    std::lock_guard region_lock(region->mutex);
    for (const Variable& v : region->variables) {
      if (v.stub == stub && v.owner == owner && v.address == address && v.bytes == bytes) {
        return true;
      }
    }
  }
  const Variable variable{stub, owner, address, bytes, transfer};
  const uint64_t page = page_bytes();
  const uint64_t end = address + bytes;
  // Each part of the variable either joins the variables' region holding its pages, or gets a
  // region over pages no variables' region holds.
  for (uint64_t at = address / page * page; at < end;) {
    const auto holder = std::find_if(regions_.begin(), regions_.end(), [&](const auto& r) {
      return at >= r->address && at < r->address + r->bytes;
    });
    if (holder != regions_.end()) {
      Region& r = **holder;
      const uint64_t lo = std::max(address, r.address);
      const uint64_t hi = std::min(end, r.address + r.bytes);
      const bool loaded = ManagedMirror::instance().reload(lo, hi - lo, [&] {
        std::lock_guard region_lock(r.mutex);
        r.variables.push_back(variable);
      });
      if (!loaded) {
        why = "the managed variable's value could not be fetched from the backend";
        remove_variable(variable);
        return false;
      }
      at = r.address + r.bytes;
      continue;
    }
    // Up to the next variables' region, or the variable's last page.
    uint64_t run_end = (end + page - 1) / page * page;
    for (const auto& r : regions_) {
      if (r->address > at) run_end = std::min(run_end, r->address);
    }
    if (!map_region(at, run_end - at, variable, why)) {
      why = "a managed variable at " + std::to_string(address) + " (" + std::to_string(bytes) +
            " bytes) shares pages with managed memory the mirror holds otherwise: " + why;
      remove_variable(variable);
      return false;
    }
    at = run_end;
  }
  return true;
}

void ManagedVariables::remove_owner(const void* stub, const void* owner) {
  std::lock_guard lock(mutex_);
  remove_if([&](const Variable& v) { return v.stub == stub && v.owner == owner; });
}

void ManagedVariables::remove_variable(const Variable& variable) {
  remove_if([&](const Variable& v) {
    return v.stub == variable.stub && v.owner == variable.owner && v.address == variable.address &&
           v.bytes == variable.bytes;
  });
}

template <typename Match>
void ManagedVariables::remove_if(Match match) {
  std::erase_if(regions_, [&](const std::shared_ptr<Region>& region) {
    {
      std::lock_guard region_lock(region->mutex);
      std::erase_if(region->variables, match);
      if (!region->variables.empty()) return false;
    }
    // Not under the region's lock: the mirror's transfers take it under the mirror's.
    ManagedMirror::instance().unmap(region->address);
    return true;
  });
}

}  // namespace gvirtus
