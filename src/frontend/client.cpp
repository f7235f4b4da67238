#include "frontend/client.h"

#include <pthread.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "common/error.h"
#include "common/frame.h"
#include "common/log.h"
#include "communicators/factory.h"
#include "frontend/call_stats.h"
#include "frontend/client_auth.h"
#include "protocol/core_calls.h"
#include "protocol/output_frames.h"

namespace gvirtus {
namespace {

std::string program_name() {
  const char* name = program_invocation_short_name;
  return name != nullptr ? name : "?";
}

}  // namespace

Client::Client(Config config, std::vector<PluginRef> plugins,
               std::optional<std::string> device_selection)
    : config_(std::move(config)),
      plugins_(std::move(plugins)),
      device_selection_(std::move(device_selection)) {}

Client::~Client() {
  {
    std::lock_guard send_lock(send_mutex_);
    stopping_ = true;
    batch_waiting_.notify_all();
  }
  if (flusher_.joinable()) flusher_.join();
  try {
    flush_async();  // what the application sent last is not lost
  } catch (const Error&) {
    // The session is gone; the failure was logged when it happened.
  }
  if (connection_) connection_->shutdown();
}

void Client::end_at_exit() {
  try {
    flush_async();
  } catch (const Error&) {
    // The session is gone; the failure was logged when it happened.
  }
  std::lock_guard lock(mutex_);
  // Quietly: a thread still calling now gets an error, and nothing is worth a log line.
  if (!failure_) failure_ = Error(ErrorKind::kDisconnected, "the process is exiting");
  if (connection_) connection_->shutdown();
  replies_.notify_all();
}

void Client::fail(const Error& error) {
  std::lock_guard lock(mutex_);
  fail_locked(error);
}

void Client::open_plugin(const PluginRef& plugin, uint32_t version) {
  auto already_open = [&] {  // with mutex_ held
    for (const PluginRef& p : plugins_) {
      if (p.id != plugin.id) continue;
      if (p.name != plugin.name || p.table_hash != plugin.table_hash) {
        raise(ErrorKind::kFailed, "plugin \"" + plugin.name + "\" cannot open: its id " +
                                      std::to_string(plugin.id) + " is open as \"" + p.name +
                                      "\" with another call table");
      }
      return true;
    }
    return false;
  };
  {
    std::lock_guard lock(mutex_);
    if (already_open()) return;
    if (failure_) throw *failure_;
    if (!connection_) {  // the handshake will carry it
      plugins_.push_back(plugin);
      return;
    }
  }
  WireWriter out;
  encode(OpenPluginRequest{plugin, version}, out);
  const ByteView pieces[] = {out.view()};
  call(core::call_id(core::Fn::kOpenPlugin), pieces, [](WireReader& in) { in.expect_end(); });
  GVIRTUS_LOG(kDebug) << "plugin " << plugin.name << " joined the live session";
  std::lock_guard lock(mutex_);
  if (!already_open()) plugins_.push_back(plugin);  // or another thread opened it meanwhile
}

uint32_t Client::current_thread_id() {
  static std::atomic<uint32_t> next{1};
  thread_local const uint32_t id = next.fetch_add(1, std::memory_order_relaxed);
  return id;
}

void Client::connect() {
  (void)connection();
}

HelloReply Client::backend() {
  connection();
  std::lock_guard lock(mutex_);
  return *hello_;
}

std::string Client::tcp_host() {
  connection();
  std::lock_guard lock(mutex_);
  return tcp_host_;
}

std::span<std::byte> Client::shared_memory() {
  return connection().shared_memory();
}

std::optional<RangeAllocator::Range> Client::take_shared(uint64_t bytes) {
  const std::span<std::byte> memory = shared_memory();
  std::lock_guard lock(shared_mutex_);
  if (!shared_blocks_) shared_blocks_.emplace(memory.size(), kSharedPage);
  return shared_blocks_->take(bytes);
}

bool Client::give_back_shared(uint64_t offset) {
  std::lock_guard lock(shared_mutex_);
  return shared_blocks_ && shared_blocks_->give_back(offset);
}

void Client::register_host_memory(const void* addr, size_t bytes) {
  Connection* live = nullptr;
  {
    std::lock_guard lock(mutex_);
    host_memory_.emplace_back(addr, bytes);
    live = connection_.get();  // else connect_locked() registers it
  }
  if (live != nullptr) live->register_memory(addr, bytes);  // may pin pages: not under mutex_
}

void Client::unregister_host_memory(const void* addr, size_t bytes) {
  Connection* live = nullptr;
  {
    std::lock_guard lock(mutex_);
    const auto it = std::find(host_memory_.begin(), host_memory_.end(),
                              std::pair<const void*, size_t>(addr, bytes));
    if (it == host_memory_.end()) return;
    host_memory_.erase(it);
    live = connection_.get();
  }
  if (live != nullptr) live->unregister_memory(addr, bytes);
}

Connection& Client::connection() {
  std::unique_lock lock(mutex_);
  if (failure_) throw *failure_;
  if (!connection_) connect_locked(lock);
  return *connection_;
}

void Client::connect_locked(std::unique_lock<std::mutex>& lock) {  // `lock` holds mutex_
  if (config_.endpoints.empty()) {
    fail_locked(Error(ErrorKind::kInvalidInput, config_.source + ": no endpoint configured"));
    throw *failure_;
  }
  const auto timeout = std::chrono::milliseconds(config_.connect_timeout_ms);
  std::optional<Secret> secret;
  std::string visible_devices;
  try {
    secret = configured_secret(config_, SecretReader::kClient);
    visible_devices = device_selection_ ? *device_selection_ : effective_visible_devices(config_);
  } catch (const Error& e) {
    fail_locked(e);
    throw *failure_;
  }
  std::string reasons;
  for (const EndpointConfig& endpoint : config_.endpoints) {
    std::unique_ptr<Connection> connection;
    try {
      connection = make_communicator(endpoint, config_.limits.max_frame_bytes)->connect(timeout);
      // A backend that has not proven itself yet (no hello reply, no proof) cannot make this
      // process buffer a large frame: the same small bound as the backend's until authenticated.
      const uint64_t bound =
          std::min<uint64_t>(kHandshakeMaxFrameBytes, config_.limits.max_frame_bytes);
      connection->set_max_message(static_cast<size_t>(bound));
      // The handshake: hello out, hello reply (or a refusal) back, within the connect bound.
      HelloRequest hello{
          kProtocolVersion, program_name(), static_cast<uint32_t>(::getpid()), 0, plugins_,
          random_nonce(),   visible_devices};
      for (PluginRef& p : hello.plugins) {
        if (p.name == "cudart") hello.cuda_runtime_version = 13000;
      }
      WireWriter out;
      encode(hello, out);
      FrameHeader h;
      h.flags = kFlagRequest;
      h.call_id = core::call_id(core::Fn::kHello);
      h.thread_id = current_thread_id();
      h.request_id = 0;
      h.payload_bytes = static_cast<uint32_t>(out.size());
      const EncodedHeader header = encode_header(h);
      const ByteView pieces[] = {header.view(), out.view()};
      connection->send(pieces);
      const Frame reply = decode_frame(connection->recv(timeout), bound);
      HelloReply hello_reply;
      auto decode_hello = [&](WireReader& in) { hello_reply = decode_hello_reply(in); };
      finish(reply.header, reply.payload, decode_hello);
      authenticate_backend(*connection, config_, secret, hello_reply, out.view(), h.thread_id,
                           timeout);
      connection->set_max_message(static_cast<size_t>(config_.limits.max_frame_bytes));
      GVIRTUS_LOG(kInfo) << "connected to " << connection->peer_name() << " ("
                         << hello_reply.backend_version << ", worker " << hello_reply.worker_pid
                         << ")";
      for (const auto& [addr, bytes] : host_memory_) connection->register_memory(addr, bytes);
      connection_ = std::move(connection);
      hello_ = std::move(hello_reply);
      // A tcp endpoint's host, where other backends of a pool can reach this one too.
      if (endpoint.protocol() == "tcp") tcp_host_ = endpoint.string_or("server_address", "");
      return;
    } catch (const Error& e) {
      // An explicit refusal (version, plugins, overload) is final; a dead endpoint is not.
      if (e.kind() != ErrorKind::kDisconnected && e.kind() != ErrorKind::kTimedOut &&
          connection != nullptr) {
        fail_locked(e);
        throw *failure_;
      }
      reasons += (reasons.empty() ? "" : "; ") + std::string(e.what());
    }
  }
  fail_locked(Error(ErrorKind::kDisconnected, "no gvirtus backend reachable: " + reasons));
  throw *failure_;
}

void Client::fail_locked(const Error& error) {
  if (!failure_) {
    failure_ = error;
    GVIRTUS_LOG(kError) << error.what();
  }
  if (connection_) connection_->shutdown();
  replies_.notify_all();
}

void Client::send_frame(uint32_t call_id, uint16_t flags, uint64_t request_id,
                        std::span<const ByteView> payload) {
  Connection& conn = connection();
  uint64_t bytes = 0;
  for (const ByteView& piece : payload) bytes += piece.size();
  if (bytes + kFrameHeaderBytes > config_.limits.max_frame_bytes) {
    raise(ErrorKind::kInvalidInput, "a call of " + std::to_string(bytes) +
                                        " payload bytes exceeds the frame limit of " +
                                        std::to_string(config_.limits.max_frame_bytes));
  }
  FrameHeader h;
  h.flags = flags;
  h.call_id = call_id;
  h.thread_id = current_thread_id();
  h.request_id = request_id;
  h.payload_bytes = static_cast<uint32_t>(bytes);
  const EncodedHeader header = encode_header(h);
  ByteView pieces[16];
  if (payload.size() + 1 > std::size(pieces)) {
    raise(ErrorKind::kInvalidInput, "too many payload pieces");
  }
  pieces[0] = header.view();
  std::copy(payload.begin(), payload.end(), pieces + 1);
  const std::span<const ByteView> frame(pieces, payload.size() + 1);
  std::unique_lock send_lock(send_mutex_);
  if ((flags & kFlagAsync) != 0 && config_.async_batch_us > 0 && !stopping_ &&
      AsyncBatch::fits(bytes + kFrameHeaderBytes)) {
    const bool first = batch_.empty();
    batch_.add(frame);
    if (batch_.full()) {
      send_batch_locked(conn);
    } else if (first) {
      if (!flusher_.joinable()) {
        flusher_ = std::thread([this, c = &conn] { run_flusher(c); });
      } else {
        batch_waiting_.notify_one();
      }
    }
    return;
  }
  if (!batch_.empty()) {
    send_batch_locked(conn, frame);  // the held calls first: calls keep their order
    return;
  }
  try {
    conn.send(frame);
  } catch (const Error& e) {
    std::lock_guard lock(mutex_);
    fail_locked(e);
    throw *failure_;
  }
}

void Client::send_batch_locked(Connection& connection, std::span<const ByteView> also) {
  try {
    batch_.send(connection, also);
  } catch (const Error& e) {
    std::lock_guard lock(mutex_);
    fail_locked(e);
    throw *failure_;
  }
}

void Client::flush_async() {
  std::unique_lock send_lock(send_mutex_, std::defer_lock);
  // Bounded: at exit another thread may hold the lock for the length of one send.
  for (int tries = 0; !send_lock.try_lock(); ++tries) {
    if (tries == 1000) return;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  if (batch_.empty()) return;
  Connection* connection;
  {
    std::lock_guard lock(mutex_);
    if (failure_) throw *failure_;
    connection = connection_.get();
  }
  if (connection != nullptr) send_batch_locked(*connection);
}

void Client::run_flusher(Connection* connection) {
  // A batch is due within microseconds: the default 50 µs timer slack would more than double
  // the wait.
  ::prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
  const auto window = std::chrono::microseconds(config_.async_batch_us);
  std::unique_lock send_lock(send_mutex_);
  while (!stopping_) {
    if (batch_.empty()) {
      batch_waiting_.wait(send_lock);
      continue;
    }
    const auto due = batch_.since() + window;
    if (std::chrono::steady_clock::now() < due) {
      batch_waiting_.wait_until(send_lock, due);
      continue;
    }
    try {
      send_batch_locked(*connection);
    } catch (const Error&) {
      // The session has failed (fail_locked ran): the application's next call reports it.
    }
  }
}

void Client::call(uint32_t call_id, std::span<const ByteView> payload, ReplyDecoder decode) {
  SyncCallStats stats(call_id, payload, decode);  // GVIRTUS_STATS: inert when off
  wait_reply(begin_call(call_id, payload).request_id, stats.decoder());
}

Client::PendingCall Client::begin_call(uint32_t call_id, std::span<const ByteView> payload,
                                       gvirtus_landing* landing) {
  uint64_t id;
  {
    std::lock_guard lock(mutex_);
    id = next_request_id_++;
    awaited_.push_back(id);
    if (landing != nullptr) {
      landing->landed = 0;
      landings_.emplace_back(id, landing);
    }
  }
  try {
    send_frame(call_id, kFlagRequest, id, payload);
  } catch (...) {
    std::lock_guard lock(mutex_);
    stop_awaiting_locked(id);
    throw;
  }
  // The bytes matter only to GVIRTUS_STATS: not summed when it is off.
  return PendingCall{id, call_id, call_stats_enabled() ? payload_bytes(payload) : 0};
}

void Client::finish_call(PendingCall pending, ReplyDecoder decode) {
  SyncCallStats stats(pending.call_id, pending.request_bytes, decode);  // inert when off
  wait_reply(pending.request_id, stats.decoder());
}

void Client::send_async(uint32_t call_id, std::span<const ByteView> payload) {
  AsyncCallStats stats(call_id, payload);  // GVIRTUS_STATS: inert when off
  uint64_t id;
  {
    std::lock_guard lock(mutex_);
    id = next_request_id_++;
  }
  send_frame(call_id, kFlagRequest | kFlagAsync, id, payload);
}

void Client::wait_reply(uint64_t request_id, ReplyDecoder decode) {
  std::unique_lock lock(mutex_);
  for (;;) {
    if (auto it = stash_.find(request_id); it != stash_.end()) {
      Stashed reply = std::move(it->second);
      stash_.erase(it);
      stop_awaiting_locked(request_id);
      lock.unlock();
      finish(reply.header, reply.payload, decode);
      return;
    }
    if (failure_) {
      stop_awaiting_locked(request_id);
      throw *failure_;
    }
    if (receiving_) {
      replies_.wait(lock);
      continue;
    }
    // This thread reads for everyone until its own reply arrives.
    receiving_ = true;
    Connection& conn = *connection_;
    const bool landings = !landings_.empty();  // read under the lock this thread holds anyway
    lock.unlock();
    Frame frame;
    try {
      frame = receive_reply(conn, landings);
      if (!frame.header.is_reply()) {
        raise(ErrorKind::kInvalidInput, "the backend sent a request frame");
      }
    } catch (const Error& e) {
      lock.lock();
      receiving_ = false;
      stop_awaiting_locked(request_id);
      fail_locked(Error(e.kind(), std::string("lost the gvirtus backend: ") + e.what()));
      throw *failure_;
    }
    if (is_output_frame(frame.header)) {
      print_output(frame);  // before the reply it came ahead of; the payload is still valid
      lock.lock();
      receiving_ = false;
      replies_.notify_all();
      continue;
    }
    if (frame.header.request_id == request_id) {
      // Decode while this thread still owns the receive side: the payload lives in the
      // connection's buffer until the next recv(), which no other thread may start before.
      std::optional<Error> error;
      try {
        finish(frame.header, frame.payload, decode);
      } catch (const Error& e) {
        error = e;
      }
      lock.lock();
      receiving_ = false;
      stop_awaiting_locked(request_id);
      replies_.notify_all();
      if (error) throw *error;
      return;
    }
    lock.lock();
    receiving_ = false;
    route_locked(frame);
    replies_.notify_all();
  }
}

void Client::print_output(const Frame& frame) {
  const uint8_t which = frame.payload.empty() ? 0 : static_cast<uint8_t>(frame.payload[0]);
  FILE* stream = which == static_cast<uint8_t>(OutputStream::kStdout)   ? stdout
                 : which == static_cast<uint8_t>(OutputStream::kStderr) ? stderr
                                                                        : nullptr;
  if (stream == nullptr) {
    GVIRTUS_LOG(kWarning) << "ignoring output for an unknown stream: " << describe(frame.header);
    return;
  }
  // Through stdio, as the driver prints natively: the output takes its place among what the
  // application printed itself and has not flushed yet.
  std::fwrite(frame.payload.data() + 1, 1, frame.payload.size() - 1, stream);
  std::fflush(stream);
}

void Client::route_locked(const Frame& frame) {
  const FrameHeader& h = frame.header;
  if (std::find(awaited_.begin(), awaited_.end(), h.request_id) != awaited_.end()) {
    stash_[h.request_id] = Stashed{h, {frame.payload.begin(), frame.payload.end()}};
    return;
  }
  if (h.is_error()) {
    // An error for an asynchronous call: reported later, like CUDA's asynchronous errors.
    const std::string message(reinterpret_cast<const char*>(frame.payload.data()),
                              frame.payload.size());
    GVIRTUS_LOG(kDebug) << "deferred error for " << describe(h) << ": " << message;
    if (!async_error_) async_error_ = Error(static_cast<ErrorKind>(h.status), message);
    return;
  }
  GVIRTUS_LOG(kWarning) << "ignoring an unexpected reply: " << describe(h);
}

void Client::stop_awaiting_locked(uint64_t request_id) {
  const auto it = std::find(awaited_.begin(), awaited_.end(), request_id);
  if (it != awaited_.end()) {
    *it = awaited_.back();
    awaited_.pop_back();
  }
  std::erase_if(landings_, [&](const auto& entry) { return entry.first == request_id; });
}

Frame Client::receive_reply(Connection& conn, bool landings) {
  std::optional<std::chrono::milliseconds> timeout;
  if (config_.reply_timeout_ms > 0) timeout = std::chrono::milliseconds(config_.reply_timeout_ms);
  if (!landings)
    return decode_frame(timeout ? conn.recv(*timeout) : conn.recv(),
                        config_.limits.max_frame_bytes);
  // Decided from the frame's header alone, before the rest of the frame is read: a success
  // reply to a request with a landing, exactly as long as the landing expects.
  Placement chosen;  // the landing's, once one is chosen
  auto place = [&](ByteView head, size_t message_bytes) -> Placement {
    if (head.size() < kFrameHeaderBytes) return {};
    const FrameHeader h =
        decode_frame(head, config_.limits.max_frame_bytes, message_bytes - head.size()).header;
    if (!h.is_reply() || h.is_error()) return {};
    std::lock_guard lock(mutex_);
    for (auto& [id, landing] : landings_) {
      if (id != h.request_id) continue;
      if (landing->bytes == 0 || h.payload_bytes != landing->at + landing->bytes) return {};
      landing->landed = 1;
      chosen = {kFrameHeaderBytes + static_cast<size_t>(landing->at),
                {static_cast<std::byte*>(landing->into), static_cast<size_t>(landing->bytes)}};
      return chosen;
    }
    return {};
  };
  ByteView message = conn.recv_placed(kFrameHeaderBytes, place, timeout);
  // A transport hands back the whole message when it did not place its end (none does so for a
  // placement that fits, but a reply's bytes must reach the landing whatever the transport did).
  if (!chosen.into.empty() && message.size() == chosen.at + chosen.into.size()) {
    std::memcpy(chosen.into.data(), message.data() + chosen.at, chosen.into.size());
    message = message.first(chosen.at);
  }
  return decode_frame(message, config_.limits.max_frame_bytes, chosen.into.size());
}

std::optional<Error> Client::take_async_error() {
  std::lock_guard lock(mutex_);
  return std::exchange(async_error_, std::nullopt);
}

void Client::finish(const FrameHeader& header, std::span<const std::byte> payload,
                    ReplyDecoder decode) {
  if (header.is_error()) {
    raise(static_cast<ErrorKind>(header.status),
          std::string(reinterpret_cast<const char*>(payload.data()), payload.size()));
  }
  WireReader in(payload, "reply");
  decode(in);
}

}  // namespace gvirtus
