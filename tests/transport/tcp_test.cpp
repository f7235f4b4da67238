// Behaviour specific to the tcp communicator: address families, names and connect bounds.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <thread>

#include "common/error.h"
#include "common/unique_fd.h"
#include "communicators/tcp/tcp_communicator.h"

namespace gvirtus {
namespace {

using namespace std::chrono_literals;

uint16_t port_of(const Listener& listener) {
  const std::string url = listener.local_name();
  return static_cast<uint16_t>(std::stoi(url.substr(url.rfind(':') + 1)));
}

void expect_round_trip(const std::string& listen_host, const std::string& connect_host) {
  auto listener = make_tcp_communicator({listen_host, 0})->serve();
  std::unique_ptr<Connection> server;
  std::thread accepter([&] { server = listener->accept(); });
  auto client = make_tcp_communicator({connect_host, port_of(*listener)})->connect(5s);
  accepter.join();
  const std::string text = "hello over " + connect_host;
  const ByteView piece(reinterpret_cast<const std::byte*>(text.data()), text.size());
  client->send(std::span(&piece, 1));
  const ByteView got = server->recv();
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(got.data()), got.size()), text);
}

bool ipv6_loopback_available() {
  UniqueFd fd(::socket(AF_INET6, SOCK_STREAM, 0));
  if (!fd.valid()) return false;
  sockaddr_in6 addr{};
  addr.sin6_family = AF_INET6;
  addr.sin6_addr = in6addr_loopback;
  return ::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
}

TEST(Tcp, ipv4_loopback) {
  expect_round_trip("127.0.0.1", "127.0.0.1");
}

TEST(Tcp, ipv6_loopback_with_and_without_brackets) {
  if (!ipv6_loopback_available()) GTEST_SKIP() << "this machine has no IPv6 loopback (::1)";
  expect_round_trip("::1", "::1");
  expect_round_trip("[::1]", "[::1]");
}

TEST(Tcp, host_names_are_resolved) {
  expect_round_trip("127.0.0.1", "localhost");
}

TEST(Tcp, listener_reports_the_port_it_got) {
  auto listener = make_tcp_communicator({"127.0.0.1", 0})->serve();
  EXPECT_GT(port_of(*listener), 0);
  EXPECT_EQ(listener->local_name().rfind("tcp://127.0.0.1:", 0), 0u);
}

TEST(Tcp, listening_on_a_taken_port_fails_with_the_address) {
  auto first = make_tcp_communicator({"127.0.0.1", 0})->serve();
  const uint16_t port = port_of(*first);
  try {
    make_tcp_communicator({"127.0.0.1", port})->serve();
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(std::to_string(port)), std::string::npos) << e.what();
  }
}

TEST(Tcp, unresolvable_host_is_a_clear_error) {
  try {
    make_tcp_communicator({"no-such-host.invalid", 1})->connect(2s);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no-such-host.invalid"), std::string::npos) << e.what();
  }
}

// A listener whose accept queue is full drops further connection attempts, so a connect there
// can only end by its timeout: the bound must hold.
TEST(Tcp, connect_is_bounded_by_its_timeout) {
  UniqueFd full(::socket(AF_INET, SOCK_STREAM, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(full.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(full.get(), 0), 0);
  socklen_t len = sizeof addr;
  ::getsockname(full.get(), reinterpret_cast<sockaddr*>(&addr), &len);
  auto communicator = make_tcp_communicator({"127.0.0.1", ntohs(addr.sin_port)});
  std::vector<std::unique_ptr<Connection>> queued;
  bool timed_out = false;
  for (int i = 0; i < 8 && !timed_out; ++i) {
    const auto start = std::chrono::steady_clock::now();
    try {
      queued.push_back(communicator->connect(300ms));
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kTimedOut) << e.what();
      EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
      timed_out = true;
    }
  }
  EXPECT_TRUE(timed_out) << "the accept queue never filled";
}

}  // namespace
}  // namespace gvirtus
