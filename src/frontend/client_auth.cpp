#include "frontend/client_auth.h"

#include "common/error.h"
#include "common/frame.h"
#include "common/log.h"
#include "protocol/core_calls.h"

namespace gvirtus {
namespace {

void send_authenticate(Connection& connection, const AuthenticateRequest& request,
                       uint32_t thread_id) {
  WireWriter out;
  encode(request, out);
  FrameHeader h;
  h.flags = kFlagRequest;
  h.call_id = core::call_id(core::Fn::kAuthenticate);
  h.thread_id = thread_id;
  h.request_id = 0;
  h.payload_bytes = static_cast<uint32_t>(out.size());
  const EncodedHeader header = encode_header(h);
  const ByteView pieces[] = {header.view(), out.view()};
  connection.send(pieces);
}

// Tells the backend why we give up (so its log says so too), then fails with `why`.
[[noreturn]] void give_up(Connection& connection, AuthOutcome outcome, uint32_t thread_id,
                          const std::string& why) {
  try {
    send_authenticate(connection, AuthenticateRequest{outcome, {}}, thread_id);
  } catch (const Error&) {
  }
  raise(ErrorKind::kInvalidInput, why);
}

}  // namespace

void authenticate_backend(Connection& connection, const Config& config,
                          const std::optional<Secret>& secret, const HelloReply& reply,
                          std::span<const std::byte> hello_payload, uint32_t thread_id,
                          std::chrono::milliseconds timeout) {
  const std::string backend = "the backend at " + connection.peer_name();
  if (reply.auth == AuthScheme::kNone) {
    if (config.secure_application) {
      raise(ErrorKind::kInvalidInput,
            "authentication failed: " + backend +
                " does not authenticate itself (it has no secret_file), and " + config.source +
                " sets secure_application: true");
    }
    if (secret) {
      GVIRTUS_LOG(kWarning) << backend << " does not authenticate itself; going on because "
                            << config.source << " does not set secure_application";
    }
    return;
  }
  if (!secret) {
    give_up(connection, AuthOutcome::kClientHasNoSecret, thread_id,
            "authentication failed: " + backend + " requires authentication, and " + config.source +
                " names no secret_file");
  }
  const AuthDigest hello = hello_digest(hello_payload);
  if (!same_proof(reply.backend_proof, backend_proof(*secret, hello, reply.backend_nonce))) {
    give_up(connection, AuthOutcome::kBackendProofWrong, thread_id,
            "authentication failed: " + backend +
                " did not prove that it holds our secret (the secret files differ, or it is "
                "not the backend it claims to be)");
  }
  send_authenticate(
      connection,
      AuthenticateRequest{AuthOutcome::kProof,
                          client_proof(*secret, hello, reply.backend_nonce, reply.backend_proof)},
      thread_id);
  const Frame answer = decode_frame(connection.recv(timeout), config.limits.max_frame_bytes);
  if (!answer.header.is_reply() ||
      answer.header.call_id != core::call_id(core::Fn::kAuthenticate)) {
    raise(ErrorKind::kInvalidInput,
          backend + " answered authentication with " + describe(answer.header));
  }
  if (answer.header.is_error()) {
    raise(ErrorKind::kInvalidInput,
          std::string(reinterpret_cast<const char*>(answer.payload.data()), answer.payload.size()));
  }
}

}  // namespace gvirtus
