#include "communicators/rdma/rdma_connection.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "common/error.h"
#include "common/log.h"
#include "common/wire.h"

namespace gvirtus::rdma {
namespace {

constexpr uint32_t kExtraReceives = 16;  // credit-only writes beyond the window (see wire.h)
constexpr uint32_t kExtraSends = 16;
constexpr int kMaxSge = 8;
constexpr uint32_t kRequestedInline = 256;
constexpr size_t kZeroCopyMin = 16 * 1024;  // below this a copy beats an extra DMA descriptor
constexpr int kBatch = 32;
constexpr int kCmCheckEvery = 64;  // spinning rounds between checks of the cm channel

constexpr uint64_t kRecvWr = 0;
constexpr uint64_t kDataWr = uint64_t{1} << 32;  // | staging chunk
constexpr uint64_t kCreditWr = uint64_t{2} << 32;

int64_t now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void set_nonblocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

}  // namespace

RdmaConnection::RdmaConnection(const RdmaOptions& options, size_t max_message_bytes)
    : options_(options),
      max_message_bytes_(max_message_bytes),
      owner_pid_(::getpid()),
      created_generation_(fork_generation()) {}

void RdmaConnection::create_verbs() {
  if (id_->verbs == nullptr) raise(ErrorKind::kFailed, "rdma: the address has no RDMA device");
  created_pid_ = ::getpid();
  context_ = ::ibv_open_device(id_->verbs->device);
  if (context_ == nullptr) raise_errno("rdma: ibv_open_device", errno);
  pd_ = ::ibv_alloc_pd(context_);
  if (pd_ == nullptr) raise_errno("rdma: ibv_alloc_pd", errno);
  comp_ = ::ibv_create_comp_channel(context_);
  if (comp_ == nullptr) raise_errno("rdma: ibv_create_comp_channel", errno);
  set_nonblocking(comp_->fd);
  const uint32_t recv_depth = options_.slots + kExtraReceives;
  send_queue_depth_ = options_.slots + kExtraSends;
  cq_ = ::ibv_create_cq(context_, static_cast<int>(recv_depth + send_queue_depth_), nullptr, comp_,
                        0);
  if (cq_ == nullptr) raise_errno("rdma: ibv_create_cq", errno);
  ibv_qp_init_attr attr{};
  attr.send_cq = cq_;
  attr.recv_cq = cq_;
  attr.qp_type = IBV_QPT_RC;
  attr.cap.max_send_wr = send_queue_depth_;
  attr.cap.max_recv_wr = recv_depth;
  attr.cap.max_send_sge = kMaxSge;
  attr.cap.max_recv_sge = 1;
  attr.cap.max_inline_data = kRequestedInline;
  qp_ = ::ibv_create_qp(pd_, &attr);
  if (qp_ == nullptr) {
    attr.cap.max_inline_data = 0;  // some devices have no inline sends
    qp_ = ::ibv_create_qp(pd_, &attr);
    if (qp_ == nullptr) raise_errno("rdma: ibv_create_qp", errno);
  }
  max_inline_ = attr.cap.max_inline_data;
  window_ = SharedRegion(size_t{options_.slots} * options_.slot_bytes);
  window_mr_ = ::ibv_reg_mr(pd_, window_.data(), window_.size(),
                            IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  if (window_mr_ == nullptr) raise_errno("rdma: registering the receive window", errno);
  registrations_ = std::make_unique<RegistrationCache>(pd_, options_.max_registered_bytes);
  wake_.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wake_.valid()) raise_errno("rdma: eventfd", errno);
  modify_qp(IBV_QPS_INIT);
  for (uint32_t i = 0; i < recv_depth; ++i) post_receive();
}

void RdmaConnection::modify_qp(ibv_qp_state state) {
  ibv_qp_attr attr{};
  int mask = 0;
  attr.qp_state = state;
  if (::rdma_init_qp_attr(id_, &attr, &mask) != 0) raise_errno("rdma: rdma_init_qp_attr", errno);
  if (state == IBV_QPS_INIT) {
    // The peer writes into our window; rdma_cm leaves the active side's access flags at 0.
    attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
    mask |= IBV_QP_ACCESS_FLAGS;
  }
  if (state == IBV_QPS_RTR) attr.max_dest_rd_atomic = 0;  // writes only, no reads served
  if (state == IBV_QPS_RTS) attr.max_rd_atomic = 0;
  const int rc = ::ibv_modify_qp(qp_, &attr, mask);
  if (rc != 0) raise(ErrorKind::kFailed, "rdma: ibv_modify_qp: " + std::string(strerror(rc)));
}

RdmaConnection::~RdmaConnection() {
  teardown();
}

void RdmaConnection::teardown() {
  // A request handed to a forked worker belongs to the worker: the accepting process leaves it.
  const bool forked_since = fork_generation() != created_generation_;
  if (request_ != nullptr) {
    if (::getpid() == owner_pid_ && !forked_since) {
      ::rdma_reject(request_, nullptr, 0);
      ::rdma_destroy_id(request_);
    }
    request_ = nullptr;
  }
  // Objects are destroyed by the process that created them; in another one (a forked child that
  // inherited the object) only memory is released, the kernel objects are not ours.
  if (created_pid_ != 0 && ::getpid() != created_pid_) {
    if (registrations_) registrations_->abandon();
    return;
  }
  if (id_ != nullptr && !disconnected_sent_.exchange(true)) ::rdma_disconnect(id_);
  if (qp_ != nullptr) ::ibv_destroy_qp(std::exchange(qp_, nullptr));
  registrations_.reset();
  if (staging_mr_ != nullptr) ::ibv_dereg_mr(std::exchange(staging_mr_, nullptr));
  if (window_mr_ != nullptr) ::ibv_dereg_mr(std::exchange(window_mr_, nullptr));
  if (cq_ != nullptr) ::ibv_destroy_cq(std::exchange(cq_, nullptr));
  if (comp_ != nullptr) ::ibv_destroy_comp_channel(std::exchange(comp_, nullptr));
  if (pd_ != nullptr) ::ibv_dealloc_pd(std::exchange(pd_, nullptr));
  if (context_ != nullptr) ::ibv_close_device(std::exchange(context_, nullptr));
  if (id_ != nullptr) ::rdma_destroy_id(std::exchange(id_, nullptr));
}

Hello RdmaConnection::local_hello() const {
  Hello h;
  h.window_addr = reinterpret_cast<uint64_t>(window_.data());
  h.window_rkey = window_mr_->rkey;
  h.slots = options_.slots;
  h.slot_bytes = options_.slot_bytes;
  return h;
}

void RdmaConnection::start(const Hello& peer, std::string peer_name) {
  peer_ = peer;
  peer_name_ = std::move(peer_name);
  segment_bytes_ = std::min(peer.slot_bytes, options_.slot_bytes);
  staging_count_ = std::min(peer.slots, options_.slots);
  staging_ = SharedRegion(size_t{staging_count_} * segment_bytes_);
  // Source of RDMA writes only: no access flags beyond the implied local read.
  staging_mr_ = ::ibv_reg_mr(pd_, staging_.data(), staging_.size(), 0);
  if (staging_mr_ == nullptr) raise_errno("rdma: registering the send staging buffers", errno);
  staging_busy_.assign(staging_count_, 0);
  send_credits_ = peer.slots;
}

void RdmaConnection::post_receive() {
  ibv_recv_wr wr{};
  wr.wr_id = kRecvWr;
  wr.num_sge = 0;  // writes with immediate land in the window; the receive carries no data
  ibv_recv_wr* bad = nullptr;
  const int rc = ::ibv_post_recv(qp_, &wr, &bad);
  if (rc != 0) raise(ErrorKind::kFailed, "rdma: ibv_post_recv: " + std::string(strerror(rc)));
}

void RdmaConnection::post_write(uint32_t slot, uint32_t imm, ibv_sge* sges, int count,
                                bool inline_data, uint64_t wr_id) {
  ibv_send_wr wr{};
  wr.wr_id = wr_id;
  wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
  wr.sg_list = sges;
  wr.num_sge = count;
  wr.send_flags = IBV_SEND_SIGNALED | (inline_data ? IBV_SEND_INLINE : 0);
  const uint32_t target = slot == kCreditOnly ? 0 : slot;
  wr.wr.rdma.remote_addr = peer_.window_addr + uint64_t{target} * peer_.slot_bytes;
  wr.wr.rdma.rkey = peer_.window_rkey;
  wr.imm_data = htonl(imm);
  ibv_send_wr* bad = nullptr;
  const int rc = ::ibv_post_send(qp_, &wr, &bad);
  if (rc != 0) {
    std::lock_guard lock(mutex_);
    fail_locked("posting a write failed: " + std::string(std::strerror(rc)));
    raise_broken("send to");
  }
}

void RdmaConnection::fail_locked(const std::string& reason) {
  if (!broken_) {
    broken_ = true;
    broken_reason_ = reason;
    GVIRTUS_LOG(kInfo) << "rdma: connection with " << peer_name_ << " ends: " << reason;
  }
  progressed_.notify_all();
}

void RdmaConnection::raise_broken(const char* what) const {
  if (shut_down_.load()) {
    raise(ErrorKind::kDisconnected,
          std::string(what) + " " + peer_name_ + ": connection shut down");
  }
  raise(ErrorKind::kDisconnected, std::string(what) + " " + peer_name_ + ": " + broken_reason_);
}

void RdmaConnection::handle_completion(const ibv_wc& wc) {
  if (wc.wr_id != kRecvWr) {
    if (sends_outstanding_ > 0) --sends_outstanding_;
    if ((wc.wr_id & ~uint64_t{0xFFFFFFFF}) == kDataWr) {
      const uint32_t chunk = static_cast<uint32_t>(wc.wr_id);
      if (chunk < staging_busy_.size()) staging_busy_[chunk] = 0;
    }
    if (wc.status != IBV_WC_SUCCESS) {
      fail_locked(std::string("a write failed (") + ::ibv_wc_status_str(wc.status) +
                  "): the peer is gone");
    }
    return;
  }
  if (wc.status != IBV_WC_SUCCESS) {
    fail_locked(std::string("receive failed (") + ::ibv_wc_status_str(wc.status) +
                "): the peer is gone");
    return;
  }
  if (wc.opcode != IBV_WC_RECV_RDMA_WITH_IMM || !(wc.wc_flags & IBV_WC_WITH_IMM)) {
    fail_locked("protocol violation: a completion that is not a write with immediate");
    return;
  }
  try {
    post_receive();
  } catch (const Error& e) {
    fail_locked(e.what());
    return;
  }
  const uint32_t imm = ntohl(wc.imm_data);
  const uint32_t credits = imm_credits(imm);
  const uint32_t slot = imm_slot(imm);
  if (uint64_t{send_credits_} + credits > peer_.slots) {
    fail_locked("protocol violation: the peer returned more credits than it holds");
    return;
  }
  send_credits_ += credits;
  if (slot == kCreditOnly) {
    if (wc.byte_len != 0) fail_locked("protocol violation: a credit-only write carried data");
    return;
  }
  if (slot != next_recv_slot_ || wc.byte_len > options_.slot_bytes ||
      arrived_.size() >= options_.slots) {
    fail_locked("protocol violation: a write to slot " + std::to_string(slot) + " (expected " +
                std::to_string(next_recv_slot_) + ") of " + std::to_string(wc.byte_len) + " bytes");
    return;
  }
  arrived_.push_back({slot, wc.byte_len});
  next_recv_slot_ = (next_recv_slot_ + 1) % options_.slots;
}

void RdmaConnection::drain_cm_events() {
  for (;;) {
    rdma_cm_event* event = nullptr;
    if (::rdma_get_cm_event(channel_->get(), &event) != 0) return;  // EAGAIN: none
    const rdma_cm_event_type type = event->event;
    ::rdma_ack_cm_event(event);
    if (type == RDMA_CM_EVENT_DISCONNECTED) {
      fail_locked(shut_down_.load() ? "connection shut down" : "the peer closed the connection");
    } else if (type == RDMA_CM_EVENT_DEVICE_REMOVAL) {
      fail_locked("the RDMA device was removed");
    } else if (type != RDMA_CM_EVENT_ESTABLISHED) {
      fail_locked(std::string("connection event ") + ::rdma_event_str(type));
    }
  }
}

int RdmaConnection::reap(ibv_wc* wcs, int capacity, int64_t spin_until, Deadline deadline) {
  int n = ::ibv_poll_cq(cq_, capacity, wcs);
  if (n != 0 || now_us() < spin_until) return n;
  // Nothing for a while: sleep until a completion, a cm event, shutdown() or the deadline.
  if (::ibv_req_notify_cq(cq_, 0) != 0) return -1;
  n = ::ibv_poll_cq(cq_, capacity, wcs);
  if (n != 0) return n;
  int timeout = 1000;  // bounded, so flags are rechecked even if a wake-up were lost
  if (deadline) timeout = static_cast<int>(std::clamp<int64_t>(*deadline - now_ms(), 0, 1000));
  pollfd fds[3] = {{comp_->fd, POLLIN, 0}, {channel_->fd(), POLLIN, 0}, {wake_.get(), POLLIN, 0}};
  ::poll(fds, 3, timeout);
  if (fds[0].revents != 0) {
    ibv_cq* cq = nullptr;
    void* context = nullptr;
    if (::ibv_get_cq_event(comp_, &cq, &context) == 0) ::ibv_ack_cq_events(cq, 1);
  }
  if (fds[2].revents != 0) {
    uint64_t value;
    (void)!::read(wake_.get(), &value, sizeof value);
  }
  return ::ibv_poll_cq(cq_, capacity, wcs);
}

template <typename Ready>
void RdmaConnection::wait(std::unique_lock<std::mutex>& lock, Ready ready, Deadline deadline,
                          const char* what) {
  int64_t spin_until = now_us() + options_.spin_us;
  int rounds = 0;
  for (;;) {
    if (ready()) return;
    if (broken_ || shut_down_.load()) raise_broken(what);
    if (deadline && now_ms() >= *deadline) {
      raise(ErrorKind::kTimedOut, std::string(what) + " " + peer_name_ + ": nothing in time");
    }
    if (polling_) {  // another thread drives progress and signals us
      progressed_.wait_for(lock, std::chrono::milliseconds(20));
      continue;
    }
    polling_ = true;
    lock.unlock();
    ibv_wc wcs[kBatch];
    const int n = reap(wcs, kBatch, spin_until, deadline);
    lock.lock();
    polling_ = false;
    if (n < 0) fail_locked("polling the completion queue failed");
    for (int i = 0; i < n; ++i) handle_completion(wcs[i]);
    if (n > 0) spin_until = now_us() + options_.spin_us;
    if (n == 0 || ++rounds % kCmCheckEvery == 0) drain_cm_events();
    progressed_.notify_all();
  }
}

void RdmaConnection::send(std::span<const ByteView> pieces) {
  ensure_established();
  uint64_t total = 0;
  for (const ByteView& piece : pieces) total += piece.size();
  std::byte header[kLengthBytes];
  store_le<uint64_t>(header, total);

  // The message as one stream: the header, then the pieces; `part`/`offset` walk it.
  std::vector<ByteView> parts;
  parts.reserve(pieces.size() + 1);
  parts.emplace_back(header, kLengthBytes);
  for (const ByteView& piece : pieces) {
    if (!piece.empty()) parts.push_back(piece);
  }
  size_t part = 0, offset = 0;
  uint64_t left = kLengthBytes + total;
  std::vector<uint32_t> zero_copy_chunks;  // writes that read the caller's memory

  while (left > 0) {
    const uint32_t segment = static_cast<uint32_t>(std::min<uint64_t>(left, segment_bytes_));
    uint32_t slot, chunk, imm;
    {
      std::unique_lock lock(mutex_);
      wait(
          lock,
          [&] {
            return send_credits_ > 0 && !staging_busy_[send_sequence_ % staging_count_] &&
                   sends_outstanding_ + 1 < send_queue_depth_;
          },
          std::nullopt, "send to");
      slot = next_send_slot_;
      chunk = static_cast<uint32_t>(send_sequence_ % staging_count_);
      --send_credits_;
      next_send_slot_ = (next_send_slot_ + 1) % peer_.slots;
      ++send_sequence_;
      staging_busy_[chunk] = 1;
      ++sends_outstanding_;
      const uint32_t credits = credits_to_return_;
      credits_to_return_ = 0;
      imm = make_imm(slot, credits);
    }
    // Gather this segment: inline when small, else from registered caller memory where it is
    // registered, else through a copy into the staging chunk.
    ibv_sge sges[kMaxSge];
    int count = 0;
    const bool inline_data = segment <= max_inline_;
    std::byte* stage = staging_.data() + size_t{chunk} * segment_bytes_;
    uint32_t staged = 0;
    uint32_t taken = 0;
    bool reads_caller = false;
    while (taken < segment) {
      const ByteView& p = parts[part];
      const uint32_t n =
          static_cast<uint32_t>(std::min<uint64_t>(p.size() - offset, segment - taken));
      const std::byte* src = p.data() + offset;
      uint32_t lkey = 0;
      if (!inline_data && n >= kZeroCopyMin && count + 2 <= kMaxSge) {
        lkey = registrations_->find(src, n);
      }
      if (inline_data && count < kMaxSge - 1) {
        sges[count++] = {reinterpret_cast<uint64_t>(src), n, 0};
      } else if (lkey != 0) {
        sges[count++] = {reinterpret_cast<uint64_t>(src), n, lkey};
        reads_caller = true;
      } else {
        std::memcpy(stage + staged, src, n);
        if (count > 0 && sges[count - 1].lkey == staging_mr_->lkey &&
            sges[count - 1].addr + sges[count - 1].length ==
                reinterpret_cast<uint64_t>(stage + staged)) {
          sges[count - 1].length += n;
        } else {
          sges[count++] = {reinterpret_cast<uint64_t>(stage + staged), n, staging_mr_->lkey};
        }
        staged += n;
      }
      taken += n;
      offset += n;
      if (offset == p.size()) {
        ++part;
        offset = 0;
      }
    }
    post_write(slot, imm, sges, count, inline_data, kDataWr | chunk);
    if (reads_caller) zero_copy_chunks.push_back(chunk);
    left -= segment;
  }
  // The caller may reuse its memory on return: wait for the writes that read it.
  if (!zero_copy_chunks.empty()) {
    std::unique_lock lock(mutex_);
    wait(
        lock,
        [&] {
          return std::all_of(zero_copy_chunks.begin(), zero_copy_chunks.end(),
                             [&](uint32_t c) { return !staging_busy_[c]; });
        },
        std::nullopt, "send to");
  }
}

void RdmaConnection::return_credits_locked(std::unique_lock<std::mutex>& lock, uint32_t freed) {
  credits_to_return_ += freed;
  if (credits_to_return_ < options_.slots / 2 || broken_) return;
  // Nothing of ours is going the other way soon enough: tell the peer in a write of its own.
  wait(
      lock, [&] { return sends_outstanding_ < send_queue_depth_; }, std::nullopt, "receive from");
  if (credits_to_return_ < options_.slots / 2) return;  // a send carried them meanwhile
  const uint32_t imm = make_imm(kCreditOnly, credits_to_return_);
  credits_to_return_ = 0;
  ++sends_outstanding_;
  ibv_send_wr wr{};
  wr.wr_id = kCreditWr;
  wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
  wr.num_sge = 0;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = peer_.window_addr;
  wr.wr.rdma.rkey = peer_.window_rkey;
  wr.imm_data = htonl(imm);
  ibv_send_wr* bad = nullptr;
  const int rc = ::ibv_post_send(qp_, &wr, &bad);
  if (rc != 0) fail_locked("posting credits failed: " + std::string(std::strerror(rc)));
}

void RdmaConnection::release_held_slot(std::unique_lock<std::mutex>& lock) {
  if (!held_slot_) return;
  held_slot_.reset();
  return_credits_locked(lock, 1);
}

ByteView RdmaConnection::recv() {
  return receive(std::nullopt);
}

ByteView RdmaConnection::recv(std::chrono::milliseconds timeout) {
  return receive(now_ms() + timeout.count());
}

ByteView RdmaConnection::recv_placed(size_t head_bytes, Placer place,
                                     std::optional<std::chrono::milliseconds> timeout) {
  return receive(timeout ? Deadline(now_ms() + timeout->count()) : std::nullopt, head_bytes,
                 &place);
}

RdmaConnection::Arrival RdmaConnection::next_segment(std::unique_lock<std::mutex>& lock,
                                                     Deadline deadline) {
  try {
    wait(
        lock, [&] { return !arrived_.empty(); }, deadline, "receive from");
  } catch (const Error& e) {
    // A placed message cannot be resumed: its bytes went where the caller may no longer want
    // them (the Connection contract), so the connection ends with it.
    if (!placement_.into.empty()) {
      lock.unlock();
      shutdown();
      lock.lock();
    }
    if (e.kind() != ErrorKind::kDisconnected) throw;
    raise(ErrorKind::kDisconnected, peer_name_ + " closed the connection mid-message (" +
                                        std::to_string(message_have_) + " bytes of " +
                                        std::to_string(message_total_) + " received): " + e.what());
  }
  const Arrival next = arrived_.front();
  arrived_.pop_front();
  if (next.bytes == 0 || message_have_ + next.bytes > message_total_) {
    fail_locked("protocol violation: a segment beyond its message");
    raise(ErrorKind::kInvalidInput, "rdma: malformed message from " + peer_name_);
  }
  return next;
}

ByteView RdmaConnection::receive(Deadline deadline, size_t head_bytes, const Placer* place) {
  ensure_established();
  std::unique_lock lock(mutex_);
  release_held_slot(lock);
  // Writes `n` bytes of the message from its offset `at` on: before the placement's offset into
  // message_, from it on into the placement (the caller's memory).
  const auto store = [this](size_t at, const std::byte* from, size_t n) {
    const size_t kept =
        placement_.into.empty() ? n : std::min(n, placement_.at - std::min(at, placement_.at));
    std::memcpy(message_.get() + at, from, kept);
    if (kept < n)
      std::memcpy(placement_.into.data() + (at + kept - placement_.at), from + kept, n - kept);
  };
  if (!in_message_) {
    wait(
        lock, [&] { return !arrived_.empty(); }, deadline, "receive from");
    const Arrival first = arrived_.front();
    const std::byte* data = window_.data() + size_t{first.slot} * options_.slot_bytes;
    if (first.bytes < kLengthBytes) {
      fail_locked("protocol violation: a message segment without its length");
      raise(ErrorKind::kInvalidInput, "rdma: malformed message from " + peer_name_);
    }
    const uint64_t total = load_le<uint64_t>(data);
    if (total > max_message_bytes_) {
      fail_locked("message over the size limit");
      raise(ErrorKind::kInvalidInput, "message of " + std::to_string(total) + " bytes from " +
                                          peer_name_ + " exceeds the limit of " +
                                          std::to_string(max_message_bytes_));
    }
    arrived_.pop_front();
    const std::byte* body = data + kLengthBytes;
    const size_t here = first.bytes - kLengthBytes;  // the message's bytes in this segment
    if (total < here) {
      fail_locked("protocol violation: a segment longer than its message");
      raise(ErrorKind::kInvalidInput, "rdma: malformed message from " + peer_name_);
    }
    placement_ = {};
    // The placer sees the head once it is here: in the first segment (slots hold 4 KiB or more).
    if (const size_t head = std::min<uint64_t>(head_bytes, total);
        place != nullptr && head <= here) {
      const Placement p = (*place)(ByteView(body, head), static_cast<size_t>(total));
      if (p.fits(head_bytes, static_cast<size_t>(total))) placement_ = p;
    }
    if (total == here) {
      held_slot_ = first.slot;  // returned in place; freed at the next recv()
      if (placement_.into.empty()) return ByteView(body, here);
      lock.unlock();  // the slot stays ours until then
      std::memcpy(placement_.into.data(), body + placement_.at, placement_.into.size());
      const size_t kept = placement_.at;
      placement_ = {};
      return ByteView(body, kept);
    }
    const size_t keep = placement_.into.empty() ? total : placement_.at;
    if (message_capacity_ < keep) {
      message_.reset(new std::byte[keep]);
      message_capacity_ = keep;
    }
    in_message_ = true;
    message_total_ = total;
    message_have_ = here;
    lock.unlock();  // the slot stays ours until its credit goes back
    store(0, body, here);
    lock.lock();
    return_credits_locked(lock, 1);
  }
  while (message_have_ < message_total_) {
    const Arrival next = next_segment(lock, deadline);
    const std::byte* data = window_.data() + size_t{next.slot} * options_.slot_bytes;
    lock.unlock();
    store(message_have_, data, next.bytes);
    lock.lock();
    message_have_ += next.bytes;
    return_credits_locked(lock, 1);
  }
  in_message_ = false;
  const size_t kept = placement_.into.empty() ? message_total_ : placement_.at;
  placement_ = {};
  return ByteView(message_.get(), kept);
}

void RdmaConnection::register_memory(const void* addr, size_t bytes) {
  std::lock_guard lock(establish_mutex_);
  if (registrations_ && established_) {
    registrations_->add(addr, bytes);
  } else {
    early_registrations_.emplace_back(addr, bytes);  // made once the connection is set up
  }
}

void RdmaConnection::unregister_memory(const void* addr, size_t bytes) {
  std::lock_guard lock(establish_mutex_);
  if (registrations_ && established_) {
    registrations_->remove(addr, bytes);
    return;
  }
  const auto early = std::find(early_registrations_.begin(), early_registrations_.end(),
                               std::pair<const void*, size_t>(addr, bytes));
  if (early != early_registrations_.end()) early_registrations_.erase(early);
}

void RdmaConnection::shutdown() {
  if (shut_down_.exchange(true)) return;
  if (id_ != nullptr && !disconnected_sent_.exchange(true)) ::rdma_disconnect(id_);
  const uint64_t one = 1;
  (void)!::write(wake_.get(), &one, sizeof one);
  std::lock_guard lock(mutex_);
  progressed_.notify_all();
}

}  // namespace gvirtus::rdma
