#include "protocol/handshake.h"

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
}

HelloRequest decode_hello_request(WireReader& in) {
  HelloRequest hello;
  hello.protocol_version = in.get<uint16_t>();
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
    p.name = std::string(in.get_string(kMaxHelloString));
    p.table_hash = in.get<uint64_t>();
    hello.plugins.push_back(std::move(p));
  }
  in.expect_end();
  return hello;
}

void encode(const HelloReply& reply, WireWriter& out) {
  out.put_string(reply.backend_version);
  out.put<uint32_t>(reply.worker_pid);
  out.put<uint64_t>(reply.max_frame_bytes);
}

HelloReply decode_hello_reply(WireReader& in) {
  HelloReply reply;
  reply.backend_version = std::string(in.get_string(kMaxHelloString));
  reply.worker_pid = in.get<uint32_t>();
  reply.max_frame_bytes = in.get<uint64_t>();
  in.expect_end();
  return reply;
}

PluginRef to_ref(const PluginIdentity& identity) {
  return {identity.id, std::string(identity.name), identity.table_hash};
}

}  // namespace gvirtus
