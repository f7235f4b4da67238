// The library handles a backend session holds, for every plugin (a shared backend service).
//
// A library dereferences its handles as pointers to its own structures: a made-up, destroyed or
// reset one crashes the worker, or worse, corrupts it. So each plugin's session keeps the handles
// its library gave it - created by a call whose row says "create", not yet destroyed by one that
// says "destroy" - and the generated handlers pass on no other (L_vetting.h, generated).
//
// Each entry has its kind (the index of the handle type in the library's descriptor) and an
// owner: what the library ties the handle to (cudart: the device current when it was created), so
// that resetting an owner forgets its handles. And each adoption has a generation of its own: a
// library hands an address out again once it destroyed what was there (a module unloaded takes
// its functions along), so what a session keeps about a handle (a kernel's parameter layout)
// holds only for the generation it was learnt in.
//
// An address holds one handle, except where the library hands out two kinds at one address
// (allow_alias: the driver's green context and the context made from it): a new adoption of
// another kind replaces what was there (the library destroyed it), of an aliasing kind joins it.
//
// Thread affinity: locked (a session's executors run on several threads).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <unordered_map>

namespace gvirtus::services {

class HandleTable {
 public:
  void adopt(uint16_t kind, const void* handle, int owner);
  // Handles of kinds `a` and `b` may share an address, each held in its own right.
  void allow_alias(uint16_t a, uint16_t b);
  // Takes the handle out before the library destroys it, so that a handle the library hands out
  // again at the same address, on another thread, is never forgotten by mistake. The owner it
  // had, or kNotHeld when the table does not hold it as `kind`.
  static constexpr int kNotHeld = -2;
  int release(uint16_t kind, const void* handle);
  // Forgets the handles of `owner`, and of every kind in `every_owner_kinds` (a bit per kind)
  // whatever their owner.
  void forget_owner(int owner, uint64_t every_owner_kinds = 0);
  // Forgets the handles of `owner` whose kind is in `kinds` (a bit per kind), and no other.
  void forget_owned(int owner, uint64_t kinds);
  bool holds(uint16_t kind, const void* handle) const;
  // The handle's adoption: its kind and generation, a new number each time it is adopted (never
  // 0, never given twice); generation 0 when the table does not hold it. Of two aliases, the
  // later.
  struct Adoption {
    uint16_t kind = 0;
    uint64_t generation = 0;
  };
  Adoption adoption(const void* handle) const;
  // The generation of the handle's adoption as `kind`: 0 when the table does not hold it so.
  uint64_t generation(uint16_t kind, const void* handle) const;
  size_t size() const;
  void clear();

 private:
  struct Entry {
    uint16_t kind;
    int owner;
    uint64_t generation;
  };
  // What one address holds: one handle, or two of aliasing kinds.
  struct Slot {
    std::array<Entry, 2> entries;
    size_t count = 0;
    const Entry* find(uint16_t kind) const;
  };
  // Removes the entries `gone` says of; whether the slot is empty now.
  template <typename Gone>
  static bool remove_if(Slot& slot, Gone gone);
  // Removes, from every slot, the entries `gone` says of; then the slots left empty.
  template <typename Gone>
  void forget_if(Gone gone);
  bool aliases(uint16_t a, uint16_t b) const;

  mutable std::mutex mutex_;
  uint64_t adoptions_ = 0;
  std::unordered_map<const void*, Slot> handles_;
  std::array<uint64_t, 64> alias_masks_{};  // by kind: a bit per kind it may share an address with
};

// A handle a call is about to destroy: taken out of the table now, and put back unless
// destroyed() confirms that the library freed it (the call was rejected or failed).
class HandleRelease {
 public:
  HandleRelease(HandleTable& table, uint16_t kind, const void* handle);
  ~HandleRelease();
  HandleRelease(const HandleRelease&) = delete;
  HandleRelease& operator=(const HandleRelease&) = delete;

  bool held() const { return owner_ != HandleTable::kNotHeld; }
  void destroyed() { owner_ = HandleTable::kNotHeld; }

 private:
  HandleTable& table_;
  uint16_t kind_;
  const void* handle_;
  int owner_;
};

}  // namespace gvirtus::services
