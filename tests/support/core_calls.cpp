#include "support/core_calls.h"

#include <cstring>
#include <span>

#include "protocol/core_calls.h"

namespace gvirtus::testing {

bool ping(Client& client, const std::string& text) {
  const ByteView piece(reinterpret_cast<const std::byte*>(text.data()), text.size());
  bool same = false;
  client.call(core::call_id(core::Fn::kPing), std::span(&piece, 1), [&](WireReader& in) {
    const auto echo = in.get_raw(in.remaining());
    same = echo.size() == text.size() && std::memcmp(echo.data(), text.data(), text.size()) == 0;
  });
  return same;
}

BackendStatus status_of(const BackendProcess& backend) {
  Client client(backend.client_config(), {});
  BackendStatus status;
  client.call(core::call_id(core::Fn::kStatus), {},
              [&](WireReader& in) { status = decode_backend_status(in); });
  return status;
}

std::string hello_refusal(const BackendProcess& backend, const PluginIdentity& plugin) {
  try {
    Client client(backend.client_config(), {to_ref(plugin)});
    client.connect();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

ErrorKind error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.kind();
  }
  return static_cast<ErrorKind>(0);
}

}  // namespace gvirtus::testing
