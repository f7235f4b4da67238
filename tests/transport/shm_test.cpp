// The shm communicator beyond the conformance suite: ring mechanics, back-pressure, streaming
// through a small ring, a million-message stress, killed peers in both directions and both
// rendezvous modes, configuration errors, and leaks over many sessions.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dirent.h>
#include <fcntl.h>
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <new>
#include <thread>
#include <vector>

#include "common/config.h"
#include "common/error.h"
#include "common/unique_fd.h"
#include "common/wire.h"
#include "communicators/factory.h"
#include "communicators/shm/shm_connection.h"
#include "communicators/shm/shm_futex.h"
#include "communicators/shm/shm_layout.h"
#include "communicators/shm/shm_ring.h"
#include "transport/transport_cases.h"

namespace gvirtus::testing {
namespace {

using namespace std::chrono_literals;

std::unique_ptr<Communicator> from_config(const std::string& endpoint,
                                          size_t max = size_t{64} << 20) {
  const Config config =
      parse_config(R"({"communicator":[{"endpoint":)" + endpoint + R"(,"plugins":[]}]})", "<test>");
  return make_communicator(config.endpoints.at(0), max);
}

std::string unique(const char* kind) {
  static std::atomic<int> counter{0};
  return std::string("gvirtus-shmtest-") + kind + "-" + std::to_string(::getpid()) + "-" +
         std::to_string(counter++);
}

// One endpoint of each mode, removed (file mode) when the test ends.
struct Endpoint {
  std::string json;
  std::string file;  // file mode only
  ~Endpoint() {
    if (!file.empty()) ::unlink(file.c_str());
  }
};

std::unique_ptr<Endpoint> socket_endpoint(uint64_t ring_bytes, const std::string& extra = "") {
  auto e = std::make_unique<Endpoint>();
  e->json = R"({"suite":"shm","protocol":"shm","path":"@)" + unique("sock") + R"(","ring_bytes":)" +
            std::to_string(ring_bytes) + extra + "}";
  return e;
}

std::unique_ptr<Endpoint> file_endpoint(uint64_t ring_bytes) {
  auto e = std::make_unique<Endpoint>();
  e->file = "/dev/shm/" + unique("file");
  e->json = R"({"suite":"shm","protocol":"shm","file":")" + e->file + R"(","ring_bytes":)" +
            std::to_string(ring_bytes) + R"(,"dead_after_ms":1500})";
  return e;
}

std::unique_ptr<Endpoint> make_endpoint(bool file_mode, uint64_t ring_bytes) {
  return file_mode ? file_endpoint(ring_bytes) : socket_endpoint(ring_bytes);
}

struct Pair {
  std::unique_ptr<Listener> listener;
  std::unique_ptr<Connection> server;
  std::unique_ptr<Connection> client;
};

Pair connect_pair(const Endpoint& e, size_t max = size_t{64} << 20) {
  Pair p;
  p.listener = from_config(e.json, max)->serve();
  auto client_end = from_config(e.json, max);
  std::thread accepter([&] { p.server = p.listener->accept(); });
  p.client = client_end->connect(5s);
  accepter.join();
  return p;
}

int count_fds() {
  int n = 0;
  DIR* dir = ::opendir("/proc/self/fd");
  while (::readdir(dir) != nullptr) ++n;
  ::closedir(dir);
  return n;
}

int count_shm_mappings() {
  std::ifstream maps("/proc/self/maps");
  int n = 0;
  for (std::string line; std::getline(maps, line);) {
    if (line.find("gvirtus-shm") != std::string::npos ||
        line.find("gvirtus-shmtest") != std::string::npos) {
      ++n;
    }
  }
  return n;
}

// A segment with rings of `ring_bytes` in this process's memory, header initialised as the
// creator leaves it, for tests of the rings alone.
class LocalSegment {
 public:
  explicit LocalSegment(uint64_t ring_bytes)
      : ring_bytes_(ring_bytes), bytes_(shm::segment_bytes(ring_bytes) + 64) {
    base_ = bytes_.data() + (64 - reinterpret_cast<uintptr_t>(bytes_.data()) % 64) % 64;
    shm::init_header(base_, ring_bytes);
  }
  shm::SegmentHeader* header() const { return static_cast<shm::SegmentHeader*>(base_); }
  // The two ends of ring `r`.
  shm::RingWriter writer(int r) const {
    return {header()->rings[r], shm::ring_data(base_, ring_bytes_, r), ring_bytes_};
  }
  shm::RingReader reader(int r) const {
    return {header()->rings[r], shm::ring_data(base_, ring_bytes_, r), ring_bytes_};
  }

 private:
  uint64_t ring_bytes_;
  std::vector<std::byte> bytes_;
  void* base_;
};

TEST(ShmRing, wraps_around_many_times_and_keeps_every_byte_in_order) {
  constexpr uint64_t kRing = 4096;
  LocalSegment segment(kRing);
  auto* header = segment.header();
  shm::RingWriter writer = segment.writer(0);
  shm::RingReader reader = segment.reader(0);
  const auto data = pattern(1 << 20, 7);
  std::vector<std::byte> out(data.size());
  size_t written = 0, read = 0;
  // Odd chunk sizes put every record boundary somewhere new relative to the wrap point.
  for (size_t chunk = 1; read < data.size(); chunk = chunk * 7 % 3001 + 1) {
    const size_t w = std::min<size_t>({chunk, writer.writable(), data.size() - written});
    writer.write(data.data() + written, w);
    written += w;
    writer.publish();
    const size_t r = std::min<size_t>(reader.readable(), chunk * 3 % 2048 + 1);
    reader.read(out.data() + read, r);
    read += r;
    reader.release();
  }
  EXPECT_EQ(out, data);
  EXPECT_GT(header->rings[0].head.load(), 200 * kRing);  // it wrapped hundreds of times
}

TEST(ShmRing, a_peer_counter_out_of_range_is_invalid_input_not_a_crash) {
  constexpr uint64_t kRing = 4096;
  LocalSegment segment(kRing);
  auto* header = segment.header();
  shm::RingReader reader = segment.reader(0);
  header->rings[0].head.store(kRing * 5);  // a "writer" claiming more than a ring ahead
  try {
    reader.readable();
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput) << e.what();
  }
}

// The peer writes the segment's counters before this end is built (a hostile client can, as
// soon as it holds the segment): this end starts from the empty ring it set up, and judges what it
// finds against that.
TEST(ShmRing, an_end_ignores_counters_it_finds_in_the_segment_and_checks_the_peers) {
  constexpr uint64_t kRing = 4096;
  LocalSegment segment(kRing);
  auto* header = segment.header();
  header->rings[0].head.store(2 * kRing);  // as if two rings' worth were published
  header->rings[0].tail.store(0);
  header->rings[1].head.store(5 * kRing);
  header->rings[1].tail.store(kRing);
  shm::RingWriter writer = segment.writer(0);
  EXPECT_EQ(writer.writable(), kRing) << "room is never more than the ring";
  shm::RingReader reader = segment.reader(1);
  try {
    const uint64_t readable = reader.readable();
    FAIL() << readable << " bytes readable from a writer 5 rings ahead";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput) << e.what();
  }
  // The writer fills its ring; a peer that "releases" more than was published is caught.
  const auto data = pattern(kRing, 2);
  writer.write(data.data(), data.size());
  writer.publish();
  header->rings[0].tail.store(3 * kRing);
  try {
    const uint64_t room = writer.writable();
    FAIL() << room << " bytes of room after the reader released bytes never written";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput) << e.what();
  }
}

class ShmModes : public ::testing::TestWithParam<bool> {};  // true: file mode

// The header is in memory the peer can write at any time. A peer that rewrites the ring size
// mid-session changes neither where this side's arena is nor how its rings work.
TEST_P(ShmModes, a_peer_that_rewrites_the_ring_size_in_the_header_changes_nothing_here) {
  constexpr uint64_t kRing = 4096;
  auto e = make_endpoint(GetParam(), kRing);
  if (GetParam()) {  // file mode: give the file an arena, as an ivshmem device's size would
    UniqueFd fd(::open(e->file.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600));
    ASSERT_TRUE(fd.valid());
    ASSERT_EQ(::ftruncate(fd.get(), 1 << 20), 0);
  }
  Pair p = connect_pair(*e);
  const std::span<std::byte> arena = p.server->shared_memory();
  ASSERT_FALSE(arena.empty());
  auto* header = reinterpret_cast<shm::SegmentHeader*>(p.client->shared_memory().data() -
                                                       shm::segment_bytes(kRing));
  ASSERT_EQ(header->ring_bytes, kRing);
  for (const uint64_t forged : {uint64_t{1} << 30, uint64_t{0}, uint64_t{1} << 63}) {
    header->ring_bytes = forged;
    const std::span<std::byte> now = p.server->shared_memory();
    EXPECT_EQ(now.data(), arena.data()) << forged;
    EXPECT_EQ(now.size(), arena.size()) << forged;
    // Messages larger than the ring still stream through it both ways, intact.
    const auto up = pattern(3 * kRing + 5, static_cast<int>(forged % 7));
    std::thread sender([&] { send_one(*p.client, up); });
    const ByteView got = p.server->recv(5s);
    sender.join();
    EXPECT_TRUE(std::equal(got.begin(), got.end(), up.begin(), up.end())) << forged;
    const auto down = pattern(3 * kRing + 9, 1);
    std::thread replier([&] { send_one(*p.server, down); });
    const ByteView back = p.client->recv(5s);
    replier.join();
    EXPECT_TRUE(std::equal(back.begin(), back.end(), down.begin(), down.end())) << forged;
  }
}

TEST_P(ShmModes, a_full_ring_blocks_the_writer_until_the_reader_drains_without_loss) {
  auto e = make_endpoint(GetParam(), 4096);
  Pair p = connect_pair(*e);
  constexpr int kMessages = 64;
  std::atomic<int> sent{0};
  std::thread writer([&] {
    for (int i = 0; i < kMessages; ++i) {
      send_one(*p.client, pattern(3000, i));
      sent.fetch_add(1);
    }
  });
  std::this_thread::sleep_for(200ms);
  EXPECT_LE(sent.load(), 2) << "a 4 KiB ring cannot hold more than one 3000-byte message";
  for (int i = 0; i < kMessages; ++i) {
    const ByteView m = p.server->recv(5s);
    const auto expected = pattern(3000, i);
    ASSERT_TRUE(std::equal(m.begin(), m.end(), expected.begin(), expected.end())) << i;
  }
  writer.join();
  EXPECT_EQ(sent.load(), kMessages);
}

TEST_P(ShmModes, a_message_much_larger_than_the_ring_streams_through_it) {
  auto e = make_endpoint(GetParam(), 4096);
  Pair p = connect_pair(*e);
  const auto big = pattern(size_t{24} << 20, 3);  // 6144 times the ring
  std::thread writer([&] {
    const auto head = pattern(16, 1);
    const ByteView pieces[] = {head, big};
    p.client->send(pieces);
  });
  const ByteView m = p.server->recv();
  writer.join();
  ASSERT_EQ(m.size(), 16 + big.size());
  EXPECT_TRUE(std::equal(big.begin(), big.end(), m.begin() + 16));
}

// A peer killed (SIGKILL) in the middle of sending a message: the receiver fails with
// kDisconnected within a bound, whichever side died.
void kill_sender_mid_message(const Endpoint& e, bool server_dies) {
  auto listener = from_config(e.json)->serve();
  auto client_end = from_config(e.json);
  int started[2];
  ASSERT_EQ(::pipe(started), 0);
  const auto data = pattern(size_t{16} << 20, 5);  // far more than the 256 KiB ring
  const pid_t child = ::fork();
  if (child == 0) {
    try {
      auto c = server_dies ? listener->accept() : client_end->connect(5s);
      (void)!::write(started[1], "s", 1);
      send_one(*c, data);
    } catch (...) {
    }
    ::_exit(0);
  }
  std::unique_ptr<Connection> receiver = server_dies ? client_end->connect(5s) : listener->accept();
  char byte;
  ASSERT_EQ(::read(started[0], &byte, 1), 1);
  std::this_thread::sleep_for(100ms);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ::close(started[0]);
  ::close(started[1]);
  const auto start = std::chrono::steady_clock::now();
  try {
    receiver->recv();
    FAIL() << "a message from a killed peer cannot be complete";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kDisconnected) << e.what();
    EXPECT_NE(std::string(e.what()).find("mid-message"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}

TEST_P(ShmModes, client_killed_mid_message_fails_the_server_with_disconnected) {
  kill_sender_mid_message(*make_endpoint(GetParam(), 256 << 10), false);
}

TEST_P(ShmModes, server_killed_mid_message_fails_the_client_with_disconnected) {
  kill_sender_mid_message(*make_endpoint(GetParam(), 256 << 10), true);
}

TEST_P(ShmModes, many_sessions_leak_no_fd_and_no_mapping) {
  auto e = make_endpoint(GetParam(), 64 << 10);
  auto listener = from_config(e->json)->serve();
  auto client_end = from_config(e->json);
  const int fds = count_fds();
  const int maps = count_shm_mappings();
  const int cycles = GetParam() ? 50 : 300;
  for (int i = 0; i < cycles; ++i) {
    std::unique_ptr<Connection> server;
    std::thread accepter([&] { server = listener->accept(); });
    auto client = client_end->connect(5s);
    accepter.join();
    send_one(*client, pattern(100, i));
    ASSERT_EQ(server->recv().size(), 100u);
  }
  EXPECT_EQ(count_fds(), fds);
  EXPECT_EQ(count_shm_mappings(), maps);
}

// The receive spin follows the peer (spin_budget.h): answers that come long after the spin shrink
// it to the floor in socket mode, while file mode, whose sleeps are timed, keeps it whole. (How it
// grows back depends on when the peer gets a core, which a test cannot promise; the policy's unit
// tests show it.)
TEST_P(ShmModes, a_slow_peer_shortens_the_receive_spin_in_socket_mode_only) {
  auto e = make_endpoint(GetParam(), 1 << 16);
  Pair p = connect_pair(*e);
  auto& client = dynamic_cast<shm::ShmConnection&>(*p.client);
  const std::chrono::nanoseconds full = client.receive_spin();
  ASSERT_EQ(full, 50us) << "the default spin_us";
  constexpr int kExchanges = 20;  // the spin halves from 50 us to the 1 us floor in 6
  std::thread server([&] {
    for (int i = 0; i < kExchanges; ++i) {
      const ByteView request = p.server->recv(5s);
      const std::vector<std::byte> copy(request.begin(), request.end());
      std::this_thread::sleep_for(3ms);  // a peer at work for much longer than the spin
      send_one(*p.server, copy);
    }
  });
  for (int i = 0; i < kExchanges; ++i) {
    const auto sent = pattern(16, i);
    send_one(*p.client, sent);
    const ByteView back = p.client->recv(5s);
    EXPECT_TRUE(std::equal(back.begin(), back.end(), sent.begin(), sent.end())) << i;
    if (GetParam()) {
      EXPECT_EQ(client.receive_spin(), full) << i;
    }
  }
  server.join();
  EXPECT_EQ(client.receive_spin(),
            GetParam() ? full : std::chrono::nanoseconds(shm::SpinBudget::kFloor));
}

INSTANTIATE_TEST_SUITE_P(Shm, ShmModes, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "file" : "socket"; });

// A million small messages each way at once, each numbered and checksummed.
TEST(ShmStress, a_million_small_messages_each_way_arrive_intact_and_in_order) {
  auto e = socket_endpoint(1 << 20);
  Pair p = connect_pair(*e);
  constexpr uint32_t kCount = 1000000;
  auto sender = [](Connection& c, uint32_t seed) {
    std::byte buf[64];
    for (uint32_t i = 0; i < kCount; ++i) {
      const size_t size = 8 + (i * 7919u + seed) % 56;
      uint32_t sum = 0;
      for (size_t k = 8; k < size; ++k) {
        buf[k] = static_cast<std::byte>(i * 31 + k + seed);
        sum = sum * 31 + uint8_t(buf[k]);
      }
      store_le<uint32_t>(buf, i);
      store_le<uint32_t>(buf + 4, sum);
      send_one(c, ByteView(buf, size));
    }
  };
  auto receiver = [](Connection& c, std::atomic<uint32_t>& good) {
    for (uint32_t i = 0; i < kCount; ++i) {
      const ByteView m = c.recv();
      if (m.size() < 8 || load_le<uint32_t>(m.data()) != i) return;
      uint32_t sum = 0;
      for (size_t k = 8; k < m.size(); ++k) sum = sum * 31 + uint8_t(m[k]);
      if (sum != load_le<uint32_t>(m.data() + 4)) return;
      good.fetch_add(1, std::memory_order_relaxed);
    }
  };
  std::atomic<uint32_t> client_good{0}, server_good{0};
  const auto start = std::chrono::steady_clock::now();
  std::thread t1(sender, std::ref(*p.client), 11u), t2(sender, std::ref(*p.server), 22u);
  std::thread t3(receiver, std::ref(*p.server), std::ref(server_good));
  std::thread t4(receiver, std::ref(*p.client), std::ref(client_good));
  t1.join(), t2.join(), t3.join(), t4.join();
  EXPECT_EQ(server_good.load(), kCount);
  EXPECT_EQ(client_good.load(), kCount);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 20s);
}

void expect_config_error(const std::string& fields, const std::string& mentions) {
  try {
    from_config(R"({"suite":"shm","protocol":"shm")" + fields + "}");
    FAIL() << fields;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput) << e.what();
    EXPECT_NE(std::string(e.what()).find(mentions), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("<test>: communicator[0].endpoint."), std::string::npos)
        << e.what();
  }
}

TEST(ShmConfig, bad_fields_give_errors_that_name_the_field) {
  expect_config_error(R"(,"ring_bytes":1000)", "ring_bytes: expected a power of two");
  expect_config_error(R"(,"ring_bytes":"lots")", "ring_bytes");
  expect_config_error(R"(,"path":"/tmp/a","file":"/dev/shm/b")", "not both");
  expect_config_error(R"(,"file":"")", "file: expected a file path");
  expect_config_error(R"(,"path":")" + std::string(200, 'x') + "\"", "path: expected");
  expect_config_error(R"(,"dead_after_ms":1)", "dead_after_ms");
  expect_config_error(R"(,"ring_size":4096)", "ring_size: unknown shm field");
  expect_config_error(R"(,"arena_bytes":1000)", "arena_bytes: expected a multiple of 4096");
  expect_config_error(R"(,"file":"/dev/shm/x","arena_bytes":4096)", "arena_bytes: applies to");
}

// The arena is one memory seen by both sides: what one writes the other reads, with no message.
void expect_shared_arena(const Pair& p, uint64_t expected_bytes) {
  const auto server = p.server->shared_memory();
  const auto client = p.client->shared_memory();
  ASSERT_EQ(server.size(), expected_bytes);
  ASSERT_EQ(client.size(), expected_bytes);
  const auto data = pattern(size_t{1} << 20, 7);
  const size_t at = expected_bytes - data.size();  // the far end: the whole span is mapped
  std::memcpy(client.data() + at, data.data(), data.size());
  EXPECT_EQ(std::memcmp(server.data() + at, data.data(), data.size()), 0);
  server[0] = std::byte{0x5a};
  EXPECT_EQ(client[0], std::byte{0x5a});
  // The rings still work beside it.
  const auto message = pattern(3000, 8);
  send_one(*p.client, message);
  const ByteView got = p.server->recv();
  EXPECT_TRUE(std::equal(got.begin(), got.end(), message.begin(), message.end()));
}

TEST(ShmArena, socket_mode_shares_the_configured_arena_beyond_the_rings) {
  auto e = socket_endpoint(1 << 16, R"(,"arena_bytes":67108864)");
  expect_shared_arena(connect_pair(*e), uint64_t{64} << 20);
}

TEST(ShmArena, socket_mode_default_arena_is_4_gib_and_sparse) {
  auto e = socket_endpoint(1 << 16);
  Pair p = connect_pair(*e);
  EXPECT_EQ(p.client->shared_memory().size(), uint64_t{4} << 30);
  expect_shared_arena(p, uint64_t{4} << 30);
}

TEST(ShmArena, arena_bytes_zero_shares_nothing) {
  auto e = socket_endpoint(1 << 16, R"(,"arena_bytes":0)");
  Pair p = connect_pair(*e);
  EXPECT_TRUE(p.client->shared_memory().empty());
  EXPECT_TRUE(p.server->shared_memory().empty());
}

TEST(ShmArena, file_mode_arena_is_the_file_beyond_the_rings) {
  auto e = file_endpoint(1 << 16);
  // As for an ivshmem device: a power-of-two file larger than the rings need.
  {
    UniqueFd fd(::open(e->file.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600));
    ASSERT_TRUE(fd.valid());
    ASSERT_EQ(::ftruncate(fd.get(), 16 << 20), 0);
  }
  expect_shared_arena(connect_pair(*e), (uint64_t{16} << 20) - shm::segment_bytes(1 << 16));
}

TEST(ShmArena, the_client_maps_the_arena_where_the_backend_does_when_it_can) {
  // Two processes, as in real use: the address the backend reports is free in the client.
  auto e = socket_endpoint(1 << 16, R"(,"arena_bytes":1048576)");
  auto listener = from_config(e->json)->serve();
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const pid_t child = ::fork();
  if (child == 0) {
    auto c = from_config(e->json)->connect(5s);
    const auto address = reinterpret_cast<uintptr_t>(c->shared_memory().data());
    (void)!::write(pipe_fds[1], &address, sizeof address);
    c->recv();  // until the parent closes
    ::_exit(0);
  }
  auto server = listener->accept();
  uintptr_t client_address = 0;
  ASSERT_EQ(::read(pipe_fds[0], &client_address, sizeof client_address),
            static_cast<ssize_t>(sizeof client_address));
  EXPECT_EQ(client_address, reinterpret_cast<uintptr_t>(server->shared_memory().data()));
  server.reset();
  int status = 0;
  ::waitpid(child, &status, 0);
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
}

// 16 GiB more address space than this process uses (a sanitizer reserves terabytes up front):
// the rings fit, a 64 GiB arena does not.
void limit_address_space_to_16_gib_more() {
  std::ifstream status("/proc/self/status");
  uint64_t in_use_kib = 0;
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmSize:", 0) == 0) in_use_kib = std::stoull(line.substr(7));
  }
  const rlim_t most = in_use_kib * 1024 + (uint64_t{16} << 30);
  rlimit limit{most, most};
  ::setrlimit(RLIMIT_AS, &limit);
}

TEST(ShmArena, a_client_without_address_space_for_the_arena_connects_without_it) {
  auto e = socket_endpoint(1 << 16, R"(,"arena_bytes":68719476736)");  // 64 GiB
  auto listener = from_config(e->json)->serve();
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const pid_t child = ::fork();
  if (child == 0) {
    limit_address_space_to_16_gib_more();
    uint64_t result = 1;  // 1: could not connect
    try {
      auto c = from_config(e->json)->connect(5s);
      result = c->shared_memory().size() == 0 ? 0 : 2;  // 2: it mapped the arena after all
      send_one(*c, pattern(1000, 3));
      (void)!::write(pipe_fds[1], &result, sizeof result);
      c->recv();  // until the parent closes
    } catch (...) {
      (void)!::write(pipe_fds[1], &result, sizeof result);
    }
    ::_exit(0);
  }
  auto server = listener->accept();
  uint64_t result = 9;
  ASSERT_EQ(::read(pipe_fds[0], &result, sizeof result), static_cast<ssize_t>(sizeof result));
  EXPECT_EQ(result, 0u) << "1: the client could not connect; 2: the arena was mapped";
  if (result == 0) {
    const auto message = pattern(1000, 3);
    const ByteView got = server->recv();
    EXPECT_TRUE(std::equal(got.begin(), got.end(), message.begin(), message.end()));
  }
  server.reset();
  int status = 0;
  ::waitpid(child, &status, 0);
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
}

TEST(ShmArena, a_backend_without_address_space_for_the_arena_serves_without_it) {
  auto e = socket_endpoint(1 << 16, R"(,"arena_bytes":68719476736)");  // 64 GiB
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  if (child == 0) {
    limit_address_space_to_16_gib_more();
    try {
      auto listener = from_config(e->json)->serve();
      (void)!::write(ready[1], "L", 1);
      auto server = listener->accept();
      send_one(*server, pattern(1000, 4));
      server->recv();  // until the parent closes
    } catch (...) {
    }
    ::_exit(0);
  }
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  auto client = from_config(e->json)->connect(5s);
  EXPECT_TRUE(client->shared_memory().empty());
  const auto message = pattern(1000, 4);
  const ByteView got = client->recv(5000ms);
  EXPECT_TRUE(std::equal(got.begin(), got.end(), message.begin(), message.end()));
  client.reset();
  int status = 0;
  ::waitpid(child, &status, 0);
  ::close(ready[0]);
  ::close(ready[1]);
}

TEST(ShmSocket, the_socket_path_is_removed_on_close_and_a_stale_one_is_replaced) {
  const std::string path = "/tmp/" + unique("path") + ".sock";
  const std::string json = R"({"suite":"shm","protocol":"shm","path":")" + path + "\"}";
  {
    // A stale socket, as a killed daemon leaves it: bound, never listening, closed.
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strcpy(addr.sun_path, path.c_str());
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    ::close(fd);
  }
  {
    auto listener = from_config(json)->serve();
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    // One that is in use is not taken over.
    try {
      from_config(json)->serve();
      FAIL() << "two backends on one socket";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("another backend"), std::string::npos) << e.what();
    }
  }
  struct stat st {};
  EXPECT_NE(::stat(path.c_str(), &st), 0) << "the listener left " << path << " behind";
}

TEST(ShmSocket, a_path_that_is_not_a_socket_is_never_removed) {
  const std::string path = "/tmp/" + unique("plain");
  std::ofstream(path) << "keep me";
  try {
    from_config(R"({"suite":"shm","protocol":"shm","path":")" + path + "\"}")->serve();
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not a socket"), std::string::npos) << e.what();
  }
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0);
  ::unlink(path.c_str());
}

// A child process that connects through `client_end`, then only waits to be killed.
pid_t fork_idle_client(Communicator& client_end) {
  const pid_t child = ::fork();
  if (child == 0) {
    try {
      auto c = client_end.connect(5s);
      ::pause();
    } catch (...) {
    }
    ::_exit(0);
  }
  return child;
}

// A peer killed while this side sleeps with nothing in flight: no doorbell rings, the sleep's
// timeout (tens of ms) brings the look at the socket that finds it gone.
TEST(ShmSocket, a_peer_killed_while_this_side_sleeps_is_noticed_within_tens_of_ms) {
  auto e = socket_endpoint(64 << 10);
  auto listener = from_config(e->json)->serve();
  auto client_end = from_config(e->json);
  const pid_t child = fork_idle_client(*client_end);
  auto server = listener->accept();
  std::thread killer([&] {
    std::this_thread::sleep_for(300ms);  // the server sleeps by then, its spin long over
    ::kill(child, SIGKILL);
  });
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(server->recv(), Error);
  const auto took = std::chrono::steady_clock::now() - start;
  killer.join();
  ::waitpid(child, nullptr, 0);
  EXPECT_LT(took, 300ms + 500ms) << "the bound is 40 ms; the rest is slack for a loaded machine";
}

// The futex doorbell across processes: a word in a MAP_SHARED mapping, a sleeper here, the
// waker in a child.
TEST(ShmFutex, a_sleeper_is_woken_from_another_process_long_before_its_timeout) {
  void* page = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(page, MAP_FAILED);
  auto* word = new (page) std::atomic<uint32_t>(1);
  const pid_t child = ::fork();
  if (child == 0) {
    ::usleep(100'000);
    shm::wake_sleeper(*word);
    ::_exit(0);
  }
  const auto start = std::chrono::steady_clock::now();
  shm::FutexWait got = shm::FutexWait::kWoken;
  while (word->load() != 0) got = shm::futex_wait(*word, 1, 20s);
  EXPECT_EQ(got, shm::FutexWait::kWoken);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  ::waitpid(child, nullptr, 0);
  ::munmap(page, 4096);
}

// The doorbell rung between the sleeper's declaration and its wait is not lost: it cleared the
// word, so the wait returns at once instead of sleeping its whole timeout.
TEST(ShmFutex, a_wake_before_the_wait_is_not_lost) {
  std::atomic<uint32_t> word{1};
  shm::wake_sleeper(word);
  EXPECT_EQ(word.load(), 0u);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(shm::futex_wait(word, 1, 10s), shm::FutexWait::kWoken);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_EQ(shm::futex_wait(word, 0, 1ms), shm::FutexWait::kTimedOut);
}

// What an ivshmem BAR in a guest gives (the kernel refuses a futex there): reported, so file
// mode falls back to plain timed sleeps rather than spinning on a failing wait.
TEST(ShmFutex, memory_the_kernel_cannot_wait_on_is_reported_unsupported) {
  void* page = ::mmap(nullptr, 4096, PROT_NONE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(page, MAP_FAILED);
  auto& word = *static_cast<std::atomic<uint32_t>*>(page);  // never touched here: PROT_NONE
  EXPECT_EQ(shm::futex_wait(word, 1, 1ms), shm::FutexWait::kUnsupported);
  EXPECT_FALSE(shm::futex_wake(word));
  ::munmap(page, 4096);
}

TEST(ShmFile, a_second_listener_on_the_same_file_is_refused) {
  auto e = file_endpoint(4096);
  auto listener = from_config(e->json)->serve();
  EXPECT_THROW(from_config(e->json)->serve(), Error);
}

// After a client is killed, the listener resets the segment and serves the next one.
TEST(ShmFile, the_listener_serves_a_new_client_after_one_was_killed) {
  auto e = file_endpoint(64 << 10);
  auto listener = from_config(e->json)->serve();
  auto client_end = from_config(e->json);
  const pid_t child = fork_idle_client(*client_end);
  auto first = listener->accept();
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  EXPECT_THROW(first->recv(), Error);
  first.reset();
  std::unique_ptr<Connection> server;
  std::thread accepter([&] { server = listener->accept(); });
  auto client = client_end->connect(5s);
  accepter.join();
  send_one(*client, pattern(10, 1));
  EXPECT_EQ(server->recv(1s).size(), 10u);
}

}  // namespace
}  // namespace gvirtus::testing
