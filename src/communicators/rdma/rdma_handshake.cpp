// The control path of a connection: rdma_cm setup with a QP we create ourselves (on our own device
// context, so that a forked worker can own it), hellos in the private data, and the QP state
// changes rdma_cm would make for its own QPs: INIT before connect/accept, RTR and RTS once the
// peer's parameters are known.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/error.h"
#include "common/log.h"
#include "communicators/rdma/rdma_connection.h"

namespace gvirtus::rdma {
namespace {

constexpr int kAcceptEstablishMs = 5000;  // a client that stalls mid-handshake is dropped
constexpr int kRetries = 7;               // RC transport and RNR retries before an error

rdma_conn_param connection_parameters(const std::byte* hello, uint32_t qp_num) {
  rdma_conn_param p{};
  p.private_data = hello;
  p.private_data_len = kHelloBytes;
  p.responder_resources = 0;  // writes only: no RDMA READs to serve
  p.initiator_depth = 0;
  p.retry_count = kRetries;
  p.rnr_retry_count = kRetries;
  p.qp_num = qp_num;
  return p;
}

// Waits for the next event of `channel`; nullptr on timeout. The caller acks it.
rdma_cm_event* next_event(EventChannel& channel, int64_t deadline_ms) {
  return next_cm_event(channel, deadline_ms);
}

}  // namespace

void RdmaConnection::connect_to(const sockaddr* address, const std::string& name,
                                int64_t deadline_ms, std::chrono::milliseconds timeout) {
  peer_name_ = name;
  channel_ = std::make_unique<EventChannel>();
  if (::rdma_create_id(channel_->get(), &id_, nullptr, RDMA_PS_TCP) != 0) {
    id_ = nullptr;
    raise_errno("rdma: rdma_create_id", errno);
  }
  created_pid_ = ::getpid();  // the id is ours to destroy even if the verbs never come
  const int step_ms = static_cast<int>(std::clamp<int64_t>(timeout.count(), 1, 2000));
  // Waits for `wanted`; anything else is why the connect failed.
  auto expect = [&](rdma_cm_event_type wanted, Hello* hello) {
    rdma_cm_event* event = next_event(*channel_, deadline_ms);
    if (event == nullptr) {
      raise(ErrorKind::kTimedOut, "cannot connect to " + name + ": no answer within " +
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
      raise(ErrorKind::kFailed, "cannot connect to " + name +
                                    ": the server's reply is not a gvirtus hello of version " +
                                    std::to_string(kHelloVersion));
    }
    if (type == RDMA_CM_EVENT_REJECTED) {
      raise(ErrorKind::kDisconnected,
            "cannot connect to " + name + ": connection refused (nothing listens there?)");
    }
    if (type == RDMA_CM_EVENT_ADDR_ERROR || type == RDMA_CM_EVENT_ROUTE_ERROR ||
        type == RDMA_CM_EVENT_UNREACHABLE || type == RDMA_CM_EVENT_CONNECT_ERROR) {
      raise(ErrorKind::kDisconnected, "cannot connect to " + name + ": " + ::rdma_event_str(type) +
                                          " (" + std::strerror(-status) +
                                          "; is the address on an RDMA device? see docs/rdma.md)");
    }
    raise(ErrorKind::kFailed,
          "cannot connect to " + name + ": unexpected event " + ::rdma_event_str(type));
  };
  if (::rdma_resolve_addr(id_, nullptr, const_cast<sockaddr*>(address), step_ms) != 0) {
    raise_errno("cannot connect to " + name + ": rdma_resolve_addr", errno);
  }
  expect(RDMA_CM_EVENT_ADDR_RESOLVED, nullptr);
  if (::rdma_resolve_route(id_, step_ms) != 0) {
    raise_errno("cannot connect to " + name + ": rdma_resolve_route", errno);
  }
  expect(RDMA_CM_EVENT_ROUTE_RESOLVED, nullptr);
  create_verbs();
  std::byte hello[kHelloBytes];
  encode_hello(local_hello(), hello);
  rdma_conn_param param = connection_parameters(hello, qp_->qp_num);
  if (::rdma_connect(id_, &param) != 0) {
    raise_errno("cannot connect to " + name + ": rdma_connect", errno);
  }
  // With a QP of our own, rdma_cm reports the server's reply and leaves RTR/RTS and the final
  // handshake message (rdma_establish) to us.
  Hello peer;
  expect(RDMA_CM_EVENT_CONNECT_RESPONSE, &peer);
  modify_qp(IBV_QPS_RTR);
  modify_qp(IBV_QPS_RTS);
  start(peer, name);
  if (::rdma_establish(id_) != 0)
    raise_errno("cannot connect to " + name + ": rdma_establish", errno);
  established_ = true;
}

void RdmaConnection::take_request(rdma_cm_id* request, const Hello& peer, std::string peer_name) {
  request_ = request;
  peer_ = peer;
  peer_name_ = std::move(peer_name);
}

void RdmaConnection::accept_request() {
  // Our own event channel, opened by this process: the request moves to it (the command goes to
  // the new channel, so a worker may take a request its daemon received).
  channel_ = std::make_unique<EventChannel>();
  if (::rdma_migrate_id(request_, channel_->get()) != 0) {
    raise_errno("rdma: taking over the connect request of " + peer_name_, errno);
  }
  id_ = std::exchange(request_, nullptr);
  created_pid_ = ::getpid();
  create_verbs();
  modify_qp(IBV_QPS_RTR);
  modify_qp(IBV_QPS_RTS);
  start(peer_, peer_name_);
  std::byte hello[kHelloBytes];
  encode_hello(local_hello(), hello);
  rdma_conn_param param = connection_parameters(hello, qp_->qp_num);
  if (::rdma_accept(id_, &param) != 0) raise_errno("rdma: rdma_accept of " + peer_name_, errno);
  rdma_cm_event* event = next_event(*channel_, now_ms() + kAcceptEstablishMs);
  if (event == nullptr) {
    raise(ErrorKind::kDisconnected, peer_name_ + " never completed the connection handshake");
  }
  const rdma_cm_event_type type = event->event;
  ::rdma_ack_cm_event(event);
  if (type != RDMA_CM_EVENT_ESTABLISHED) {
    raise(ErrorKind::kDisconnected,
          "handshake with " + peer_name_ + " ended by " + ::rdma_event_str(type));
  }
  established_ = true;
}

void RdmaConnection::ensure_established() {
  if (established_) return;  // set once, before any other thread can see the connection busy
  std::lock_guard lock(establish_mutex_);
  if (established_) return;
  if (shut_down_.load()) {
    raise(ErrorKind::kDisconnected, "rdma connection with " + peer_name_ + " shut down");
  }
  if (request_ == nullptr) {
    raise(ErrorKind::kDisconnected, "rdma connection with " + peer_name_ + " failed to set up");
  }
  try {
    accept_request();
  } catch (const Error& e) {
    request_ = nullptr;
    throw;
  }
  for (const auto& [addr, bytes] : early_registrations_) registrations_->add(addr, bytes);
  early_registrations_.clear();
}

}  // namespace gvirtus::rdma
