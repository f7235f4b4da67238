// Managed variables (`__managed__`) mirrored in this process, for every stub: the runtime stub's
// __cudaInitModule and cudaLibraryGetManaged, and the driver stub's cuLibraryGetManaged, which
// NVIDIA's own runtime calls for each managed variable of a module it loads.
//
// A managed variable lives in the backend's managed memory, at an address the backend's driver
// picks when it loads the module; the program reads and writes it here, at that address, through
// the managed mirror (managed_memory.h). Unlike an allocation, a variable is neither page-aligned
// nor alone in its page: the driver packs a module's managed variables side by side. So the
// mirror maps the pages around the variables, and the transfers of those pages move only the
// variables' bytes (what lies between them may not be the backend's to read or write):
//
//   - A variable whose pages no region holds gets a region of its own over them.
//   - A variable in pages of a variables' region already mapped joins that region: the region's
//     transfers move its bytes from then on, and they are loaded from the backend at once, under
//     the mirror's lock (ManagedMirror::reload), so neither a clean chunk nor the rest of a dirty
//     one hides the backend's value - the variable's initial value included.
//   - A variable can straddle both: each part goes its way.
//   - A variable's pages inside a region of an allocation (cudaMallocManaged) cannot be mirrored:
//     that region moves its own bytes only. The variable is refused, with the reason.
//
// Each variable belongs to an owner, the module it came from, and goes when its owner is unloaded
// (remove_owner); a region left with no variable is unmapped. Owners of different stubs never mix:
// an owner is named together with the stub's fetch function.
//
// Thread affinity: any thread; one lock for the variables, taken before the mirror's.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "frontend/managed_memory.h"

namespace gvirtus {

class ManagedVariables {
 public:
  // The process's (never destroyed).
  static ManagedVariables& instance();

  // Mirrors the variable [address, address + bytes) of `owner`, moved by `transfer` (whose
  // functions move any part of it). Adding one that is mirrored already for the same owner does
  // nothing. False, with the reason in `why`, when the variable cannot be mirrored.
  bool add(const void* stub, const void* owner, uint64_t address, uint64_t bytes,
           const ManagedTransfer& transfer, std::string& why);
  // Forgets `owner`'s variables; unmaps the regions left with none.
  void remove_owner(const void* stub, const void* owner);

 private:
  struct Variable {
    const void* stub;
    const void* owner;
    uint64_t address;
    uint64_t bytes;
    ManagedTransfer transfer;
  };
  // A region of the mirror over variables' pages, and the variables its transfers move.
  struct Region {
    uint64_t address;
    uint64_t bytes;
    std::mutex mutex;  // the list, read by the transfers (under the mirror's lock)
    std::vector<Variable> variables;
  };

  // Moves the variables' bytes within [address, address + bytes) between the backend and `host`
  // (the mirror's view of that range).
  static bool move(Region& region, uint64_t address, std::byte* host, uint64_t bytes, bool fetch);
  bool map_region(uint64_t address, uint64_t bytes, const Variable& variable, std::string& why);
  // With the lock held: takes out one variable (a failed add's parts), or every match, unmapping
  // the regions left with none.
  void remove_variable(const Variable& variable);
  template <typename Match>
  void remove_if(Match match);

  std::mutex mutex_;
  std::vector<std::shared_ptr<Region>> regions_;
};

}  // namespace gvirtus
