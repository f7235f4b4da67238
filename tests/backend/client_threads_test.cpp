// Per-client-thread library state (backend/services/client_threads.h) with real backend threads:
// a client thread's state goes with it to another backend thread, one backend thread serving two
// client threads in turn gives each its own, a client thread never seen costs no set on a fresh
// backend thread, and a new session forgets the last one's.
#include "backend/services/client_threads.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace gvirtus::services {
namespace {

// The "library": one value per backend thread, and every set recorded.
thread_local int library_state = 0;
std::vector<int>* sets = nullptr;

void set_state(int state) {
  library_state = state;
  if (sets != nullptr) sets->push_back(state);
}

// Runs `body` on a backend thread of its own and waits for it.
template <typename Body>
void on_new_thread(Body body) {
  std::thread(body).join();
}

class ClientThreadsTest : public ::testing::Test {
 protected:
  void SetUp() override { sets = &recorded; }
  void TearDown() override { sets = nullptr; }

  // One call of `client` on the calling backend thread that leaves `state` (or the state as it
  // is, when negative).
  void call(ClientThreads<int>& threads, uint32_t client, int state = -1) {
    threads.before_call(client);
    if (state >= 0) library_state = state;
    threads.note(library_state);
  }

  std::vector<int> recorded;
};

TEST_F(ClientThreadsTest, a_client_threads_state_follows_it_to_another_backend_thread) {
  ClientThreads<int> threads(set_state, 0);
  on_new_thread([&] { call(threads, 7, 3); });  // the reading thread
  on_new_thread([&] {                           // its executor, later
    threads.before_call(7);
    EXPECT_EQ(library_state, 3);
  });
  EXPECT_EQ(recorded, std::vector<int>{3});
}

TEST_F(ClientThreadsTest, a_shared_backend_thread_gives_each_client_thread_its_own) {
  ClientThreads<int> threads(set_state, 0);
  on_new_thread([&] {
    call(threads, 1, 5);
    call(threads, 2);  // never set anything: the initial state
    EXPECT_EQ(library_state, 0);
    call(threads, 2, 9);
    call(threads, 1);
    EXPECT_EQ(library_state, 5);
    call(threads, 2);
    EXPECT_EQ(library_state, 9);
  });
}

TEST_F(ClientThreadsTest, a_backend_thread_that_keeps_its_client_thread_sets_nothing) {
  ClientThreads<int> threads(set_state, 0);
  on_new_thread([&] {
    call(threads, 4);     // never seen, fresh backend thread: nothing to put back
    call(threads, 4, 2);  // its own change
    call(threads, 4);
    call(threads, 4);
  });
  EXPECT_TRUE(recorded.empty());
}

TEST_F(ClientThreadsTest, a_new_session_forgets_the_last_ones_client_threads) {
  ClientThreads<int> threads(set_state, 0);
  on_new_thread([&] {
    call(threads, 3, 6);
    threads.reset();
    // The same backend thread, the same client thread number, another session: the initial
    // state, set since this backend thread's library state is the last session's.
    threads.before_call(3);
    EXPECT_EQ(library_state, 0);
  });
}

}  // namespace
}  // namespace gvirtus::services
