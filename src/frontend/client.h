// The frontend core: the client side of one gvirtus session, used by the stub libraries.
//
// A Client is one session with one backend (the process has one per backend of its pool,
// frontend/pool.h). It connects lazily, on the first call, to the first reachable endpoint of its
// configuration and performs the handshake. Then:
//   call()       - sends a request and blocks until its reply; the reply payload is decoded by the
//                  caller's function while it is still in the transport's buffer (no copy).
//   send_async() - sends a request that wants no reply and returns at once. If it fails on the
//                  backend, the error comes back later and take_async_error() reports it.
// Any number of threads may call concurrently: sends are serialised, and whichever waiting thread
// holds the receive side hands other threads' replies to them, and prints what the backend's
// worker printed (output frames, protocol/output_frames.h) as it comes.
//
// Failure is bounded and sticky: an unreachable backend fails within connect_timeout_ms; once the
// connection is lost every call, current and future, fails at once with kDisconnected (and the
// same message), so an application never hangs on a dead backend. A child created by fork()
// starts its own session on its first call.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "common/config.h"
#include "common/frame.h"
#include "common/function_ref.h"
#include "common/range_allocator.h"
#include "common/wire.h"
#include "communicators/communicator.h"
#include "frontend/async_batch.h"
#include "frontend/frontend_abi.h"
#include "protocol/handshake.h"

namespace gvirtus {

class Client {
 public:
  // Decodes a reply payload; runs on the calling thread.
  using ReplyDecoder = FunctionRef<void(WireReader&)>;

  // A client for a configuration; `plugins` are the call tables the caller will use (core is
  // always included). `device_selection`, when given, is the selection the hello carries in place
  // of effective_visible_devices(config). Nothing connects until the first call.
  Client(Config config, std::vector<PluginRef> plugins,
         std::optional<std::string> device_selection = std::nullopt);
  ~Client();

  // Fails the session now: every call, current and future, fails with `error`.
  void fail(const Error& error);

  // Opens a plugin in this session. Before the connection exists it joins the handshake's list;
  // on a live session a core OpenPlugin call opens it (a library loaded after the first call).
  // Opening one that is open already does nothing. Throws Error: the backend's refusal (naming
  // the plugin and the reason; the session goes on), or the session's failure.
  void open_plugin(const PluginRef& plugin, uint32_t version);

  // The configuration's bound on a synchronous reply, in milliseconds (0: none).
  uint32_t reply_timeout_ms() const { return config_.reply_timeout_ms; }

  // Sends a synchronous call and waits for its reply. Throws Error: the backend's error reply
  // (with its kind and message), kDisconnected, kTimedOut, or kInvalidInput for a malformed reply.
  void call(uint32_t call_id, std::span<const ByteView> payload, ReplyDecoder decode);

  // A synchronous call split in two, so that a thread can have several in flight (a pipelined
  // large copy: the backend works on one chunk while the client sends or reads the next). Every
  // begun call must be finished, in any order; the backend answers a thread's calls in order.
  // begin_call() throws like call() if the request cannot be sent (nothing is then pending).
  struct PendingCall {
    uint64_t request_id;
    uint32_t call_id;
    uint64_t request_bytes;  // for GVIRTUS_STATS
  };
  // `landing`, when given, is where the end of the reply may be written as it arrives (see
  // gvirtus_landing); it must stay valid until the call is finished.
  PendingCall begin_call(uint32_t call_id, std::span<const ByteView> payload,
                         gvirtus_landing* landing = nullptr);
  void finish_call(PendingCall pending, ReplyDecoder decode);

  // Sends an asynchronous call, or holds it briefly to send it with others (async_batch.h;
  // "async_batch_us" in the configuration). Throws Error only if it cannot be sent.
  void send_async(uint32_t call_id, std::span<const ByteView> payload);

  // Sends the asynchronous calls held for batching now (also done at exit). Throws like send.
  void flush_async();

  // Sends what is held for batching and ends the session, quietly: later calls fail with
  // kDisconnected. For the process-wide client at process exit, which is never destroyed.
  void end_at_exit();

  // The first error reported for an asynchronous call since the last take, if any.
  std::optional<Error> take_async_error();

  // Connects now if not yet connected (normally the first call does it). Throws like call().
  void connect();

  // What the backend said in the handshake (connects if needed).
  HelloReply backend();

  // The host of the tcp endpoint this client connected through (connects if needed); empty when
  // it connected over another transport. Where other backends of a pool reach this one.
  std::string tcp_host();

  // Memory the backend maps too (Connection::shared_memory(); connects if needed), empty when
  // the transport shares none.
  std::span<std::byte> shared_memory();
  // Blocks of the shared memory for the stubs' page-locked host memory: every stub of the process
  // places its blocks through these, so that none overlaps another's. `bytes` is rounded up to
  // whole pages; nullopt when the memory is full or shared with no backend.
  static constexpr uint64_t kSharedPage = 4096;
  std::optional<RangeAllocator::Range> take_shared(uint64_t bytes);
  bool give_back_shared(uint64_t offset);

  // The application's page-locked host memory (allocated or registered through a stub): a
  // transport that sends from registered memory without a copy (rdma) registers it, on the live
  // connection and on one made later (Connection::register_memory). Taken back before the memory
  // is freed. Does not connect; thread-safe.
  void register_host_memory(const void* addr, size_t bytes);
  void unregister_host_memory(const void* addr, size_t bytes);

  // Identifies the calling thread in frames (small integers, stable per thread).
  static uint32_t current_thread_id();

 private:
  struct Stashed {
    FrameHeader header;
    std::vector<std::byte> payload;
  };

  Connection& connection();  // connects if needed; throws the sticky failure if any
  void connect_locked(std::unique_lock<std::mutex>& lock);
  void send_frame(uint32_t call_id, uint16_t flags, uint64_t request_id,
                  std::span<const ByteView> payload);
  void wait_reply(uint64_t request_id, ReplyDecoder decode);
  // Prints an output frame's bytes (protocol/output_frames.h) to the application's stdout or
  // stderr. Called by the receiving thread without mutex_.
  static void print_output(const Frame& frame);
  // Handles a frame that is not the one the receiving thread waits for. Called with mutex_ held.
  void route_locked(const Frame& frame);
  void fail_locked(const Error& error);
  // The batch's flusher thread: sends a batch once it is async_batch_us old.
  void run_flusher(Connection* connection);
  // Sends the held batch (with `also`, if any); send_mutex_ held. Fails the session on error.
  void send_batch_locked(Connection& connection, std::span<const ByteView> also = {});
  void stop_awaiting_locked(uint64_t request_id);
  // Receives the next reply frame on the receiving thread; when `landings` (some awaited request
  // had one as the thread took the receive side), lands the end of a reply where it can. Throws
  // like Connection::recv().
  Frame receive_reply(Connection& connection, bool landings);
  static void finish(const FrameHeader& header, std::span<const std::byte> payload,
                     ReplyDecoder decode);

  Config config_;
  std::vector<PluginRef> plugins_;
  std::optional<std::string> device_selection_;

  std::mutex mutex_;         // guards everything below except the connection's own send/recv
  std::mutex shared_mutex_;  // guards shared_blocks_
  std::optional<RangeAllocator> shared_blocks_;  // made when first asked, over shared_memory()
  // register_host_memory()'s ranges, registered with each connection as it is made (mutex_).
  std::vector<std::pair<const void*, size_t>> host_memory_;
  std::condition_variable replies_;
  std::unique_ptr<Connection> connection_;
  std::optional<HelloReply> hello_;
  std::string tcp_host_;              // set on connecting, with hello_
  std::optional<Error> failure_;      // sticky: set once the session is unusable
  std::optional<Error> async_error_;  // first deferred error not yet taken
  bool receiving_ = false;            // a thread is reading from the connection
  // Synchronous requests waiting for replies: one per waiting thread, so a vector that keeps its
  // capacity (no allocation per call, unlike a set's nodes).
  std::vector<uint64_t> awaited_;
  // The landings of awaited requests that have one (begin_call), by request id.
  std::vector<std::pair<uint64_t, gvirtus_landing*>> landings_;
  std::map<uint64_t, Stashed> stash_;  // replies read by another thread
  uint64_t next_request_id_ = 1;
  std::mutex send_mutex_;  // serialises sends; guards the batch and the flusher's state
  AsyncBatch batch_;
  std::condition_variable batch_waiting_;  // wakes the flusher (with send_mutex_)
  std::thread flusher_;                    // started with the first batched call
  bool stopping_ = false;
  uint64_t fork_generation_ = 0;
};

}  // namespace gvirtus
