// The connect handshake: the first frame of every session is a core Hello request.
//
// The client says which protocol it speaks, who it is, which CUDA runtime version its stub
// emulates, which of the backend's GPUs it may see (common/device_selection.h) and which plugins
// (with their call-table hashes) it will call. The backend answers
// with its identity and limits, or with an error reply naming the mismatch, and closes. When the
// backend has a secret, its reply carries the authentication challenge and the client must answer
// with a core Authenticate call before anything else (protocol/auth.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/device_selection.h"
#include "common/frame.h"
#include "common/wire.h"
#include "protocol/auth.h"
#include "protocol/call_table.h"

namespace gvirtus {

struct PluginRef {
  uint16_t id = 0;
  std::string name;
  uint64_t table_hash = 0;
};

struct HelloRequest {
  uint16_t protocol_version = 0;
  std::string program;
  uint32_t pid = 0;
  uint32_t cuda_runtime_version = 0;  // 0 when the client is not a CUDA stub
  std::vector<PluginRef> plugins;
  AuthNonce client_nonce{};  // fresh per connection; bound into the backend's proof
  // The backend's GPUs the session may see, as "2,0" (common/device_selection.h); empty: all.
  std::string visible_devices{};
};

struct HelloReply {
  std::string backend_version;
  uint32_t worker_pid = 0;
  uint64_t max_frame_bytes = 0;
  AuthScheme auth = AuthScheme::kNone;  // kHmacSha256: the two fields below are the challenge
  AuthNonce backend_nonce{};
  AuthProof backend_proof{};
};

// A core OpenPlugin call: opens a plugin on a live session (a stub library loaded after the
// session started). `version` is the plugin interface the stub speaks (0: any); the table hash
// must match as in the hello. The reply is empty, or an error naming the plugin and the reason.
struct OpenPluginRequest {
  PluginRef plugin;
  uint32_t version = 0;
};

// The client's answer to an authentication challenge (core Authenticate call).
struct AuthenticateRequest {
  AuthOutcome outcome = AuthOutcome::kProof;
  AuthProof proof{};  // only for kProof
};

inline constexpr size_t kMaxHelloPlugins = 64;
inline constexpr size_t kMaxHelloString = 4096;  // the program's name, the backend's version
inline constexpr size_t kMaxPluginName = 256;    // plugin names are identifiers ("cudart")

// The largest hello request the decoder accepts, as a frame: header, protocol version, program
// name, pid, CUDA version, plugin count, kMaxHelloPlugins plugins (id, name, table hash), nonce,
// device selection.
inline constexpr size_t kMaxHelloFrameBytes =
    kFrameHeaderBytes + 2 + (8 + kMaxHelloString) + 4 + 4 + 4 +
    kMaxHelloPlugins * (2 + (8 + kMaxPluginName) + 8) + kAuthNonceBytes + (8 + kMaxSelectionText);

// The bound on every frame either side accepts until the handshake (and authentication, when
// configured) has succeeded; then it is limits.max_frame_bytes. A peer that has proven nothing
// cannot make the other side buffer more than this. The handshake's frames are the hello, its
// reply (a version string of at most kMaxHelloString and a challenge), and Authenticate and its
// answer (a proof, or a short refusal).
inline constexpr size_t kHandshakeMaxFrameBytes = size_t{64} << 10;
static_assert(2 * kMaxHelloFrameBytes <= kHandshakeMaxFrameBytes,
              "the largest hello the decoder accepts must fit the handshake's bound, with room");

void encode(const HelloRequest& hello, WireWriter& out);
// A hello of another protocol version is decoded no further than its version, so that the backend
// can say which versions differ rather than that the hello is malformed.
HelloRequest decode_hello_request(WireReader& in);
void encode(const HelloReply& reply, WireWriter& out);
HelloReply decode_hello_reply(WireReader& in);
void encode(const AuthenticateRequest& request, WireWriter& out);
AuthenticateRequest decode_authenticate(WireReader& in);
void encode(const OpenPluginRequest& request, WireWriter& out);
OpenPluginRequest decode_open_plugin(WireReader& in);

PluginRef to_ref(const PluginIdentity& identity);

}  // namespace gvirtus
