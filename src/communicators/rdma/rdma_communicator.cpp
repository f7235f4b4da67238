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
    // A forked worker drops the daemon's listener without destroying it: it is the daemon's. It
    // keeps the channel's descriptor open too: the request it was handed still lives there until
    // the worker moves it to a channel of its own.
    if (::getpid() == owner_pid_) {
      ::rdma_destroy_id(id_);
    } else {
      (void)channel_.release();
    }
  }

  std::unique_ptr<Connection> accept() override {
    for (;;) {
      rdma_cm_event* event = next_cm_event(*channel_, -1);
      if (event->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
        ::rdma_ack_cm_event(event);
        continue;
      }
      rdma_cm_id* request = event->id;
      Hello peer;
      const bool ok =
          decode_hello(event->param.conn.private_data, event->param.conn.private_data_len, peer);
      ::rdma_ack_cm_event(event);
      const std::string peer_name = rdma_url(::rdma_get_peer_addr(request));
      if (!ok) {
        GVIRTUS_LOG(kWarning) << "rdma: refusing " << peer_name
                              << ": its connect request is not a gvirtus hello of version "
                              << kHelloVersion;
        ::rdma_reject(request, nullptr, 0);
        ::rdma_destroy_id(request);
        continue;
      }
      auto connection = std::make_unique<RdmaConnection>(options_, max_message_bytes_);
      connection->take_request(request, peer, peer_name);
      if (hand_off_) return connection;  // the worker that uses it accepts it
      try {
        connection->ensure_established();
        return connection;
      } catch (const Error& e) {
        // One client's failed handshake is not the listener's failure: wait for the next.
        GVIRTUS_LOG(kWarning) << "rdma: accepting " << peer_name << " failed: " << e.what();
      }
    }
  }

  void hand_off_to_workers() override { hand_off_ = true; }
  int wait_fd() const override { return channel_->fd(); }
  std::string local_name() const override { return url(options_); }

 private:
  RdmaOptions options_;
  size_t max_message_bytes_;
  pid_t owner_pid_;
  bool hand_off_ = false;
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
    AddrInfoList list;
    resolve(options_, false, list);
    auto connection = std::make_unique<RdmaConnection>(options_, max_message_bytes_);
    connection->connect_to(list.head->ai_addr, name(), deadline, timeout);
    return connection;
  }

  std::string name() const override { return url(options_); }

 private:
  RdmaOptions options_;
  size_t max_message_bytes_;
};

}  // namespace

std::unique_ptr<Communicator> make_rdma_communicator(const RdmaOptions& options,
                                                     size_t max_message_bytes) {
  return std::make_unique<RdmaCommunicator>(options, max_message_bytes);
}

}  // namespace gvirtus::rdma
