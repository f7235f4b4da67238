#include "backend/session.h"

#include <unistd.h>

#include <map>

#include "common/frame.h"
#include "common/log.h"
#include "protocol/core_calls.h"
#include "protocol/handshake.h"

namespace gvirtus {
namespace {

constexpr const char* kBackendVersion = "gvirtus-backend 0.1.0";

class Session {
 public:
  Session(Connection& connection, const PluginRegistry& plugins, const Limits& limits)
      : connection_(connection), plugins_(plugins), limits_(limits) {
    info_.peer = connection.peer_name();
    info_.transport = connection.transport();
  }

  void run() {
    handshake();
    const auto idle = std::chrono::seconds(limits_.idle_timeout_s);
    for (;;) {
      const ByteView message =
          limits_.idle_timeout_s > 0 ? connection_.recv(idle) : connection_.recv();
      dispatch(decode_frame(message, limits_.max_frame_bytes));
    }
  }

 private:
  void handshake() {
    const Frame frame = decode_frame(connection_.recv(kHandshakeTimeout), limits_.max_frame_bytes);
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
    for (const PluginRef& ref : hello.plugins) {
      BackendPlugin* plugin = plugins_.find(ref.id);
      if (plugin == nullptr || plugin->identity().name != ref.name) {
        refuse(frame.header, ErrorKind::kUnimplemented,
               "this backend does not serve plugin \"" + ref.name +
                   "\" (it serves: " + plugins_.names() + ")");
      }
      if (plugin->identity().table_hash != ref.table_hash) {
        refuse(frame.header, ErrorKind::kInvalidInput,
               "plugin \"" + ref.name + "\" differs between client and backend (call table " +
                   "hash mismatch): install matching gvirtus versions on both sides");
      }
      sessions_[ref.id] = plugin->open_session(info_);
    }
    sessions_[core::kPluginId] = plugins_.find(core::kPluginId)->open_session(info_);

    HelloReply reply{kBackendVersion, static_cast<uint32_t>(::getpid()), limits_.max_frame_bytes};
    reply_.clear();
    encode(reply, reply_);
    send_reply(frame.header, 0, 0);
    GVIRTUS_LOG(kInfo) << "session with " << info_.program << " (pid " << info_.client_pid
                       << ") at " << info_.peer << " started";
  }

  // Sends an error reply for the hello and ends the session.
  [[noreturn]] void refuse(const FrameHeader& request, ErrorKind kind, const std::string& why) {
    send_error(request, kind, why);
    raise(ErrorKind::kInvalidInput, "handshake refused: " + why);
  }

  void dispatch(const Frame& frame) {
    const FrameHeader& h = frame.header;
    if (!h.is_request()) raise(ErrorKind::kInvalidInput, "a client sent a reply frame");
    const auto it = sessions_.find(call_plugin(h.call_id));
    if (it == sessions_.end()) {
      fail_call(h, ErrorKind::kUnimplemented,
                "plugin " + std::to_string(call_plugin(h.call_id)) +
                    " was not opened in this session (" + describe(h) + ")");
      return;
    }
    reply_.clear();
    Call call{h, WireReader(frame.payload, "request"), reply_};
    try {
      it->second->handle(call);
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::kInvalidInput) throw;  // malformed request: end the session
      fail_call(h, e.kind(), e.what());
      return;
    }
    if (!h.is_async()) send_reply(h, 0, 0);
  }

  // A call failed without ending the session: the error goes back now for a synchronous call,
  // and as a deferred error frame for an asynchronous one (the client reports it later).
  void fail_call(const FrameHeader& request, ErrorKind kind, const std::string& why) {
    GVIRTUS_LOG(kDebug) << info_.peer << ": " << describe(request) << " failed: " << why;
    send_error(request, kind, why);
  }

  void send_error(const FrameHeader& request, ErrorKind kind, const std::string& why) {
    reply_.clear();
    reply_.put_raw(why.data(), why.size());
    send_reply(request, kFlagError, static_cast<uint32_t>(kind));
  }

  void send_reply(const FrameHeader& request, uint16_t extra_flags, uint32_t status) {
    FrameHeader h;
    h.flags = static_cast<uint16_t>(kFlagReply | extra_flags);
    h.call_id = request.call_id;
    h.thread_id = request.thread_id;
    h.request_id = request.request_id;
    h.status = status;
    h.payload_bytes = static_cast<uint32_t>(reply_.size());
    const EncodedHeader header = encode_header(h);
    const ByteView pieces[] = {header.view(), reply_.view()};
    connection_.send(pieces);
  }

  Connection& connection_;
  const PluginRegistry& plugins_;
  const Limits& limits_;
  SessionInfo info_;
  std::map<uint16_t, std::unique_ptr<PluginSession>> sessions_;
  WireWriter reply_;
};

}  // namespace

int run_session(Connection& connection, const PluginRegistry& plugins, const Limits& limits) {
  Session session(connection, plugins, limits);
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
