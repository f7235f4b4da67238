#include "protocol/handshake.h"

#include <cstring>

namespace gvirtus {

void encode(const HelloRequest& hello, WireWriter& out) {
  out.put<uint16_t>(hello.protocol_version);
  out.put_string(hello.program);
  out.put<uint32_t>(hello.pid);
  out.put<uint32_t>(hello.cuda_runtime_version);
  out.put<uint32_t>(static_cast<uint32_t>(hello.plugins.size()));
  for (const PluginRef& p : hello.plugins) {
    out.put<uint16_t>(p.id);
    out.put_string(p.name);
    out.put<uint64_t>(p.table_hash);
  }
  out.put_raw(hello.client_nonce.data(), hello.client_nonce.size());
  out.put_string(hello.visible_devices);
}

HelloRequest decode_hello_request(WireReader& in) {
  HelloRequest hello;
  hello.protocol_version = in.get<uint16_t>();
  if (hello.protocol_version != kProtocolVersion) return hello;
  hello.program = std::string(in.get_string(kMaxHelloString));
  hello.pid = in.get<uint32_t>();
  hello.cuda_runtime_version = in.get<uint32_t>();
  const uint32_t count = in.get<uint32_t>();
  if (count > kMaxHelloPlugins) {
    raise(ErrorKind::kInvalidInput, "hello: " + std::to_string(count) +
                                        " plugins exceed the limit of " +
                                        std::to_string(kMaxHelloPlugins));
  }
  for (uint32_t i = 0; i < count; ++i) {
    PluginRef p;
    p.id = in.get<uint16_t>();
    p.name = std::string(in.get_string(kMaxPluginName));
    p.table_hash = in.get<uint64_t>();
    hello.plugins.push_back(std::move(p));
  }
  const auto nonce = in.get_raw(kAuthNonceBytes);
  std::memcpy(hello.client_nonce.data(), nonce.data(), nonce.size());
  hello.visible_devices = std::string(in.get_string(kMaxSelectionText));
  in.expect_end();
  return hello;
}

void encode(const HelloReply& reply, WireWriter& out) {
  out.put_string(reply.backend_version);
  out.put<uint32_t>(reply.worker_pid);
  out.put<uint64_t>(reply.max_frame_bytes);
  out.put(reply.auth);
  if (reply.auth == AuthScheme::kHmacSha256) {
    out.put_raw(reply.backend_nonce.data(), reply.backend_nonce.size());
    out.put_raw(reply.backend_proof.data(), reply.backend_proof.size());
  }
}

HelloReply decode_hello_reply(WireReader& in) {
  HelloReply reply;
  reply.backend_version = std::string(in.get_string(kMaxHelloString));
  reply.worker_pid = in.get<uint32_t>();
  reply.max_frame_bytes = in.get<uint64_t>();
  const uint8_t scheme = in.get<uint8_t>();
  if (scheme > static_cast<uint8_t>(AuthScheme::kHmacSha256)) {
    raise(ErrorKind::kInvalidInput,
          "hello reply: unknown authentication scheme " + std::to_string(scheme));
  }
  reply.auth = static_cast<AuthScheme>(scheme);
  if (reply.auth == AuthScheme::kHmacSha256) {
    std::memcpy(reply.backend_nonce.data(), in.get_raw(kAuthNonceBytes).data(), kAuthNonceBytes);
    std::memcpy(reply.backend_proof.data(), in.get_raw(kAuthProofBytes).data(), kAuthProofBytes);
  }
  in.expect_end();
  return reply;
}

void encode(const AuthenticateRequest& request, WireWriter& out) {
  out.put(request.outcome);
  if (request.outcome == AuthOutcome::kProof) {
    out.put_raw(request.proof.data(), request.proof.size());
  }
}

AuthenticateRequest decode_authenticate(WireReader& in) {
  AuthenticateRequest request;
  const uint8_t outcome = in.get<uint8_t>();
  if (outcome > static_cast<uint8_t>(AuthOutcome::kBackendProofWrong)) {
    raise(ErrorKind::kInvalidInput, "authenticate: unknown outcome " + std::to_string(outcome));
  }
  request.outcome = static_cast<AuthOutcome>(outcome);
  if (request.outcome == AuthOutcome::kProof) {
    std::memcpy(request.proof.data(), in.get_raw(kAuthProofBytes).data(), kAuthProofBytes);
  }
  in.expect_end();
  return request;
}

void encode(const OpenPluginRequest& request, WireWriter& out) {
  out.put<uint16_t>(request.plugin.id);
  out.put_string(request.plugin.name);
  out.put<uint64_t>(request.plugin.table_hash);
  out.put<uint32_t>(request.version);
}

OpenPluginRequest decode_open_plugin(WireReader& in) {
  OpenPluginRequest request;
  request.plugin.id = in.get<uint16_t>();
  request.plugin.name = std::string(in.get_string(kMaxPluginName));
  request.plugin.table_hash = in.get<uint64_t>();
  request.version = in.get<uint32_t>();
  in.expect_end();
  return request;
}

PluginRef to_ref(const PluginIdentity& identity) {
  return {identity.id, std::string(identity.name), identity.table_hash};
}

}  // namespace gvirtus
