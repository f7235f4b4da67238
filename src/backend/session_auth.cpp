#include "backend/session_auth.h"

#include <string>

#include "common/error.h"
#include "common/frame.h"
#include "protocol/core_calls.h"

namespace gvirtus {
namespace {

void send_answer(Connection& connection, const FrameHeader& request, const std::string& error) {
  FrameHeader h;
  h.flags = static_cast<uint16_t>(kFlagReply | (error.empty() ? 0 : kFlagError));
  h.call_id = request.call_id;
  h.thread_id = request.thread_id;
  h.request_id = request.request_id;
  h.status = error.empty() ? 0 : static_cast<uint32_t>(ErrorKind::kInvalidInput);
  h.payload_bytes = static_cast<uint32_t>(error.size());
  const EncodedHeader header = encode_header(h);
  const ByteView pieces[] = {
      header.view(), ByteView(reinterpret_cast<const std::byte*>(error.data()), error.size())};
  connection.send(pieces);
}

// Tells the client why and ends the session (best effort: the client may be gone already).
[[noreturn]] void refuse(Connection& connection, const FrameHeader& request,
                         const std::string& why) {
  try {
    send_answer(connection, request, "authentication failed: " + why);
  } catch (const Error&) {
  }
  raise(ErrorKind::kInvalidInput, "authentication failed: " + why);
}

}  // namespace

BackendChallenge issue_challenge(const Secret& secret, std::span<const std::byte> hello_payload,
                                 HelloReply& reply) {
  BackendChallenge challenge;
  challenge.hello = hello_digest(hello_payload);
  challenge.nonce = random_nonce();
  challenge.proof = backend_proof(secret, challenge.hello, challenge.nonce);
  reply.auth = AuthScheme::kHmacSha256;
  reply.backend_nonce = challenge.nonce;
  reply.backend_proof = challenge.proof;
  return challenge;
}

void await_client_proof(Connection& connection, const Secret& secret,
                        const BackendChallenge& challenge, uint64_t max_frame_bytes,
                        std::chrono::milliseconds timeout) {
  ByteView message;
  try {
    message = connection.recv(timeout);
  } catch (const Error& e) {
    const char* what = e.kind() == ErrorKind::kInvalidInput ? "a refused" : "no";
    raise(ErrorKind::kInvalidInput, "authentication failed: " + std::string(what) +
                                        " answer to the challenge (" + e.what() + ")");
  }
  const Frame frame = decode_frame(message, max_frame_bytes);
  if (!frame.header.is_request() ||
      frame.header.call_id != core::call_id(core::Fn::kAuthenticate)) {
    refuse(connection, frame.header,
           "this backend requires authentication, and the client sent " + describe(frame.header) +
               " instead (does it have a secret_file?)");
  }
  WireReader in(frame.payload, "authenticate");
  const AuthenticateRequest answer = decode_authenticate(in);
  switch (answer.outcome) {
    case AuthOutcome::kClientHasNoSecret:
      refuse(connection, frame.header,
             "this backend requires authentication, and the client has no secret_file");
    case AuthOutcome::kBackendProofWrong:
      refuse(connection, frame.header,
             "the client rejected this backend's proof: the two secret files differ");
    case AuthOutcome::kProof:
      break;
  }
  const AuthProof expected =
      client_proof(secret, challenge.hello, challenge.nonce, challenge.proof);
  if (!same_proof(answer.proof, expected)) {
    refuse(connection, frame.header,
           "wrong proof: the client's secret differs from this backend's");
  }
  send_answer(connection, frame.header, "");
}

}  // namespace gvirtus
