// One established rdma connection: the data path (rdma_wire.h says what travels).
//
// Threads: one thread may send while another receives (the Connection contract). Completions
// are reaped by whichever thread needs progress: one at a time polls the completion queue (busy
// for spin_us, then asleep on the completion channel, the cm channel and a wake-up eventfd) while
// the others wait on a condition variable it signals. Credits, arrivals and errors live under
// one mutex. A peer that disconnects, a completion error or shutdown() fails every waiter with
// kDisconnected; messages that arrived whole before that are still delivered.
#pragma once

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/unique_fd.h"
#include "communicators/communicator.h"
#include "communicators/rdma/rdma_options.h"
#include "communicators/rdma/rdma_reg_cache.h"
#include "communicators/rdma/rdma_resources.h"
#include "communicators/rdma/rdma_wire.h"

namespace gvirtus::rdma {

// Every verbs object of a connection (its device context included) is created by the process
// that uses it: the kernel refuses commands on rdma descriptors from another process (a forked
// child has new credentials), so nothing opened before a fork can serve after it.
class RdmaConnection final : public Connection {
 public:
  RdmaConnection(const RdmaOptions& options, size_t max_message_bytes);
  ~RdmaConnection() override;

  // Control path (rdma_handshake.cpp). The client: resolves, connects and returns established.
  void connect_to(const sockaddr* address, const std::string& name, int64_t deadline_ms,
                  std::chrono::milliseconds timeout);
  // The server: takes a connect request (acknowledged, still on the listener's channel) and
  // accepts it now, or - for a listener whose connections go to forked workers - on first use,
  // in the process that uses it.
  void take_request(rdma_cm_id* request, const Hello& peer, std::string peer_name);
  void accept_request();
  // Finishes a deferred accept in this process; every data-path entry calls it first.
  void ensure_established();

  void send(std::span<const ByteView> pieces) override;
  ByteView recv() override;
  ByteView recv(std::chrono::milliseconds timeout) override;
  // Copies each segment from its landing slot straight to where the placement says: one copy,
  // as recv() makes, and none more.
  ByteView recv_placed(size_t head_bytes, Placer place,
                       std::optional<std::chrono::milliseconds> timeout) override;
  // Read by receive() only, on the same thread (the Connection contract): no lock needed.
  void set_max_message(size_t bytes) override { max_message_bytes_ = bytes; }
  void register_memory(const void* addr, size_t bytes) override;
  void unregister_memory(const void* addr, size_t bytes) override;
  void shutdown() override;
  std::string peer_name() const override { return peer_name_; }
  std::string transport() const override { return "rdma"; }

 private:
  using Deadline = std::optional<int64_t>;  // monotonic ms
  struct Arrival {
    uint32_t slot;
    uint32_t bytes;
  };

  // Opens this process's own device context and builds PD, CQ, QP and the window on it.
  void create_verbs();
  // Moves the QP through `state` with the attributes rdma_cm computes for the connection.
  void modify_qp(ibv_qp_state state);
  Hello local_hello() const;
  // The peer's window is known and the connection is established: data may flow.
  void start(const Hello& peer, std::string peer_name);

  void post_receive();
  // Posts one RDMA WRITE WITH IMMEDIATE to peer slot `slot` (or credit only).
  void post_write(uint32_t slot, uint32_t imm, ibv_sge* sges, int count, bool inline_data,
                  uint64_t wr_id);
  // Destroys the verbs objects (in reverse creation order) if this process owns them.
  void teardown();
  // Runs the progress engine until `ready()` holds (called with lock held).
  template <typename Ready>
  void wait(std::unique_lock<std::mutex>& lock, Ready ready, Deadline deadline, const char* what);
  // One round of progress by the polling thread, without the lock: reaps up to kBatch
  // completions (spinning or sleeping) into `wcs`; returns how many.
  int reap(ibv_wc* wcs, int capacity, int64_t spin_until, Deadline deadline);
  void drain_cm_events();                    // lock held
  void handle_completion(const ibv_wc& wc);  // lock held
  void fail_locked(const std::string& reason);
  [[noreturn]] void raise_broken(const char* what) const;  // lock held
  void return_credits_locked(std::unique_lock<std::mutex>& lock, uint32_t freed);
  // recv() and recv_placed() (`place` null: nothing is placed).
  ByteView receive(Deadline deadline, size_t head_bytes = 0, const Placer* place = nullptr);
  // The next arrival of the message being received, waited for until `deadline`.
  Arrival next_segment(std::unique_lock<std::mutex>& lock, Deadline deadline);
  void release_held_slot(std::unique_lock<std::mutex>& lock);

  RdmaOptions options_;
  size_t max_message_bytes_;
  std::string peer_name_ = "rdma://?";
  pid_t owner_pid_;        // the process that made this object
  pid_t created_pid_ = 0;  // the process that created the verbs objects
  uint64_t created_generation_;

  // A deferred accept: the request and what the peer said, until first use.
  rdma_cm_id* request_ = nullptr;
  std::mutex establish_mutex_;
  std::atomic<bool> established_{false};

  // Declared in creation order; teardown() destroys them in reverse.
  std::unique_ptr<EventChannel> channel_;
  rdma_cm_id* id_ = nullptr;
  ibv_context* context_ = nullptr;
  ibv_pd* pd_ = nullptr;
  ibv_comp_channel* comp_ = nullptr;
  ibv_cq* cq_ = nullptr;
  ibv_qp* qp_ = nullptr;
  SharedRegion window_;   // landing slots the peer writes into
  SharedRegion staging_;  // our outgoing segments, one per peer slot
  ibv_mr* window_mr_ = nullptr;
  ibv_mr* staging_mr_ = nullptr;
  std::unique_ptr<RegistrationCache> registrations_;
  std::vector<std::pair<const void*, size_t>> early_registrations_;  // before establishment
  UniqueFd wake_;  // eventfd: shutdown() wakes a thread asleep in poll()
  uint32_t max_inline_ = 0;
  uint32_t send_queue_depth_ = 0;

  Hello peer_{};
  std::atomic<bool> shut_down_{false};
  std::atomic<bool> disconnected_sent_{false};

  std::mutex mutex_;
  std::condition_variable progressed_;
  bool polling_ = false;
  bool broken_ = false;
  std::string broken_reason_;
  std::deque<Arrival> arrived_;
  uint32_t next_recv_slot_ = 0;  // the slot the peer's next write must name
  uint32_t send_credits_ = 0;    // free peer slots
  uint32_t next_send_slot_ = 0;
  uint64_t send_sequence_ = 0;      // segments sent; picks the staging chunk
  uint32_t segment_bytes_ = 0;      // min(our, peer's slot size)
  uint32_t staging_count_ = 0;      // min(our, peer's slot count)
  uint32_t credits_to_return_ = 0;  // our slots freed since we last told the peer
  uint32_t sends_outstanding_ = 0;
  std::vector<uint8_t> staging_busy_;  // per staging chunk: a write from it is in flight

  // The message being received (recv() contract: a partial one survives a timeout).
  std::unique_ptr<std::byte[]> message_;
  size_t message_capacity_ = 0;
  bool in_message_ = false;
  uint64_t message_total_ = 0;
  size_t message_have_ = 0;
  std::optional<uint32_t> held_slot_;  // a one-segment message returned in place
  Placement placement_;                // where the message being received lands from `at` on
};

}  // namespace gvirtus::rdma
