// Transport conformance: every communicator must pass the same tests (DESIGN.md section 3).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <thread>
#include <vector>

#include "common/error.h"
#include "common/wire.h"
#include "transport/transport_cases.h"

namespace gvirtus::testing {
namespace {

using namespace std::chrono_literals;

constexpr size_t kLimit = size_t{65} << 20;  // room for the 64 MiB message plus a header

class ConformanceTest : public ::testing::TestWithParam<TransportCase> {
 protected:
  // Connects a client and accepts it; both ends ready.
  void connect_pair(size_t max_message_bytes = kLimit) {
    served_ = GetParam().serve(max_message_bytes);
    std::thread accepter([&] { server_ = served_.listener->accept(); });
    client_ = served_.client->connect(5s);
    accepter.join();
    ASSERT_TRUE(server_ && client_);
  }

  // A child process connects and starts sending a 64 MiB message (having been sent a message it
  // never reads, when `leave_input_unread`); it is killed inside send(), and the server's recv()
  // must fail with kDisconnected saying the peer closed the connection mid-message.
  void expect_peer_killed_mid_message_reported(bool leave_input_unread) {
    served_ = GetParam().serve(kLimit);
    const auto data = pattern(size_t{64} << 20, leave_input_unread ? 10 : 9);
    int started[2];
    ASSERT_EQ(::pipe(started), 0);
    const pid_t child = ::fork();
    if (child == 0) {
      try {
        auto c = served_.client->connect(5s);
        (void)!::write(started[1], "s", 1);
        send_one(*c, data);  // blocks once the transport's buffers are full; never reads
      } catch (...) {
      }
      ::_exit(0);
    }
    server_ = served_.listener->accept();
    if (leave_input_unread) send_one(*server_, pattern(1000, 11));
    char byte;
    ASSERT_EQ(::read(started[0], &byte, 1), 1);  // the child is inside send()
    // Let part of its message arrive (the proof is the error below, not the wait).
    std::this_thread::sleep_for(200ms);
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    ::close(started[0]);
    ::close(started[1]);
    try {
      server_->recv();
      FAIL() << "a message from a killed peer cannot be complete";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kDisconnected) << e.what();
      EXPECT_NE(std::string(e.what()).find("closed the connection mid-message ("),
                std::string::npos)
          << e.what();
    }
  }

  ServedEndpoint served_;
  std::unique_ptr<Connection> server_;
  std::unique_ptr<Connection> client_;
};

// The largest message the size sweep sends: 64 MiB, or GVIRTUS_TEST_LARGEST_MESSAGE bytes (at
// least 1 MiB) - the VM harness sends up to 16 MiB under emulation, four times rdma's window and
// vsock's socket buffers, where 64 MiB took two minutes per transport and showed nothing more.
size_t largest_message() {
  const char* text = std::getenv("GVIRTUS_TEST_LARGEST_MESSAGE");
  if (text == nullptr) return size_t{64} << 20;
  const size_t bytes = std::strtoull(text, nullptr, 10);
  if (bytes < (size_t{1} << 20) || bytes > (size_t{64} << 20)) {
    ADD_FAILURE() << "GVIRTUS_TEST_LARGEST_MESSAGE=" << text << ": not 1 MiB to 64 MiB";
    return size_t{64} << 20;
  }
  return bytes;
}

TEST_P(ConformanceTest, every_size_from_1_byte_to_the_largest_arrives_intact_both_ways) {
  connect_pair();
  const size_t largest = largest_message();
  std::vector<size_t> sizes = {0, 1, 2, 3, 7, 63, 64, 65, 1000, 4095, 4096, 4097, 65535, 65536};
  for (size_t s = 1 << 17; s <= largest; s <<= 1) sizes.push_back(s);
  sizes.push_back(largest - 1);
  std::thread echo([&] {
    for (size_t i = 0; i < sizes.size(); ++i) send_one(*server_, server_->recv());
  });
  for (size_t s : sizes) {
    const auto data = pattern(s, static_cast<uint32_t>(s));
    send_one(*client_, data);
    const ByteView back = client_->recv();
    ASSERT_EQ(back.size(), s);
    ASSERT_TRUE(std::equal(back.begin(), back.end(), data.begin())) << "size " << s;
  }
  echo.join();
}

TEST_P(ConformanceTest, gather_send_delivers_the_pieces_as_one_message_in_order) {
  connect_pair();
  const auto a = pattern(32, 1), b = pattern(0, 2), c = pattern(100000, 3), d = pattern(1, 4);
  const ByteView pieces[] = {a, b, c, d};
  client_->send(pieces);
  client_->send(std::span<const ByteView>());  // an empty message is still a message
  const ByteView got = server_->recv();
  std::vector<std::byte> expected;
  for (const auto* v : {&a, &b, &c, &d}) expected.insert(expected.end(), v->begin(), v->end());
  ASSERT_EQ(got.size(), expected.size());
  EXPECT_TRUE(std::equal(got.begin(), got.end(), expected.begin()));
  EXPECT_EQ(server_->recv().size(), 0u);
}

// recv_placed(): messages whose first 8 bytes say how many bytes follow them to land elsewhere,
// sent back to back (so the stream transports hold the next messages' bytes while placing), each
// followed by a small ordinary message; the ends land in place, every other byte stays in order.
TEST_P(ConformanceTest, placed_receive_lands_each_end_in_place_and_keeps_what_follows_it) {
  connect_pair();
  const size_t ends[] = {1, 3, 100, 4097, 65536, 300001, (size_t{16} << 20) + 3};
  std::thread sender([&] {
    uint32_t seed = 100;
    for (size_t end : ends) {
      auto message = pattern(8 + 24 + end, seed++);
      store_le<uint64_t>(message.data(), end);
      send_one(*client_, message);
      send_one(*client_, pattern(40, seed++));
    }
  });
  uint32_t seed = 100;
  for (size_t end : ends) {
    std::vector<std::byte> landing(end, std::byte{0xee});
    size_t asked_size = 0;
    auto place = [&](ByteView head, size_t message_bytes) -> Placement {
      asked_size = message_bytes;
      EXPECT_EQ(head.size(), 8u);
      const uint64_t announced = load_le<uint64_t>(head.data());
      return {message_bytes - static_cast<size_t>(announced), landing};
    };
    const ByteView prefix = server_->recv_placed(8, place, std::nullopt);
    auto expected = pattern(8 + 24 + end, seed++);
    store_le<uint64_t>(expected.data(), end);
    EXPECT_EQ(asked_size, expected.size());
    ASSERT_EQ(prefix.size(), 32u) << "end " << end;
    EXPECT_TRUE(std::equal(prefix.begin(), prefix.end(), expected.begin())) << "end " << end;
    EXPECT_TRUE(std::equal(landing.begin(), landing.end(), expected.begin() + 32)) << "end " << end;
    const ByteView next = server_->recv(5s);
    const auto small = pattern(40, seed++);
    ASSERT_EQ(next.size(), small.size()) << "after end " << end;
    EXPECT_TRUE(std::equal(next.begin(), next.end(), small.begin())) << "after end " << end;
  }
  sender.join();
}

// A placement that is declined, or does not cover exactly the rest of the message, or starts
// inside the head, leaves the message whole, and the span untouched.
TEST_P(ConformanceTest, placed_receive_that_does_not_fit_returns_the_whole_message) {
  connect_pair();
  const auto message = pattern(5000, 7);
  std::vector<std::byte> landing(5000, std::byte{0xee});
  const std::span<std::byte> whole(landing);
  const Placement refused[] = {
      {},                        // declined
      {100, whole.first(4899)},  // one byte short of the end
      {100, whole.first(4901)},  // one byte past it
      {4, whole.first(4996)},    // inside the 8 head bytes
      {6000, whole.first(0)},    // past the message
  };
  for (size_t i = 0; i < std::size(refused); ++i) send_one(*client_, message);
  for (const Placement& p : refused) {
    const ByteView got = server_->recv_placed(
        8, [&](ByteView, size_t) { return p; }, std::chrono::seconds(5));
    ASSERT_EQ(got.size(), message.size()) << "at " << p.at << ", " << p.into.size() << " bytes";
    EXPECT_TRUE(std::equal(got.begin(), got.end(), message.begin()));
  }
  EXPECT_TRUE(std::all_of(landing.begin(), landing.end(),
                          [](std::byte b) { return b == std::byte{0xee}; }));
}

// Both sides send thousands of numbered, checksummed messages at once, while receiving.
TEST_P(ConformanceTest, many_messages_in_flight_both_ways_arrive_in_order) {
  connect_pair();
  constexpr uint32_t kCount = 20000;
  auto sender = [](Connection& c, uint32_t seed) {
    std::vector<std::byte> buf;
    for (uint32_t i = 0; i < kCount; ++i) {
      const size_t size = 8 + (i * 7919u + seed) % 3000;
      buf = pattern(size, i ^ seed);
      store_le<uint32_t>(buf.data(), i);
      const uint32_t sum =
          std::accumulate(buf.begin() + 8, buf.end(), 0u,
                          [](uint32_t s, std::byte b) { return s * 31 + uint8_t(b); });
      store_le<uint32_t>(buf.data() + 4, sum);
      send_one(c, buf);
    }
  };
  auto receiver = [](Connection& c, std::atomic<uint32_t>& good) {
    for (uint32_t i = 0; i < kCount; ++i) {
      const ByteView m = c.recv();
      if (m.size() < 8 || load_le<uint32_t>(m.data()) != i) return;
      const uint32_t sum = std::accumulate(
          m.begin() + 8, m.end(), 0u, [](uint32_t s, std::byte b) { return s * 31 + uint8_t(b); });
      if (sum != load_le<uint32_t>(m.data() + 4)) return;
      good.fetch_add(1);
    }
  };
  std::atomic<uint32_t> client_good{0}, server_good{0};
  std::thread t1(sender, std::ref(*client_), 11u), t2(sender, std::ref(*server_), 22u);
  std::thread t3(receiver, std::ref(*server_), std::ref(server_good));
  std::thread t4(receiver, std::ref(*client_), std::ref(client_good));
  t1.join(), t2.join(), t3.join(), t4.join();
  EXPECT_EQ(server_good.load(), kCount);
  EXPECT_EQ(client_good.load(), kCount);
}

// A peer process dies after sending part of a large message: the receiver gets a
// "disconnected" error that says so, instead of waiting forever.
TEST_P(ConformanceTest, peer_killed_mid_message_fails_the_receiver_with_disconnected) {
  expect_peer_killed_mid_message_reported(false);
}

// The same with a message to the peer still unread when it dies: a stream socket is then reset
// rather than closed, and the receiver must still say that the peer went mid-message.
TEST_P(ConformanceTest, peer_killed_mid_message_with_unread_input_fails_the_receiver_mid_message) {
  expect_peer_killed_mid_message_reported(true);
}

TEST_P(ConformanceTest, closed_peer_fails_recv_and_send_with_disconnected_not_a_signal) {
  connect_pair();
  server_.reset();
  try {
    client_->recv();
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kDisconnected) << e.what();
  }
  // Sending into a dead connection must fail (EPIPE), never raise SIGPIPE in the process.
  const auto data = pattern(1 << 20, 5);
  bool failed = false;
  for (int i = 0; i < 64 && !failed; ++i) {
    try {
      send_one(*client_, data);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kDisconnected) << e.what();
      failed = true;
    }
  }
  EXPECT_TRUE(failed);
}

TEST_P(ConformanceTest, connection_refused_fails_at_once_with_disconnected) {
  auto communicator = GetParam().unreachable();
  const auto start = std::chrono::steady_clock::now();
  try {
    communicator->connect(5s);
    FAIL() << "nothing listens there";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kDisconnected) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}

TEST_P(ConformanceTest, recv_with_timeout_gives_up_and_the_connection_still_works) {
  connect_pair();
  try {
    server_->recv(50ms);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kTimedOut) << e.what();
  }
  const auto data = pattern(100, 1);
  send_one(*client_, data);
  EXPECT_EQ(server_->recv(1s).size(), 100u);
}

TEST_P(ConformanceTest, shutdown_wakes_a_blocked_receiver) {
  connect_pair();
  std::atomic<int> kind{0};
  std::thread blocked([&] {
    try {
      client_->recv();
    } catch (const Error& e) {
      kind = static_cast<int>(e.kind());
    }
  });
  std::this_thread::sleep_for(50ms);
  client_->shutdown();
  blocked.join();
  EXPECT_EQ(kind.load(), static_cast<int>(ErrorKind::kDisconnected));
  EXPECT_THROW(server_->recv(), Error);  // the peer sees the end too
}

TEST_P(ConformanceTest, message_over_the_receivers_limit_is_rejected_as_invalid_input) {
  connect_pair(4096);
  const auto big = pattern(5000, 1);
  send_one(*client_, big);
  try {
    server_->recv();
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput) << e.what();
  }
}

// The backend keeps a small bound until a client has completed its handshake, then raises it:
// the bound applies from the next message on, in both directions of change.
TEST_P(ConformanceTest, set_max_message_lowers_and_raises_the_bound_between_messages) {
  connect_pair();
  server_->set_max_message(4096);
  const auto small = pattern(4096, 1);
  send_one(*client_, small);
  EXPECT_EQ(server_->recv(5s).size(), small.size());

  server_->set_max_message(size_t{8} << 20);
  const auto big = pattern(size_t{8} << 20, 2);
  std::thread sender([&] { send_one(*client_, big); });  // streams while the server receives
  const ByteView got = server_->recv(30s);
  EXPECT_TRUE(got.size() == big.size() && std::equal(big.begin(), big.end(), got.begin()));
  sender.join();

  server_->set_max_message(4096);
  const auto over = pattern(4097, 3);
  send_one(*client_, over);
  try {
    server_->recv(5s);
    FAIL() << "a message over the lowered bound was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput) << e.what();
    EXPECT_NE(std::string(e.what()).find("exceeds the limit of 4096"), std::string::npos)
        << e.what();
  }
}

// Registered memory (the zero-copy path of rdma, a no-op on streams) sends what it held when
// send() was called, and may be reused as soon as send() returns.
TEST_P(ConformanceTest, registered_memory_is_sent_intact_and_reusable_after_send) {
  connect_pair();
  auto buffer = pattern(size_t{3} << 20, 77);
  const auto original = buffer;
  client_->register_memory(buffer.data(), buffer.size());
  std::vector<std::byte> received;
  std::thread receiver([&] {
    for (int i = 0; i < 2; ++i) {
      const ByteView m = server_->recv();
      if (i == 0) received.assign(m.begin(), m.end());
    }
  });
  const auto head = pattern(40, 1);
  const ByteView pieces[] = {head, buffer};
  client_->send(pieces);
  std::fill(buffer.begin(), buffer.end(), std::byte{0});  // reused at once
  send_one(*client_, buffer);
  receiver.join();
  ASSERT_EQ(received.size(), head.size() + original.size());
  EXPECT_TRUE(std::equal(head.begin(), head.end(), received.begin()));
  EXPECT_TRUE(std::equal(original.begin(), original.end(), received.begin() + head.size()));
}

// Memory unregistered, unmapped and mapped again at the same address is sent with its new
// contents: a transport that pinned the old pages for zero-copy sends (rdma) has let them go.
// The stubs do this with page-locked memory freed and allocated again (cudaFreeHost, then
// cudaMallocHost), which the kernel often places where the old one was.
TEST_P(ConformanceTest, memory_unregistered_and_mapped_again_is_sent_with_its_new_contents) {
  connect_pair();
  constexpr size_t kBytes = size_t{1} << 20;
  void* const at =
      ::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(at, MAP_FAILED);
  const std::span<std::byte> memory(static_cast<std::byte*>(at), kBytes);
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    const auto contents = pattern(kBytes, seed);
    std::copy(contents.begin(), contents.end(), memory.begin());
    client_->register_memory(at, kBytes);
    client_->register_memory(at, kBytes / 2);  // a second range on the same first pages
    std::thread sender([&] { send_one(*client_, memory); });  // over a ring smaller than it
    const ByteView got = server_->recv(5s);
    sender.join();
    ASSERT_EQ(got.size(), kBytes);
    EXPECT_TRUE(std::equal(got.begin(), got.end(), contents.begin())) << "round " << seed;
    client_->unregister_memory(at, kBytes / 2);
    client_->unregister_memory(at, kBytes);
    ASSERT_EQ(::munmap(at, kBytes), 0);
    ASSERT_EQ(
        ::mmap(at, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0),
        at);
  }
  ::munmap(at, kBytes);
}

TEST_P(ConformanceTest, a_listener_serves_many_clients_one_after_another) {
  served_ = GetParam().serve(kLimit);
  for (int i = 0; i < 20; ++i) {
    std::unique_ptr<Connection> server;
    std::thread accepter([&] { server = served_.listener->accept(); });
    auto client = served_.client->connect(5s);
    accepter.join();
    const auto data = pattern(10 + i, i);
    send_one(*client, data);
    EXPECT_EQ(server->recv().size(), data.size());
  }
}

INSTANTIATE_TEST_SUITE_P(AllTransports, ConformanceTest, ::testing::ValuesIn(transport_cases()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace gvirtus::testing
