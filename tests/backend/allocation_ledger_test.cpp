// The session's ledger of device memory (backend/services/allocation_ledger.h): a free in flight
// withdraws its allocation first, so that an allocation another executor is handed at the same
// address meanwhile survives the free's success, and a failed free puts its allocation back; the
// end of a context forgets the allocations made in it.
#include "backend/services/allocation_ledger.h"

#include <gtest/gtest.h>

#include <atomic>

namespace gvirtus::services {
namespace {

const void* at(uintptr_t address) {
  return reinterpret_cast<const void*>(address);
}

TEST(LedgerWithdrawal, an_allocation_made_at_the_freed_address_meanwhile_survives_the_free) {
  AllocationLedger ledger;
  std::atomic<uint64_t> published{0};
  ledger.reset(&published);
  ledger.allocated(at(0x1000), 256);
  {
    LedgerWithdrawal withdrawn(ledger);
    withdrawn.allocation(at(0x1000));
    EXPECT_FALSE(ledger.contains(at(0x1000), 1));
    // The library freed 0x1000; another executor's allocation is given it before the free
    // returns to its handler.
    ledger.allocated(at(0x1000), 64);
    withdrawn.done();
  }
  EXPECT_TRUE(ledger.contains(at(0x1000), 64));
  EXPECT_FALSE(ledger.contains(at(0x1000), 65));
  EXPECT_EQ(ledger.bytes(), 64u);
  EXPECT_EQ(published.load(), 64u);
}

TEST(AllocationLedger, a_contexts_end_forgets_its_allocations_and_only_those) {
  AllocationLedger ledger;
  std::atomic<uint64_t> published{0};
  ledger.reset(&published);
  ledger.allocated(at(0x1000), 256, /*context=*/0);  // device 0's primary context
  ledger.allocated(at(0x2000), 128, /*context=*/0);
  ledger.allocated(at(0x3000), 64, /*context=*/1 << 20);  // a context of one's own
  ledger.allocated(at(0x4000), 32);                       // no context's
  ledger.owned(at(0x9), at(0x5000), 16);
  ledger.context_gone(0);
  EXPECT_FALSE(ledger.contains(at(0x1000), 1));
  EXPECT_FALSE(ledger.contains(at(0x2000), 1));
  EXPECT_TRUE(ledger.contains(at(0x3000), 64));
  EXPECT_TRUE(ledger.contains(at(0x4000), 32));
  EXPECT_TRUE(ledger.contains(at(0x5000), 16)) << "what a handle owns goes with its handle";
  EXPECT_EQ(ledger.bytes(), 96u);
  EXPECT_EQ(published.load(), 96u);
  ledger.context_gone(AllocationLedger::kNoContext);
  EXPECT_TRUE(ledger.contains(at(0x4000), 32)) << "no context's end frees it";
  ledger.context_gone(1 << 20);
  EXPECT_FALSE(ledger.contains(at(0x3000), 1));
  EXPECT_EQ(published.load(), 32u);
}

TEST(LedgerWithdrawal, a_failed_free_of_a_contexts_allocation_keeps_its_context) {
  AllocationLedger ledger;
  ledger.reset(nullptr);
  ledger.allocated(at(0x1000), 256, /*context=*/3);
  {
    LedgerWithdrawal withdrawn(ledger);
    withdrawn.allocation(at(0x1000));
  }  // the free failed
  ledger.context_gone(3);
  EXPECT_FALSE(ledger.contains(at(0x1000), 1));
}

TEST(LedgerWithdrawal, a_failed_free_puts_its_allocation_back) {
  AllocationLedger ledger;
  std::atomic<uint64_t> published{0};
  ledger.reset(&published);
  ledger.allocated(at(0x1000), 256);
  {
    LedgerWithdrawal withdrawn(ledger);
    withdrawn.allocation(at(0x1000));
    EXPECT_EQ(ledger.bytes(), 0u);
  }
  EXPECT_TRUE(ledger.contains(at(0x10ff), 1));
  EXPECT_EQ(ledger.bytes(), 256u);
  EXPECT_EQ(published.load(), 256u);
}

TEST(LedgerWithdrawal, an_owner_s_ranges_leave_with_its_destroy_and_come_back_if_it_fails) {
  AllocationLedger ledger;
  ledger.reset(nullptr);
  const void* const graph = at(0x10);
  ledger.owned(graph, at(0x2000), 128);
  ledger.owned(graph, at(0x3000), 128);
  {
    LedgerWithdrawal withdrawn(ledger);
    withdrawn.owned_by(graph);
    EXPECT_FALSE(ledger.contains(at(0x2000), 1));
    EXPECT_FALSE(ledger.contains(at(0x3000), 1));
  }
  EXPECT_TRUE(ledger.contains(at(0x2000), 128));
  EXPECT_TRUE(ledger.contains(at(0x3000), 128));
  {
    LedgerWithdrawal withdrawn(ledger);
    withdrawn.owned_by(graph);
    // A graph made meanwhile at the same handle places memory of its own.
    ledger.owned(graph, at(0x4000), 32);
    withdrawn.done();
  }
  EXPECT_FALSE(ledger.contains(at(0x2000), 1));
  EXPECT_TRUE(ledger.contains(at(0x4000), 32));
  // Memory the session does not hold is not counted as its own.
  EXPECT_EQ(ledger.bytes(), 0u);
}

// Graph memory: freeable by its address (a free withdraws it, and a failed free puts it back),
// and handed to another owner when its graph goes; memory a module owns is not freeable.
TEST(LedgerWithdrawal, freeable_ranges_leave_with_a_free_of_their_address_and_change_hands) {
  AllocationLedger ledger;
  ledger.reset(nullptr);
  const void* const graph = at(0x10);
  const void* const heir = at(0x20);
  const void* const module = at(0x30);
  ledger.owned(graph, at(0x2000), 128, /*freeable=*/true);
  ledger.owned(module, at(0x5000), 64);
  {
    LedgerWithdrawal failed(ledger);
    failed.allocation(at(0x2000));
    EXPECT_FALSE(ledger.contains(at(0x2000), 1));
  }
  EXPECT_TRUE(ledger.contains(at(0x2000), 128)) << "a failed free puts it back";
  {
    LedgerWithdrawal not_freeable(ledger);
    not_freeable.allocation(at(0x5000));
    EXPECT_TRUE(ledger.contains(at(0x5000), 64)) << "a module's global is no allocation";
  }
  ledger.hand_over(graph, heir);
  ledger.owner_gone(graph);
  EXPECT_TRUE(ledger.contains(at(0x2000), 128)) << "the heir holds it";
  {
    LedgerWithdrawal freed(ledger);
    freed.allocation(at(0x2000));
    freed.done();
  }
  EXPECT_FALSE(ledger.contains(at(0x2000), 1));
  EXPECT_EQ(ledger.bytes(), 0u) << "graph memory is not counted as the application's allocations";
}

TEST(LedgerWithdrawal, withdrawing_what_the_ledger_lacks_changes_nothing) {
  AllocationLedger ledger;
  ledger.reset(nullptr);
  ledger.allocated(at(0x1000), 16);
  {
    LedgerWithdrawal withdrawn(ledger);
    withdrawn.allocation(at(0x1008));  // not a start
    withdrawn.owned_by(at(0x99));
  }
  EXPECT_TRUE(ledger.contains(at(0x1000), 16));
  EXPECT_EQ(ledger.bytes(), 16u);
}

}  // namespace
}  // namespace gvirtus::services
