#include "backend/session.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <unordered_map>
#include <vector>

#include "backend/call_meter.h"
#include "backend/executor.h"
#include "backend/gpu_inventory.h"
#include "backend/inflight_budget.h"
#include "backend/metrics_table.h"
#include "backend/session_auth.h"
#include "backend/session_registry.h"
#include "backend/session_table.h"
#include "common/device_selection.h"
#include "common/frame.h"
#include "common/log.h"
#include "protocol/core_calls.h"
#include "protocol/handshake.h"
#include "protocol/output_frames.h"

namespace gvirtus {
namespace {

constexpr const char* kBackendVersion = "gvirtus-backend 0.1.0";

// Client threads beyond this many share executors (by thread id, so each keeps its order): a
// client cannot make its worker start threads without bound.
constexpr size_t kMaxExecutors = 128;
// Plugins one session may open besides core (the hello carries at most as many).
constexpr size_t kMaxOpenPlugins = kMaxHelloPlugins;
// How long a call waits for a call sent ahead before it
// (Session::wait_for_earlier_calls_sent_ahead).
constexpr auto kOrderWait = std::chrono::milliseconds(100);

class Session {
 public:
  Session(Connection& connection, const PluginRegistry& plugins, const Limits& limits,
          std::optional<Secret> secret, const ModuleCacheConfig& module_cache,
          OutputRelay* output_relay)
      : connection_(connection),
        plugins_(plugins),
        limits_(limits),
        secret_(std::move(secret)),
        output_relay_(output_relay),
        transport_(MetricsTable::transport_index(connection.transport())),
        inflight_(limits.max_inflight_bytes) {
    info_.peer = connection.peer_name();
    info_.transport = connection.transport();
    info_.shared_memory = connection.shared_memory();
    info_.device_bytes = current_session_device_bytes();
    info_.registry = registry_.table();
    info_.client_gone = &client_gone_;
    if (module_cache.max_bytes != 0) {
      info_.module_cache_dir = module_cache.path;
      info_.module_cache_max_bytes = module_cache.max_bytes;
    }
  }

  ~Session() {
    ending_ = true;    // calls still queued are for a session that is over: skip them
    client_gone_ = 1;  // calls waiting for the client (a host function's gate) stop waiting
    wake_waiting_calls();
    executors_.clear();  // first: they use everything else
  }

  void run() {
    try {
      handshake();
    } catch (...) {
      // Authentication failures are counted where they happen; every other failure here.
      if (!auth_failed_) count(&MetricsTable::count_handshake_failure);
      throw;
    }
    count(&MetricsTable::count_session);
    read_calls();  // returns when the session switches to executors
    serve_inline_thread_here();
  }

 private:
  void handshake() {
    // Until the client has proven itself (a valid hello, and its proof when a secret is
    // configured) it may send only small frames: nothing larger is buffered for it.
    const uint64_t bound = std::min<uint64_t>(kHandshakeMaxFrameBytes, limits_.max_frame_bytes);
    connection_.set_max_message(static_cast<size_t>(bound));
    ByteView first;
    try {
      first = connection_.recv(kHandshakeTimeout);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::kInvalidInput) throw;
      raise(ErrorKind::kInvalidInput,
            std::string(e.what()) + ", the bound on frames until the handshake completes");
    }
    const Frame frame = decode_frame(first, bound);
    if (!frame.header.is_request() || frame.header.call_id != core::call_id(core::Fn::kHello)) {
      raise(ErrorKind::kInvalidInput,
            "the first frame must be a hello request, got " + describe(frame.header));
    }
    WireReader in(frame.payload, "hello");
    const HelloRequest hello = decode_hello_request(in);
    info_.program = hello.program;
    info_.client_pid = hello.pid;
    if (hello.protocol_version != kProtocolVersion) {
      refuse(frame.header, ErrorKind::kInvalidInput,
             "protocol version " + std::to_string(hello.protocol_version) +
                 " is not supported by this backend (it speaks " +
                 std::to_string(kProtocolVersion) + ")");
    }
    // Before any plugin opens: the first to initialise CUDA reads CUDA_VISIBLE_DEVICES.
    if (auto refusal = select_devices(hello.visible_devices)) {
      refuse(frame.header, refusal->first, refusal->second);
    }
    for (const PluginRef& ref : hello.plugins) {
      if (auto refusal = open_plugin(ref, 0)) refuse(frame.header, refusal->first, refusal->second);
    }
    {
      std::lock_guard lock(sessions_mutex_);
      BackendPlugin* core_plugin = plugins_.find(core::kPluginId);
      add_session_locked(core::kPluginId, core_plugin, core_plugin->open_session(info_));
    }

    HelloReply reply{kBackendVersion, static_cast<uint32_t>(::getpid()), limits_.max_frame_bytes};
    std::optional<BackendChallenge> challenge;
    if (secret_) challenge = issue_challenge(*secret_, frame.payload, reply);
    reply_.clear();
    encode(reply, reply_);
    send_reply(frame.header, reply_.view(), 0, 0);
    if (challenge) {
      try {
        await_client_proof(connection_, *secret_, *challenge, bound, kHandshakeTimeout);
      } catch (...) {
        auth_failed_ = true;
        count(&MetricsTable::count_auth_failure);
        throw;
      }
    }
    secret_.reset();  // wiped (Secret's destructor): authenticated, the worker needs it no more
    connection_.set_max_message(static_cast<size_t>(limits_.max_frame_bytes));
    publish_current_session(info_.peer, info_.transport, info_.program, info_.client_pid);
    GVIRTUS_LOG(kInfo) << "session with " << info_.program << " (pid " << info_.client_pid
                       << ") at " << info_.peer << " started";
  }

  // Applies the client's device selection (common/device_selection.h) to this worker's
  // CUDA_VISIBLE_DEVICES, or says why it cannot be. The worker has not initialised CUDA (the daemon
  // never does, and no plugin has opened yet) and runs no other thread yet, so setenv is safe.
  std::optional<std::pair<ErrorKind, std::string>> select_devices(const std::string& text) {
    std::string visible;
    try {
      const auto selection = parse_device_selection(text, "the client's device selection");
      if (!selection) return std::nullopt;
      const char* backend = std::getenv("CUDA_VISIBLE_DEVICES");
      visible = compose_visible_devices(backend, *selection);
      if ((backend == nullptr || *backend == '\0') && !serves_a_simulated_device()) {
        check_against_gpus(*selection);
      }
    } catch (const Error& e) {
      return std::pair(ErrorKind::kInvalidInput, std::string(e.what()));
    }
    ::setenv("CUDA_VISIBLE_DEVICES", visible.c_str(), 1);
    GVIRTUS_LOG(kInfo) << "session with " << info_.program << ": devices " << text
                       << " selected (CUDA_VISIBLE_DEVICES=" << visible << ")";
    return std::nullopt;
  }

  // A test double's devices (a "-simulated" variant: docs/testing.md) are its own, whatever GPUs
  // NVML counts on the machine: the simulated device judges the selection.
  bool serves_a_simulated_device() const {
    for (const auto& [id, name] : plugins_.served()) {
      if (plugins_.configured_name(id).ends_with("-simulated")) return true;
    }
    return false;
  }

  // Where NVML can count the GPUs, a selection of one that does not exist is refused here: CUDA
  // would quietly hide it and every device after it.
  static void check_against_gpus(const std::vector<uint32_t>& selection) {
    const GpuInventory gpus = read_gpu_inventory();
    if (!gpus.error.empty()) return;  // no NVML (no driver, the simulated device): CUDA decides
    for (const uint32_t d : selection) {
      if (d >= gpus.gpus.size()) {
        raise(ErrorKind::kInvalidInput, "device " + std::to_string(d) +
                                            " was selected, but this backend has " +
                                            std::to_string(gpus.gpus.size()) + " GPUs");
      }
    }
  }

  // Opens `ref` in this session (idempotent), or says why not: a plugin this backend does not
  // serve, a different call table, or an interface version it does not speak.
  std::optional<std::pair<ErrorKind, std::string>> open_plugin(const PluginRef& ref,
                                                               uint32_t version) {
    BackendPlugin* plugin = plugins_.find(ref.id);
    if (plugin == nullptr || plugin->identity().name != ref.name) {
      if (const auto why = plugins_.refusal(ref.name)) {
        return std::pair(ErrorKind::kUnimplemented,
                         "plugin \"" + ref.name + "\" cannot be served by this backend: " + *why);
      }
      return std::pair(ErrorKind::kUnimplemented, "this backend does not serve plugin \"" +
                                                      ref.name +
                                                      "\" (it serves: " + plugins_.names() + ")");
    }
    if (plugin->identity().table_hash != ref.table_hash) {
      return std::pair(ErrorKind::kInvalidInput,
                       "plugin \"" + ref.name + "\" differs between client and backend (call " +
                           "table hash mismatch): install matching gvirtus versions on both sides");
    }
    const uint32_t served = plugin->identity().version;
    if (version != 0 && served != 0 && version != served) {
      return std::pair(ErrorKind::kUnimplemented,
                       "plugin \"" + ref.name + "\": the client speaks interface version " +
                           std::to_string(version) + ", this backend serves version " +
                           std::to_string(served));
    }
    // Held while the plugin opens, so that two threads opening one plugin open it once; calls to
    // open plugins go on meanwhile (find_session takes no lock).
    std::lock_guard lock(sessions_mutex_);
    if (sessions_.count(ref.id) != 0) return std::nullopt;
    if (sessions_.size() > kMaxOpenPlugins) {  // core is one of them
      return std::pair(ErrorKind::kOverloaded, "plugin \"" + ref.name +
                                                   "\": a session opens at most " +
                                                   std::to_string(kMaxOpenPlugins) + " plugins");
    }
    // A plugin that cannot open here (the library it runs calls on is absent, say) is refused
    // like any other, naming it and why; the session goes on without it.
    std::unique_ptr<PluginSession> opened;
    try {
      opened = plugin->open_session(info_);
    } catch (const Error& e) {
      // Invalid input would say the client's request was malformed: it was not, so kFailed.
      return std::pair(e.kind() == ErrorKind::kInvalidInput ? ErrorKind::kFailed : e.kind(),
                       "plugin \"" + ref.name + "\" cannot open a session: " + e.what());
    }
    add_session_locked(ref.id, plugin, std::move(opened));
    publish_current_session_plugins(plugin_names_locked());
    return std::nullopt;
  }

  // Adds an opened plugin session: owned by sessions_, and published for lock-free lookup.
  void add_session_locked(uint16_t id, const BackendPlugin* plugin,
                          std::unique_ptr<PluginSession> session) {
    const size_t n = open_count_.load(std::memory_order_relaxed);
    open_[n] = OpenSession{id, session.get(), plugin};
    sessions_[id] = std::move(session);
    open_count_.store(n + 1, std::memory_order_release);
  }

  // Where the open plugin session serving `id` lies in open_, or open_.size() when none: every
  // call looks here, with no lock (plugins are only ever added while the session lives).
  size_t find_open(uint16_t id) const {
    const size_t n = open_count_.load(std::memory_order_acquire);
    for (size_t i = 0; i < n; ++i) {
      if (open_[i].id == id) return i;
    }
    return open_.size();
  }

  // The plugin session serving `id`, and its plugin, or null.
  PluginSession* find_session(uint16_t id) const {
    const size_t i = find_open(id);
    return i < open_.size() ? open_[i].session : nullptr;
  }
  const BackendPlugin* find_plugin(uint16_t id) const {
    const size_t i = find_open(id);
    return i < open_.size() ? open_[i].plugin : nullptr;
  }

  std::string plugin_names_locked() const {
    std::string names;
    for (const auto& [id, session] : sessions_) {
      if (id == core::kPluginId) continue;
      if (plugins_.find(id) != nullptr) {
        // The configured name: a variant says so ("cuda-simulated").
        names += (names.empty() ? "" : ",") + plugins_.configured_name(id);
      }
    }
    return names;
  }

  // A core OpenPlugin call: a stub library joins the live session. A refusal is an error reply
  // (the session goes on); a malformed request ends the session like any other.
  void serve_open_plugin(const FrameHeader& h, std::span<const std::byte> payload,
                         WireWriter& reply, CallMeter& meter) {
    WireReader in(payload, "OpenPlugin");
    const OpenPluginRequest request = decode_open_plugin(in);
    if (request.plugin.id == core::kPluginId) {
      meter.failed(fail_call(h, reply, ErrorKind::kInvalidInput, "the core plugin is always open"));
      return;
    }
    if (auto refusal = open_plugin(request.plugin, request.version)) {
      // Not kInvalidInput: that would end the session, and a refused plugin must not.
      const ErrorKind kind =
          refusal->first == ErrorKind::kInvalidInput ? ErrorKind::kFailed : refusal->first;
      GVIRTUS_LOG(kWarning) << info_.program << ": plugin refused: " << refusal->second;
      meter.failed(fail_call(h, reply, kind, refusal->second));
      return;
    }
    GVIRTUS_LOG(kInfo) << "session with " << info_.program << ": plugin " << request.plugin.name
                       << " joined";
    reply.clear();
    meter.replied(send_reply(h, reply.view(), 0, 0));
  }

  // Reads and dispatches calls until the session ends (throws why) or, on the thread that serves
  // the first client thread inline, until the session switches to executors (returns).
  void read_calls() {
    const auto idle = std::chrono::seconds(limits_.idle_timeout_s);
    while (!hand_off_reading_) {
      ByteView message;
      try {
        message = limits_.idle_timeout_s > 0 ? connection_.recv(idle) : connection_.recv();
      } catch (const Error& e) {
        // A client waiting for a long call is not idle.
        if (e.kind() == ErrorKind::kTimedOut && executors_busy()) continue;
        std::lock_guard lock(fatal_mutex_);
        if (fatal_) throw *fatal_;  // an executor ended the session: say why
        throw;
      }
      count_current_request(message.size());  // for status queries (gvirtus-smi)
      dispatch(decode_frame(message, limits_.max_frame_bytes));
    }
  }

  // The session switched to executors: this thread, which served the first client thread inline,
  // goes on serving it as that thread's executor, and a new thread reads. So the first client
  // thread's calls never change backend thread, and what CUDA keeps per host thread (the current
  // context, a stream capture begun before a host function, the runtime's device and last error)
  // stays theirs. When reading ends, the executor here finishes and the reason is thrown.
  void serve_inline_thread_here() {
    auto own = std::make_unique<Executor>(executor_run(), Executor::OnCallingThread{});
    Executor& here = *own;
    executor_list_.push_back(own.get());
    executors_.emplace(*inline_thread_, std::move(own));
    hand_off_reading_ = false;  // done: the reader reads until the session ends
    std::exception_ptr why;
    std::thread reader([&] {
      try {
        read_calls();
      } catch (...) {
        why = std::current_exception();
      }
      ending_ = true;    // what is still queued is for a session that is over
      client_gone_ = 1;  // a call waiting for the client (a host function's gate) stops waiting
      wake_waiting_calls();
      here.stop();
    });
    here.run_here();
    reader.join();
    if (why) std::rethrow_exception(why);
  }

  // Sends an error reply for the hello and ends the session.
  [[noreturn]] void refuse(const FrameHeader& request, ErrorKind kind, const std::string& why) {
    send_error(request, reply_, kind, why);
    raise(ErrorKind::kInvalidInput, "handshake refused: " + why);
  }

  // The first client thread's calls run here, on the reading thread (no hand-off for a
  // single-threaded program); every other client thread's run on its executor.
  void dispatch(const Frame& frame) {
    const FrameHeader& h = frame.header;
    if (!h.is_request()) raise(ErrorKind::kInvalidInput, "a client sent a reply frame");
    if (current_session_is_status_only() && h.call_id != core::call_id(core::Fn::kStatus)) {
      const std::string why = "the backend serves its maximum of " +
                              std::to_string(limits_.max_sessions) + " sessions; try again later";
      send_error(h, reply_, ErrorKind::kOverloaded, why);
      count(&MetricsTable::count_refused_for_limits);
      raise(ErrorKind::kOverloaded, why);  // ends this session
    }
    if (h.call_id == core::call_id(core::Fn::kServeOnExecutors)) {
      // Here, on the reading thread, so that every later frame is dispatched the new way. The
      // inline thread's earlier calls have all finished: they ran here.
      if (!h.is_async()) {
        WireReader(frame.payload, "ServeOnExecutors").expect_end();
        // A thread that served calls inline keeps them (serve_inline_thread_here).
        if (!serve_on_executors_) hand_off_reading_ = inline_thread_.has_value();
        serve_on_executors_ = true;
        reply_.clear();
        send_reply(h, reply_.view(), 0, 0);
      }
      return;
    }
    if (h.call_id == core::call_id(core::Fn::kServesTheClient)) {
      if (!h.is_async()) {
        WireReader(frame.payload, "ServesTheClient").expect_end();
        unordered_threads_.insert(h.thread_id);
        reply_.clear();
        send_reply(h, reply_.view(), 0, 0);
      }
      return;
    }
    if (!inline_thread_ && !serve_on_executors_) inline_thread_ = h.thread_id;
    // 0: a thread that serves the client waits for nothing (ServesTheClient).
    const uint64_t order = unordered_threads_.contains(h.thread_id) ? 0 : ++arrived_;
    if (!serve_on_executors_ && h.thread_id == *inline_thread_) {
      // Done before the next frame is read: no later call can overtake it. Without executors
      // (a single-threaded program) nothing earlier can still be running.
      if (!executor_list_.empty()) wait_for_earlier_calls_sent_ahead(order);
      execute(h, frame.payload, reply_);
    } else {
      Executor& executor = executor_for(h.thread_id);
      inflight_.acquire(frame.payload.size());  // back-pressure: may wait for the executors
      if (h.is_async() && order != 0) {
        std::lock_guard lock(order_mutex_);
        ahead_.push_back(order);  // orders only rise: the list stays sorted
      }
      executor.post(h, frame.payload, order);
    }
  }

  // Calls of different client threads run on different backend threads, but a call a client
  // thread sent ahead (a launch, an asynchronous copy, an event record: it did not wait for it)
  // was made, as the application sees it, before any call that reached the backend after it: a
  // second thread may already rely on it (PyTorch's autograd thread enqueues the backward pass on
  // the stream the main thread's forward pass went to). So a call starts only once every call
  // sent ahead that arrived before it has run; calls the client waits for hold nothing up (their
  // client thread sends nothing more until they return, and whatever another thread does
  // meanwhile is unordered natively too). The calls of one executor run in order anyway.
  //
  // A call sent ahead that is still running after kOrderWait is blocked in the library (a full
  // launch queue, a pageable copy waiting for its stream, a host function's gate): later calls
  // then go on, as natively other threads would while the thread that made it is blocked in it.
  void wait_for_earlier_calls_sent_ahead(uint64_t order) {
    if (order == 0) return;
    std::unique_lock lock(order_mutex_);
    order_changed_.wait_for(lock, kOrderWait, [&] {
      return ahead_.empty() || ahead_.front() >= order || ending_.load(std::memory_order_relaxed);
    });
  }

  // The session is ending: calls waiting for their turn stop waiting (and are skipped).
  void wake_waiting_calls() {
    { std::lock_guard lock(order_mutex_); }  // a waiter between its check and its wait sees it
    order_changed_.notify_all();
  }

  // A call sent ahead has run (or was skipped): later calls may start.
  void ran_call_sent_ahead(uint64_t order) {
    {
      std::lock_guard lock(order_mutex_);
      // Mostly the first: calls sent ahead finish about in the order they came.
      if (const auto it = std::lower_bound(ahead_.begin(), ahead_.end(), order);
          it != ahead_.end() && *it == order) {
        ahead_.erase(it);
      }
    }
    order_changed_.notify_all();
  }

  void execute(const FrameHeader& h, std::span<const std::byte> payload, WireWriter& reply) {
    CallMeter meter(transport_, call_plugin(h.call_id), kFrameHeaderBytes + payload.size());
    if (h.call_id == core::call_id(core::Fn::kOpenPlugin)) {
      serve_open_plugin(h, payload, reply, meter);
      return;
    }
    PluginSession* session = find_session(call_plugin(h.call_id));
    if (session == nullptr) {
      meter.failed(fail_call(h, reply, ErrorKind::kUnimplemented,
                             "plugin " + std::to_string(call_plugin(h.call_id)) +
                                 " was not opened in this session (" + describe(h) + ")"));
      return;
    }
    reply.clear();
    Call call{h, WireReader(payload, "request"), reply};
    try {
      session->handle(call);
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::kInvalidInput) throw;  // malformed request: end the session
      meter.failed(fail_call(h, reply, e.kind(), e.what()));
      return;
    }
    // A plugin behind the C ABI replies from its own buffer (Call::reply_bytes), not `reply`.
    if (!h.is_async()) {
      meter.replied(send_reply(h, call.reply_bytes ? *call.reply_bytes : reply.view(), 0, 0));
    }
  }

  Executor& executor_for(uint32_t thread_id) {
    if (auto it = executors_.find(thread_id); it != executors_.end()) return *it->second;
    if (executors_.size() >= kMaxExecutors) return *executor_list_[thread_id % kMaxExecutors];
    auto executor = std::make_unique<Executor>(executor_run());
    executor_list_.push_back(executor.get());
    return *executors_.emplace(thread_id, std::move(executor)).first->second;
  }

  // What an executor does with each call.
  Executor::Run executor_run() {
    return [this, reply = WireWriter()](const FrameHeader& h, std::span<const std::byte> payload,
                                        uint64_t order) mutable {
      struct Release {  // whatever happens to the call, its bytes are no longer queued and, if
                        // it was sent ahead, later calls need not wait for it
        Session& session;
        uint64_t bytes;
        uint64_t ahead;  // its order, or 0 for a call the client waits for
        ~Release() {
          session.inflight_.release(bytes);
          if (ahead != 0) session.ran_call_sent_ahead(ahead);
        }
      } release{*this, payload.size(), h.is_async() ? order : 0};  // 0: nothing waits for it
      if (ending_.load(std::memory_order_relaxed)) return;
      wait_for_earlier_calls_sent_ahead(order);
      if (ending_.load(std::memory_order_relaxed)) return;
      try {
        execute(h, payload, reply);
      } catch (const Error& e) {
        end_session(e);
      } catch (const std::exception& e) {
        end_session(Error(ErrorKind::kFailed, std::string("internal error: ") + e.what()));
      }
    };
  }

  // Called on an executor: the session cannot go on; the reading thread reports `why`.
  void end_session(const Error& why) {
    {
      std::lock_guard lock(fatal_mutex_);
      if (!fatal_) fatal_ = why;
    }
    ending_.store(true, std::memory_order_relaxed);
    wake_waiting_calls();
    connection_.shutdown();  // wakes the reading thread
  }

  bool executors_busy() const {
    for (const Executor* e : executor_list_) {
      if (e->busy()) return true;
    }
    return false;
  }

  // A call failed without ending the session: the error goes back now for a synchronous call,
  // and as a deferred error frame for an asynchronous one (the client reports it later).
  // Returns the bytes sent.
  uint64_t fail_call(const FrameHeader& request, WireWriter& reply, ErrorKind kind,
                     const std::string& why) {
    GVIRTUS_LOG(kDebug) << info_.peer << ": " << describe(request) << " failed: " << why;
    return send_error(request, reply, kind, why);
  }

  uint64_t send_error(const FrameHeader& request, WireWriter& reply, ErrorKind kind,
                      const std::string& why) {
    reply.clear();
    reply.put_raw(why.data(), why.size());
    return send_reply(request, reply.view(), kFlagError, static_cast<uint32_t>(kind));
  }

  // Thread-safe: executors and the reading thread send replies. Returns the bytes sent, header
  // included.
  uint64_t send_reply(const FrameHeader& request, ByteView reply, uint16_t extra_flags,
                      uint32_t status) {
    if (output_relay_ != nullptr && !request.is_async() &&
        call_plugin(request.call_id) != core::kPluginId) {
      relay_output(request);
    }
    FrameHeader h;
    h.flags = static_cast<uint16_t>(kFlagReply | extra_flags);
    h.call_id = request.call_id;
    h.thread_id = request.thread_id;
    h.request_id = request.request_id;
    h.status = status;
    h.payload_bytes = static_cast<uint32_t>(reply.size());
    const EncodedHeader header = encode_header(h);
    const ByteView pieces[] = {header.view(), reply};
    std::lock_guard lock(send_mutex_);
    connection_.send(pieces);
    count_current_reply(header.view().size() + reply.size());
    return header.view().size() + reply.size();
  }

  // Sends what the worker printed so far (backend/output_relay.h) as output frames: before a
  // synchronous reply, so that the client, reading it, prints the output before its call returns.
  // Before the reply of a call that prints nothing itself, what the relay already took.
  void relay_output(const FrameHeader& request) {
    const uint32_t thread_id = request.thread_id;
    const auto send = [&](OutputStream stream, std::string_view bytes) {
      while (!bytes.empty()) {
        const size_t n = std::min(bytes.size(), kMaxOutputPayload);
        const EncodedHeader header = encode_header(output_frame_header(thread_id, n));
        const std::byte which = static_cast<std::byte>(stream);
        const ByteView pieces[] = {header.view(), ByteView(&which, 1),
                                   std::as_bytes(std::span(bytes.data(), n))};
        {
          std::lock_guard lock(send_mutex_);
          connection_.send(pieces);
        }
        bytes.remove_prefix(n);
      }
    };
    const BackendPlugin* plugin = find_plugin(call_plugin(request.call_id));
    if (plugin != nullptr && plugin->quiet(call_function(request.call_id))) {
      output_relay_->drain_taken(send);
    } else {
      output_relay_->drain(send);
    }
  }

  // Adds one to a per-transport counter of the metrics table, where there is one.
  void count(void (MetricsTable::*counter)(size_t)) {
    if (MetricsTable* table = current_metrics()) (table->*counter)(transport_);
  }

  Connection& connection_;
  const PluginRegistry& plugins_;
  const Limits& limits_;
  std::optional<Secret> secret_;  // none: clients need not authenticate; gone once they did
  OutputRelay* output_relay_;     // the worker's, or none
  size_t transport_;              // in kTransports, for metrics
  bool auth_failed_ = false;      // the handshake failed authenticating: counted as such
  SessionInfo info_;
  SessionRegistry registry_;  // before sessions_: the plugins' sessions go first
  // Plugin sessions: owned here (guarded by sessions_mutex_: OpenPlugin adds while others call),
  // and looked up without a lock in open_, whose first open_count_ entries are published.
  std::mutex sessions_mutex_;
  std::map<uint16_t, std::unique_ptr<PluginSession>> sessions_;
  struct OpenSession {
    uint16_t id = 0;
    PluginSession* session = nullptr;
    const BackendPlugin* plugin = nullptr;
  };
  std::array<OpenSession, kMaxOpenPlugins + 1> open_{};  // + core
  std::atomic<size_t> open_count_{0};
  WireWriter reply_;                       // the reading thread's replies
  std::mutex send_mutex_;                  // serialises sends
  std::optional<uint32_t> inline_thread_;  // the client thread served on the reading thread
  bool serve_on_executors_ = false;        // a ServeOnExecutors call came: no inline thread
  bool hand_off_reading_ = false;  // the inline thread's backend thread serves it from now on
  uint64_t arrived_ = 0;  // calls dispatched so far (the reading thread's): each one's order
  std::set<uint32_t> unordered_threads_;  // the reading thread's: ServesTheClient's threads
  std::mutex order_mutex_;
  std::condition_variable order_changed_;
  // Guarded by order_mutex_: the orders of calls sent ahead, dispatched and not yet run, rising
  // (a deque: added at the back, mostly taken from the front, no allocation per call).
  std::deque<uint64_t> ahead_;
  std::atomic<int> client_gone_{0};  // SessionInfo::client_gone
  std::mutex fatal_mutex_;
  std::optional<Error> fatal_;  // why an executor ended the session
  std::atomic<bool> ending_{false};
  InflightBudget inflight_;  // request bytes queued for executors (limits.max_inflight_bytes)
  std::vector<Executor*> executor_list_;  // in creation order, for sharing beyond the bound
  // Last, so that it is destroyed first (the destructor clears it explicitly too).
  std::unordered_map<uint32_t, std::unique_ptr<Executor>> executors_;
};

}  // namespace

int run_session(Connection& connection, const PluginRegistry& plugins, const Limits& limits,
                std::optional<Secret> secret, const ModuleCacheConfig& module_cache,
                OutputRelay* output_relay) {
  Session session(connection, plugins, limits, std::move(secret), module_cache, output_relay);
  try {
    session.run();
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::kDisconnected) {
      GVIRTUS_LOG(kInfo) << "session with " << connection.peer_name() << " ended: " << e.what();
      return 0;
    }
    GVIRTUS_LOG(kWarning) << "session with " << connection.peer_name() << " ended: " << e.what();
    return 1;
  } catch (const std::exception& e) {
    GVIRTUS_LOG(kError) << "session with " << connection.peer_name()
                        << " ended by an internal error: " << e.what();
    return 2;
  }
  return 0;
}

}  // namespace gvirtus
