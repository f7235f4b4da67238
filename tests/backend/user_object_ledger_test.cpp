// The session's count of user object references (backend/services/user_object_ledger.h): the
// library's call runs only when the session holds what the call gives up, a change is recorded
// only when the library's call succeeded, and an object the session holds no reference to is
// forgotten.
#include "backend/services/user_object_ledger.h"

#include <gtest/gtest.h>

namespace gvirtus::services {
namespace {

constexpr int32_t kInvalid = 1;
const void* const kGraph = reinterpret_cast<const void*>(uintptr_t{0x100});
const void* const kOther = reinterpret_cast<const void*>(uintptr_t{0x200});

// A library that answers `answer` and counts its calls.
struct Library {
  int32_t answer = 0;
  int calls = 0;
  int32_t operator()() {
    ++calls;
    return answer;
  }
};

const void* made(UserObjectLedger& ledger, uint32_t count) {
  static int storage[16];
  static int next = 0;
  const void* object = &storage[next++ % 16];
  EXPECT_EQ(ledger.create(count,
                          [&](const void*& out) -> int32_t {
                            out = object;
                            return 0;
                          }),
            0);
  return object;
}

TEST(UserObjectLedger, the_applications_references_allow_as_many_releases_as_it_holds) {
  UserObjectLedger ledger(kInvalid, "test");
  Library library;
  const void* object = made(ledger, 2);
  EXPECT_EQ(ledger.retain(object, 1, std::ref(library)), 0);  // 3
  EXPECT_EQ(ledger.release(object, 4, std::ref(library)), kInvalid);
  EXPECT_EQ(library.calls, 1) << "the refused release never reached the library";
  EXPECT_EQ(ledger.release(object, 3, std::ref(library)), 0);
  EXPECT_FALSE(ledger.holds(object)) << "no reference left: forgotten";
  EXPECT_EQ(ledger.retain(object, 1, std::ref(library)), kInvalid);
  EXPECT_EQ(library.calls, 2);
}

TEST(UserObjectLedger, counts_out_of_the_librarys_range_are_refused) {
  UserObjectLedger ledger(kInvalid, "test");
  Library library;
  const void* object = made(ledger, 1);
  EXPECT_EQ(ledger.retain(object, 0, std::ref(library)), kInvalid);
  EXPECT_EQ(ledger.retain(object, 0x80000000u, std::ref(library)), kInvalid);
  EXPECT_EQ(ledger.create(0, [](const void*&) -> int32_t { return 0; }), kInvalid);
  EXPECT_EQ(library.calls, 0);
}

TEST(UserObjectLedger, a_failed_library_call_changes_nothing) {
  UserObjectLedger ledger(kInvalid, "test");
  Library failing{.answer = 700};
  const void* object = made(ledger, 1);
  EXPECT_EQ(ledger.release(object, 1, std::ref(failing)), 700);
  EXPECT_TRUE(ledger.holds(object));
  Library library;
  EXPECT_EQ(ledger.release(object, 1, std::ref(library)), 0);
  EXPECT_FALSE(ledger.holds(object));
  EXPECT_EQ(ledger.create(1,
                          [](const void*& out) -> int32_t {
                            out = nullptr;
                            return 700;
                          }),
            700);
}

TEST(UserObjectLedger, references_moved_to_a_graph_are_the_graphs_to_release) {
  UserObjectLedger ledger(kInvalid, "test");
  Library library;
  const void* object = made(ledger, 1);
  EXPECT_EQ(ledger.graph_retain(kGraph, object, 2, true, std::ref(library)), kInvalid)
      << "only one reference to move";
  EXPECT_EQ(ledger.graph_retain(kGraph, object, 1, true, std::ref(library)), 0);
  EXPECT_TRUE(ledger.holds(object)) << "the graph holds it";
  EXPECT_EQ(ledger.release(object, 1, std::ref(library)), kInvalid) << "the program holds none";
  EXPECT_EQ(ledger.graph_release(kOther, object, 1, std::ref(library)), kInvalid);
  EXPECT_EQ(ledger.graph_release(kGraph, object, 1, std::ref(library)), 0);
  EXPECT_FALSE(ledger.holds(object));
}

TEST(UserObjectLedger, a_destroyed_graphs_references_go_with_it) {
  UserObjectLedger ledger(kInvalid, "test");
  Library library;
  const void* kept = made(ledger, 1);
  const void* moved = made(ledger, 1);
  EXPECT_EQ(ledger.graph_retain(kGraph, kept, 3, false, std::ref(library)), 0);
  EXPECT_EQ(ledger.graph_retain(kGraph, moved, 1, true, std::ref(library)), 0);
  ledger.forget_graph(kGraph);
  EXPECT_TRUE(ledger.holds(kept)) << "the program's reference stays";
  EXPECT_FALSE(ledger.holds(moved)) << "only the graph held it";
  EXPECT_EQ(ledger.graph_release(kGraph, kept, 1, std::ref(library)), kInvalid);
  ledger.forget_all();
  EXPECT_FALSE(ledger.holds(kept));
}

}  // namespace
}  // namespace gvirtus::services
