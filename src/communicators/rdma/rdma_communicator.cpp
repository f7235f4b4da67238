#include "communicators/rdma/rdma_communicator.h"

#include <netdb.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/error.h"
#include "common/log.h"
#include "communicators/rdma/rdma_connection.h"
#include "communicators/rdma/rdma_resources.h"
#include "communicators/rdma/rdma_wire.h"

namespace gvirtus::rdma {
namespace {

constexpr int kAcceptEstablishMs = 5000;  // a client that stalls mid-handshake is dropped
constexpr int kRetries = 7;               // RC transport and RNR retries before an error

std::string url(const RdmaOptions& o) {
  const bool v6 = o.host.find(':') != std::string::npos;
  return "rdma://" + (v6 ? "[" + o.host + "]" : o.host) + ":" + std::to_string(o.port);
}

// getaddrinfo results, freed on scope exit.
struct AddrInfoList {
  addrinfo* head = nullptr;
  ~AddrInfoList() {
    if (head != nullptr) ::freeaddrinfo(head);
  }
};

void resolve(const RdmaOptions& o, bool passive, AddrInfoList& out) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  const std::string port = std::to_string(o.port);
  const int rc = ::getaddrinfo(o.host.c_str(), port.c_str(), &hints, &out.head);
  if (rc != 0) raise(ErrorKind::kFailed, "cannot resolve " + url(o) + ": " + ::gai_strerror(rc));
}

// An rdma_cm id not yet owned by a connection: destroyed unless released.
struct IdGuard {
  rdma_cm_id* id = nullptr;
  ~IdGuard() {
    if (id != nullptr) ::rdma_destroy_id(id);
  }
  rdma_cm_id* release() { return std::exchange(id, nullptr); }
};

rdma_conn_param connection_parameters(const std::byte* hello) {
  rdma_conn_param p{};
  p.private_data = hello;
  p.private_data_len = kHelloBytes;
  p.responder_resources = 0;  // no RDMA READs: writes only
  p.initiator_depth = 0;
  p.retry_count = kRetries;
  p.rnr_retry_count = kRetries;
  return p;
}

class RdmaListener final : public Listener {
 public:
  RdmaListener(const RdmaOptions& options, size_t max_message_bytes)
      : options_(options), max_message_bytes_(max_message_bytes), owner_pid_(::getpid()) {
    channel_ = std::make_unique<EventChannel>();
    if (::rdma_create_id(channel_->get(), &id_, nullptr, RDMA_PS_TCP) != 0) {
      raise_errno("rdma: rdma_create_id", errno);
    }
    AddrInfoList list;
    resolve(options_, true, list);
    int err = EADDRNOTAVAIL;
    bool bound = false;
    for (addrinfo* ai = list.head; ai != nullptr && !bound; ai = ai->ai_next) {
      if (::rdma_bind_addr(id_, ai->ai_addr) == 0 && ::rdma_listen(id_, 128) == 0) {
        bound = true;
      } else {
        err = errno;
      }
    }
    if (!bound) {
      ::rdma_destroy_id(id_);
      raise(ErrorKind::kFailed, "cannot listen on " + url(options_) + ": " + std::strerror(err) +
                                    " (does an RDMA device have this address? see docs/rdma.md)");
    }
    options_.port = ntohs(::rdma_get_src_port(id_));
  }

  ~RdmaListener() override {
    // A forked worker drops the daemon's listener without destroying it: it is the daemon's.
    if (::getpid() == owner_pid_) ::rdma_destroy_id(id_);
  }

  std::unique_ptr<Connection> accept() override {
    for (;;) {
      rdma_cm_event* event = next_cm_event(*channel_, -1);
      if (event->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
        ::rdma_ack_cm_event(event);
        continue;
      }
      IdGuard request{event->id};
      Hello peer;
      const bool ok =
          decode_hello(event->param.conn.private_data, event->param.conn.private_data_len, peer);
      ::rdma_ack_cm_event(event);
      const std::string peer_name = rdma_url(::rdma_get_peer_addr(request.id));
      if (!ok) {
        GVIRTUS_LOG(kWarning) << "rdma: refusing " << peer_name
                              << ": its connect request is not a gvirtus hello of version "
                              << kHelloVersion;
        ::rdma_reject(request.id, nullptr, 0);
        continue;
      }
      try {
        return establish(request, peer, peer_name);
      } catch (const Error& e) {
        // One client's failed handshake is not the listener's failure: wait for the next.
        GVIRTUS_LOG(kWarning) << "rdma: accepting " << peer_name << " failed: " << e.what();
      }
    }
  }

  int wait_fd() const override { return channel_->fd(); }
  std::string local_name() const override { return url(options_); }

 private:
  // Gives the request its own event channel (so the connection's events never mix with the
  // listener's, and a worker process can own them), builds the connection and accepts.
  std::unique_ptr<Connection> establish(IdGuard& request, const Hello& peer,
                                        const std::string& peer_name) {
    auto channel = std::make_unique<EventChannel>();
    if (::rdma_migrate_id(request.id, channel->get()) != 0) {
      raise_errno("rdma: rdma_migrate_id", errno);
    }
    auto connection = std::make_unique<RdmaConnection>(std::move(channel), request.release(),
                                                       options_, max_message_bytes_);
    connection->start(peer, peer_name);
    std::byte hello[kHelloBytes];
    encode_hello(connection->local_hello(), hello);
    rdma_conn_param param = connection_parameters(hello);
    if (::rdma_accept(connection->id(), &param) != 0) raise_errno("rdma: rdma_accept", errno);
    rdma_cm_event* event = next_cm_event(connection->channel(), now_ms() + kAcceptEstablishMs);
    if (event == nullptr) raise(ErrorKind::kTimedOut, "the client never completed the handshake");
    const rdma_cm_event_type type = event->event;
    ::rdma_ack_cm_event(event);
    if (type != RDMA_CM_EVENT_ESTABLISHED) {
      raise(ErrorKind::kDisconnected, std::string("handshake ended by ") + ::rdma_event_str(type));
    }
    return connection;
  }

  RdmaOptions options_;
  size_t max_message_bytes_;
  pid_t owner_pid_;
  std::unique_ptr<EventChannel> channel_;
  rdma_cm_id* id_ = nullptr;
};

class RdmaCommunicator final : public Communicator {
 public:
  RdmaCommunicator(const RdmaOptions& options, size_t max_message_bytes)
      : options_(options), max_message_bytes_(max_message_bytes) {}

  std::unique_ptr<Listener> serve() override {
    return std::make_unique<RdmaListener>(options_, max_message_bytes_);
  }

  std::unique_ptr<Connection> connect(std::chrono::milliseconds timeout) override {
    const int64_t deadline = now_ms() + timeout.count();
    auto channel = std::make_unique<EventChannel>();
    IdGuard id;
    if (::rdma_create_id(channel->get(), &id.id, nullptr, RDMA_PS_TCP) != 0) {
      raise_errno("rdma: rdma_create_id", errno);
    }
    AddrInfoList list;
    resolve(options_, false, list);
    const int step_ms = static_cast<int>(std::clamp<int64_t>(timeout.count(), 1, 2000));
    if (::rdma_resolve_addr(id.id, nullptr, list.head->ai_addr, step_ms) != 0) {
      raise_errno("cannot connect to " + name() + ": rdma_resolve_addr", errno);
    }
    expect(*channel, RDMA_CM_EVENT_ADDR_RESOLVED, deadline, timeout, nullptr);
    if (::rdma_resolve_route(id.id, step_ms) != 0) {
      raise_errno("cannot connect to " + name() + ": rdma_resolve_route", errno);
    }
    expect(*channel, RDMA_CM_EVENT_ROUTE_RESOLVED, deadline, timeout, nullptr);
    auto connection = std::make_unique<RdmaConnection>(std::move(channel), id.release(), options_,
                                                       max_message_bytes_);
    std::byte hello[kHelloBytes];
    encode_hello(connection->local_hello(), hello);
    rdma_conn_param param = connection_parameters(hello);
    if (::rdma_connect(connection->id(), &param) != 0) {
      raise_errno("cannot connect to " + name() + ": rdma_connect", errno);
    }
    Hello peer;
    expect(connection->channel(), RDMA_CM_EVENT_ESTABLISHED, deadline, timeout, &peer);
    connection->start(peer, name());
    return connection;
  }

  std::string name() const override { return url(options_); }

 private:
  // Waits for the next event of `channel`, which must be `wanted`; anything else is the reason
  // the connect failed. With `hello`, the event must carry the server's hello.
  void expect(EventChannel& channel, rdma_cm_event_type wanted, int64_t deadline,
              std::chrono::milliseconds timeout, Hello* hello) {
    rdma_cm_event* event = next_cm_event(channel, deadline);
    if (event == nullptr) {
      raise(ErrorKind::kTimedOut, "cannot connect to " + name() + ": no answer within " +
                                      std::to_string(timeout.count()) + " ms");
    }
    const rdma_cm_event_type type = event->event;
    const int status = event->status;
    const bool hello_ok =
        hello == nullptr ||
        decode_hello(event->param.conn.private_data, event->param.conn.private_data_len, *hello);
    ::rdma_ack_cm_event(event);
    if (type == wanted && hello_ok) return;
    if (type == wanted) {
      raise(ErrorKind::kFailed, "cannot connect to " + name() +
                                    ": the server's reply is not a gvirtus hello of version " +
                                    std::to_string(kHelloVersion));
    }
    if (type == RDMA_CM_EVENT_REJECTED) {
      raise(ErrorKind::kDisconnected,
            "cannot connect to " + name() + ": connection refused (nothing listens there?)");
    }
    if (type == RDMA_CM_EVENT_ADDR_ERROR || type == RDMA_CM_EVENT_ROUTE_ERROR ||
        type == RDMA_CM_EVENT_UNREACHABLE || type == RDMA_CM_EVENT_CONNECT_ERROR) {
      raise(ErrorKind::kDisconnected, "cannot connect to " + name() + ": " +
                                          ::rdma_event_str(type) + " (" + std::strerror(-status) +
                                          "; is the address on an RDMA device? see docs/rdma.md)");
    }
    raise(ErrorKind::kFailed,
          "cannot connect to " + name() + ": unexpected event " + ::rdma_event_str(type));
  }

  RdmaOptions options_;
  size_t max_message_bytes_;
};

}  // namespace

std::unique_ptr<Communicator> make_rdma_communicator(const RdmaOptions& options,
                                                     size_t max_message_bytes) {
  return std::make_unique<RdmaCommunicator>(options, max_message_bytes);
}

}  // namespace gvirtus::rdma
