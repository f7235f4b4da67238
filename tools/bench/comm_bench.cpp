#include "comm_bench.h"

#include <poll.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <memory>

#include "common/error.h"

namespace gvirtus::bench {
namespace {

constexpr std::chrono::milliseconds kSetupTimeout{10'000};
constexpr int kAcceptPollMs = 50;
// Headroom over the largest payload, so the receive bound never rejects a measured message.
constexpr size_t kMessageSlack = 4096;

// A connection seen as a message channel. Sends are single pieces; the server end echoes the
// view recv() returned, straight out of the transport's receive buffer. It keeps the objects the
// connection came from alive, in case a transport ties a connection to them.
class ConnectionChannel final : public MessageChannel {
 public:
  ConnectionChannel(std::unique_ptr<Connection> connection, std::shared_ptr<void> origin)
      : origin_(std::move(origin)), connection_(std::move(connection)) {}

  void send(ByteView data) override {
    const ByteView pieces[] = {data};
    connection_->send(pieces);
  }

  ByteView recv(size_t expected) override {
    const ByteView message = connection_->recv();
    if (message.size() != expected) {
      raise(ErrorKind::kFailed, "received a message of " + std::to_string(message.size()) +
                                    " bytes from " + connection_->peer_name() + ", expected " +
                                    std::to_string(expected));
    }
    return message;
  }

  void shutdown() override { connection_->shutdown(); }

  void prepare(const void* addr, size_t bytes) override {
    connection_->register_memory(addr, bytes);
  }

 private:
  std::shared_ptr<void> origin_;  // declared first: outlives the connection
  std::unique_ptr<Connection> connection_;
};

// Accepts one connection, polling so that it gives up when `give_up` is set (the client end
// failed to connect) or after kSetupTimeout, instead of blocking forever in accept().
std::unique_ptr<Connection> accept_one(Listener& listener, const std::atomic<bool>& give_up) {
  const auto deadline = std::chrono::steady_clock::now() + kSetupTimeout;
  while (!give_up.load()) {
    if (std::chrono::steady_clock::now() >= deadline) {
      raise(ErrorKind::kTimedOut, "no client connected to " + listener.local_name() + " within " +
                                      std::to_string(kSetupTimeout.count()) + " ms");
    }
    pollfd p{listener.wait_fd(), POLLIN, 0};
    if (::poll(&p, 1, kAcceptPollMs) > 0) return listener.accept();
  }
  return nullptr;
}

}  // namespace

ChannelPair connect_comm_pair(const BenchTransport& transport, size_t largest) {
  const size_t max_message = std::max(kDefaultMaxMessageBytes, largest + kMessageSlack);
  // Communicators and listener are shared by both channels and destroyed after them.
  struct Origin {
    std::unique_ptr<Communicator> server_end;
    std::unique_ptr<Listener> listener;
    std::unique_ptr<Communicator> client_end;
  };
  auto origin = std::make_shared<Origin>();
  origin->server_end = make_bench_communicator(transport, transport.server_endpoint, max_message);
  origin->listener = origin->server_end->serve();
  origin->client_end = make_bench_communicator(
      transport, transport.client_endpoint(origin->listener->local_name()), max_message);

  // Accept and connect run at once: a transport may need both ends to talk during setup.
  std::atomic<bool> give_up{false};
  Listener& listener = *origin->listener;
  auto accepted = std::async(std::launch::async, [&] { return accept_one(listener, give_up); });
  std::unique_ptr<Connection> client_connection;
  try {
    client_connection = origin->client_end->connect(kSetupTimeout);
  } catch (...) {
    give_up = true;
    accepted.wait();
    throw;
  }
  std::unique_ptr<Connection> server_connection = accepted.get();
  return {std::make_unique<ConnectionChannel>(std::move(client_connection), origin),
          std::make_unique<ConnectionChannel>(std::move(server_connection), origin)};
}

}  // namespace gvirtus::bench
