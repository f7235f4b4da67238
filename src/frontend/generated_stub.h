// The calling code of a stub library generated whole from its header and descriptor
// (tools/gen/gen_calls.py writes L_stub_calls.cpp on top of it; cudart, which has code of its
// own, has plugins/cudart/frontend/stub_call.h instead).
//
// A Library object, defined once in the generated stub, joins the process's one gvirtus session
// when the library is loaded (join_session) and makes its calls. call() and send() convert every
// gvirtus failure into the library's own status, once, so no exception ever crosses the stub's C
// ABI: a lost or unreachable backend, or a reply that cannot be read, is the descriptor's "lost"
// status; a plugin or call the backend does not serve its "not supported" status; anything else
// its "invalid value" status.
//
// Reply payload of every generated call: i32 status, then the call's outputs.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

#include "common/error.h"
#include "common/function_ref.h"
#include "common/log.h"
#include "common/wire.h"
#include "frontend/context_faults.h"
#include "frontend/process_session.h"
#include "frontend/route_scope.h"

namespace gvirtus::stub {

using Encoder = FunctionRef<void(WireWriter&)>;
using Decoder = FunctionRef<void(WireReader&)>;

// One reusable encode buffer per thread, shared by every generated library of the stub: no
// allocation per call once warm. A library's calls may come after the thread's thread_local
// objects are destroyed - NVIDIA's runtime calls the driver from its exit handlers, which run
// after the exiting thread's - and then get a buffer that is never freed (one, at exit).
inline WireWriter& encoder() {
  struct Held {
    WireWriter writer;
    bool* gone;
    ~Held() { *gone = true; }
  };
  thread_local bool gone = false;  // trivially destructible: readable to the very end
  thread_local WireWriter* after_exit = nullptr;
  if (gone) {
    if (after_exit == nullptr) after_exit = new WireWriter;
    after_exit->clear();
    return *after_exit;
  }
  thread_local Held held{WireWriter{}, &gone};
  held.writer.clear();
  return held.writer;
}

// Opens a stub library's plugin in the process's session - at the first connection, or on the
// live session - and names its calls for statistics; what fails is logged, never thrown (a stub
// calls this while it is being loaded). Every stub library calls it once, as it loads.
inline void join_session(const PluginIdentity& identity, const char* (*name_of)(uint16_t)) {
  if (!process_session::abi_compatible()) {
    GVIRTUS_LOG(kError) << "libgvirtus-frontend.so.1 speaks ABI version "
                        << gvirtus_frontend_abi_version() << ", the " << identity.name
                        << " stub was built for " << GVIRTUS_FRONTEND_ABI_VERSION
                        << ": install matching gvirtus libraries";
  }
  try {
    process_session::open_plugin(identity);
  } catch (const Error& e) {
    GVIRTUS_LOG(kError) << "the " << identity.name
                        << " plugin could not join the session: " << e.what();
  } catch (...) {
    GVIRTUS_LOG(kError) << "the " << identity.name << " plugin could not join the session";
  }
  try {
    gvirtus_register_call_names(identity.id, std::string(identity.name).c_str(), name_of);
  } catch (...) {
    // Only statistics' names are lost.
  }
}

template <typename Status>
class Library {
 public:
  struct Statuses {
    Status success;
    Status lost;           // the backend is lost or unreachable
    Status invalid_value;  // the call could not be made as asked
    Status not_supported;  // the backend does not serve the call or the plugin
  };

  // `faults`: the descriptor's context_faults (frontend/context_faults.h), if it has them.
  // `soname`: for a library without pool routing (its descriptor's pool_routing), whose calls in
  // a pool keep to the first backend (pinned_to_first_backend); null for one that routes its own.
  Library(const PluginIdentity& identity, const char* (*name_of)(uint16_t), Statuses statuses,
          const ContextFaults* faults = nullptr, const char* soname = nullptr)
      : statuses_(statuses), soname_(soname) {
    if (faults != nullptr) {
      faults_.emplace(*faults, static_cast<int32_t>(statuses.success));
    }
    join_session(identity, name_of);
  }

  // Sends one call and waits for its status; `decode` reads the outputs that follow it.
  Status call(uint32_t call_id, Encoder encode, Decoder decode) const noexcept {
    if (const auto refused = forked_refusal(call_id)) return *refused;
    const RouteScope route(pinned());
    try {
      WireWriter& args = encoder();
      encode(args);
      const ByteView pieces[] = {args.view()};
      Status result = statuses_.lost;
      process_session::call(call_id, pieces, [&](WireReader& in) {
        result = static_cast<Status>(in.get<int32_t>());
        decode(in);
        in.expect_end();
      });
      follow_context(call_id, result);
      return result;
    } catch (const Error& e) {
      return failure(call_id, e);
    } catch (...) {
      return statuses_.invalid_value;  // e.g. bad_alloc: never let an exception cross the C ABI
    }
  }

  // A call sent and not yet waited for (begin, then finish): calls may leave before its reply is
  // read, so that a copy in chunks keeps two in flight. `failed`: it could not be sent, and this
  // is its status.
  struct Pending {
    uint32_t call_id = 0;
    Status failed{};
    bool sent = false;
    process_session::PendingCall call{};
  };

  // `data`, when given, follows what `encode` wrote, sent from where it lies; `landing`, when
  // given, is where the end of the reply may land directly (process_session::Landing).
  Pending begin(uint32_t call_id, Encoder encode, ByteView data = {},
                process_session::Landing* landing = nullptr) const noexcept {
    const RouteScope route(pinned());
    Pending pending{call_id, statuses_.success, false, {}};
    if (const auto refused = forked_refusal(call_id)) {
      pending.failed = *refused;
      return pending;
    }
    if (faults_ && faults_->has_sticky()) {
      pending.failed = static_cast<Status>(faults_->sticky());
      return pending;
    }
    try {
      WireWriter& args = encoder();
      encode(args);
      const ByteView pieces[] = {args.view(), data};
      pending.call =
          process_session::begin_call(call_id, process_session::request_pieces(pieces), landing);
      pending.sent = true;
    } catch (const Error& e) {
      pending.failed = failure(call_id, e);
    } catch (...) {
      pending.failed = statuses_.invalid_value;
    }
    return pending;
  }

  // Waits for a begun call's status; `decode` reads the outputs that follow it. Calls begun on a
  // thread are finished on it, in the order they were begun.
  Status finish(const Pending& pending, Decoder decode) const noexcept {
    if (!pending.sent) return pending.failed;
    const RouteScope route(pinned());
    try {
      Status result = statuses_.lost;
      process_session::finish_call(pending.call, [&](WireReader& in) {
        result = static_cast<Status>(in.get<int32_t>());
        decode(in);
        in.expect_end();
      });
      follow_context(pending.call_id, result);
      return result;
    } catch (const Error& e) {
      return failure(pending.call_id, e);
    } catch (...) {
      return statuses_.invalid_value;
    }
  }

  // Sends one call without waiting: its failure on the backend is the library's to report later
  // (its last error), as the library reports its own asynchronous errors.
  // `data` as for begin().
  Status send(uint32_t call_id, Encoder encode, ByteView data = {}) const noexcept {
    if (const auto refused = forked_refusal(call_id)) return *refused;
    const RouteScope route(pinned());
    if (faults_) {
      if (faults_->has_sticky()) return static_cast<Status>(faults_->sticky());
      if (faults_->unavailable()) {  // rare: the data is copied into the request
        auto with_data = [&](WireWriter& w) {
          encode(w);
          w.put_raw(data.data(), data.size());
        };
        return call(call_id, with_data, [](WireReader&) {});
      }
    }
    try {
      WireWriter& args = encoder();
      encode(args);
      const ByteView pieces[] = {args.view(), data};
      process_session::send_async(call_id, process_session::request_pieces(pieces));
      return statuses_.success;
    } catch (const Error& e) {
      return failure(call_id, e);
    } catch (...) {
      return statuses_.invalid_value;
    }
  }

  // What the stub answers itself in a child forked after the library was initialized
  // (ContextFaults' forked_child): that status, or success.
  Status forked_child_status() const noexcept {
    return faults_ ? static_cast<Status>(faults_->forked_child_status()) : statuses_.success;
  }

 private:
  std::optional<Status> forked_refusal(uint32_t call_id) const {
    if (!faults_) return std::nullopt;
    const std::optional<int32_t> refused = faults_->forked_refusal(call_function(call_id));
    if (!refused) return std::nullopt;
    return static_cast<Status>(*refused);
  }

  std::optional<uint32_t> pinned() const {
    if (soname_ == nullptr) return std::nullopt;
    return pinned_to_first_backend(pinned_said_, soname_, "");
  }

  void follow_context(uint32_t call_id, Status result) const {
    if (faults_) faults_->follow(call_function(call_id), static_cast<int32_t>(result));
  }

  Status failure(uint32_t call_id, const Error& e) const {
    GVIRTUS_LOG(kDebug) << "call " << call_id << ": " << e.what();
    switch (e.kind()) {
      case ErrorKind::kDisconnected:
      case ErrorKind::kTimedOut:
      case ErrorKind::kOverloaded:
      case ErrorKind::kInvalidInput:  // a reply we cannot read: the session is not to be trusted
        return statuses_.lost;
      case ErrorKind::kUnimplemented:  // the plugin refused (its library absent), or the call
        return statuses_.not_supported;
      default:
        return statuses_.invalid_value;
    }
  }

  Statuses statuses_;
  mutable std::optional<ContextFaultState> faults_;
  const char* soname_;
  mutable std::atomic<bool> pinned_said_{false};
};

// What an export of a library generated whole calls when its stub does not implement it (the
// descriptor's exports.not_supported; gen_exports.py writes the calls): logs its name once and
// returns kStatus. The generated file cannot include the library's header (its prototypes would
// clash with the parameterless definitions), so kStatus is the status's number.
template <int kStatus>
int not_supported(const char* name, std::atomic<bool>& logged) {
  if (!logged.exchange(true)) {
    GVIRTUS_LOG(kWarning) << name << " is not supported by the gvirtus stub";
  }
  return kStatus;
}

}  // namespace gvirtus::stub
