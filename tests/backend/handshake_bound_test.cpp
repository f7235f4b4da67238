// Until a client has completed the handshake (and authenticated, where a secret is configured)
// its worker accepts only frames of kHandshakeMaxFrameBytes: a larger one is refused from its
// length header, before its body is buffered, and ends that session at once, while other
// sessions go on. After the handshake the bound is max_frame_bytes again. The client bounds a
// backend's frames the same way until the backend has proven itself.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "common/error.h"
#include "common/frame.h"
#include "common/unique_fd.h"
#include "common/wire.h"
#include "communicators/factory.h"
#include "frontend/client.h"
#include "protocol/core_calls.h"
#include "protocol/handshake.h"
#include "support/backend_process.h"
#include "support/core_calls.h"

namespace gvirtus::testing {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

// What the backend logs when a frame before the handshake is over the bound.
constexpr const char* kRefusal =
    "exceeds the limit of 65536, the bound on frames until the handshake completes";
static_assert(kHandshakeMaxFrameBytes == 65536, "kRefusal names the bound");

// A secret file (mode 0600, as the backend requires), removed at the end.
class SecretFile {
 public:
  SecretFile() {
    char tmpl[] = "/tmp/gvirtus-bound-XXXXXX";
    const int fd = ::mkstemp(tmpl);
    path_ = tmpl;
    const std::string secret = "c2VjcmV0IGZvciB0aGUgaGFuZHNoYWtlIGJvdW5kIHRlc3Q=\n";
    (void)!::write(fd, secret.data(), secret.size());
    ::close(fd);
  }
  ~SecretFile() { std::remove(path_.c_str()); }
  std::string json() const {
    return R"("secret_file":")" + path_ + R"(","secure_application":true)";
  }
  // `config` with this secret, insisting on authentication.
  Config with_secret(Config config) const {
    config.secret_file = path_;
    config.secure_application = true;
    return config;
  }

 private:
  std::string path_;
};

bool logged(const BackendProcess& backend, const std::string& text) {
  return eventually(5000, [&] { return backend.log().find(text) != std::string::npos; });
}

// A frame of `bytes` sent at `start` before the handshake was refused within 3 s, with the
// reason logged, and only its session ended: the other one (`survivor`) goes on.
void expect_refused_at_once_and_alone(const BackendProcess& backend, Client& survivor,
                                      Clock::time_point start, uint64_t bytes) {
  EXPECT_LT(Clock::now() - start, 3s);
  EXPECT_TRUE(logged(backend, "message of " + std::to_string(bytes) + " bytes")) << backend.log();
  EXPECT_THAT(backend.log(), HasSubstr(kRefusal));
  EXPECT_TRUE(eventually(5000, [&] { return backend.workers().size() == 1; }));
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(ping(survivor, std::to_string(i)));
}

// A plain tcp connection to the backend, with none of gvirtus's framing done for us.
UniqueFd raw_connect(uint16_t port) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    throw std::runtime_error("connect to the test backend failed");
  }
  return fd;
}

// Waits up to `ms` for the peer to close `fd` (end of file or a reset); true if it did.
bool closed_by_peer(int fd, int ms) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(ms);
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char byte;
    const ssize_t got = ::recv(fd, &byte, 1, 0);
    if (got == 0 || (got < 0 && errno == ECONNRESET)) return true;
  }
}

// A client that authenticates over tcp sends, as its first frame, only a length header and a
// frame header that claim 200 MiB, then nothing: with the bound it is refused at once instead of
// holding its worker (and up to 200 MiB of buffer) for the 10 s handshake bound.
TEST(HandshakeBound, a_first_frame_claiming_200_MiB_is_refused_from_its_header_at_once) {
  SecretFile secret;
  BackendProcess backend(secret.json());
  Client survivor(secret.with_secret(backend.client_config()), {});
  ASSERT_TRUE(ping(survivor));

  const UniqueFd fd = raw_connect(backend.port());
  constexpr uint64_t kClaimed = uint64_t{200} << 20;
  FrameHeader h;
  h.flags = kFlagRequest;
  h.call_id = core::call_id(core::Fn::kHello);
  h.payload_bytes = static_cast<uint32_t>(kClaimed - kFrameHeaderBytes);
  const EncodedHeader header = encode_header(h);
  std::byte length[sizeof(uint64_t)];
  store_le<uint64_t>(length, kClaimed);
  const auto start = Clock::now();
  ASSERT_EQ(::send(fd.get(), length, sizeof length, MSG_NOSIGNAL),
            static_cast<ssize_t>(sizeof length));
  ASSERT_EQ(::send(fd.get(), header.view().data(), header.view().size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(header.view().size()));

  EXPECT_TRUE(closed_by_peer(fd.get(), 5000)) << backend.log();
  expect_refused_at_once_and_alone(backend, survivor, start, 209715200);
}

// The client bounds a backend's frames the same way until the backend has proven itself: a fake
// backend that answers the hello with a length claiming 200 MiB is refused from that length,
// at once, instead of being read until the connect bound runs out.
TEST(HandshakeBound, a_client_refuses_a_hello_reply_over_the_bound_from_its_header) {
  const UniqueFd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::bind(listener.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(listener.get(), 1), 0);
  ASSERT_EQ(::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&addr), &len), 0);
  std::thread fake_backend([&] {
    const UniqueFd peer(::accept(listener.get(), nullptr, nullptr));
    char hello[512];
    (void)!::recv(peer.get(), hello, sizeof hello, 0);
    std::byte length[sizeof(uint64_t)];
    store_le<uint64_t>(length, uint64_t{200} << 20);
    (void)!::send(peer.get(), length, sizeof length, MSG_NOSIGNAL);
    closed_by_peer(peer.get(), 10000);  // then nothing, until the client hangs up
  });
  const Config config = parse_config(
      R"({"communicator":[{"endpoint":{"suite":"tcp/ip","protocol":"tcp",)"
      R"("server_address":"127.0.0.1","port":")" +
          std::to_string(ntohs(addr.sin_port)) + R"("},"plugins":[]}],"connect_timeout_ms":5000})",
      "<fake backend>");
  Client client(config, {});
  const auto start = Clock::now();
  try {
    client.connect();
    ADD_FAILURE() << "the client took a hello reply over the bound";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput) << e.what();
    EXPECT_THAT(e.what(), HasSubstr("exceeds the limit of 65536"));
  }
  EXPECT_LT(Clock::now() - start, 3s);
  fake_backend.join();
}

class HandshakeBoundOn : public ::testing::TestWithParam<TestTransport> {};

// A first message over the bound but under max_frame_bytes (1 MiB, whole), from a client that
// skips the hello, over each transport: the worker ends the session without waiting for more,
// the client sees the connection end, and another session goes on. No secret is configured here:
// the bound holds whether or not clients must authenticate.
TEST_P(HandshakeBoundOn, a_first_frame_over_the_bound_ends_only_its_session_at_once) {
  BackendProcess backend("", "[]", GetParam());
  Client survivor(backend.client_config(), {});
  ASSERT_TRUE(ping(survivor));

  const Config config = backend.client_config();
  auto connection = make_communicator(config.endpoints.at(0))->connect(3s);
  const std::string body(1 << 20, 'x');
  const ByteView piece(reinterpret_cast<const std::byte*>(body.data()), body.size());
  const auto start = Clock::now();
  try {
    connection->send(std::span(&piece, 1));
  } catch (const Error& e) {  // the worker may hang up while the body is still being sent
    EXPECT_EQ(e.kind(), ErrorKind::kDisconnected) << e.what();
  }
  try {
    connection->recv(5s);
    ADD_FAILURE() << "the backend answered a frame over the bound";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kDisconnected) << e.what();  // closed, not timed out
  }
  expect_refused_at_once_and_alone(backend, survivor, start, 1048576);
}

// Once authenticated, a session's frames are bounded by max_frame_bytes (256 MiB by default)
// again: an 8 MiB ping goes and comes back whole.
TEST_P(HandshakeBoundOn, after_authentication_frames_far_above_the_bound_are_served) {
  SecretFile secret;
  BackendProcess backend(
      BackendOptions{.extra_json = secret.json(), .plugins = "[]", .transport = GetParam()});
  Client client(secret.with_secret(backend.client_config()), {});
  ASSERT_TRUE(ping(client));
  const std::string big(size_t{8} << 20, 'B');
  ASSERT_GT(big.size(), 100 * kHandshakeMaxFrameBytes);
  EXPECT_TRUE(ping(client, big)) << backend.log();
  EXPECT_TRUE(ping(client, "after")) << backend.log();
  EXPECT_THAT(backend.log(), ::testing::Not(HasSubstr("exceeds the limit")));
}

INSTANTIATE_TEST_SUITE_P(Transports, HandshakeBoundOn,
                         ::testing::Values(TestTransport::tcp, TestTransport::shm),
                         [](const auto& info) { return std::string(to_string(info.param)); });

}  // namespace
}  // namespace gvirtus::testing
