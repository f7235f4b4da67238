// libFuzzer target: the frame decoder, the handshake and authentication decoders, and a whole
// backend session (handshake, authentication, dispatch to the core plugin, executors) fed with
// hostile bytes through an in-memory connection.
//
// Input: one mode byte (bit 0: the backend requires authentication), then messages, each a u32
// little-endian length and that many bytes (a short last one takes what is left). The session
// sees them as the frames a client sent, in order; its replies are discarded. Whatever the
// bytes, the session must end with a status, never crash, leak or trip a sanitizer.
// Built and run by tests/fuzz/CMakeLists.txt (ctest: session_fuzz); seeds in tests/fuzz/seeds.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "backend/plugin_registry.h"
#include "backend/session.h"
#include "common/frame.h"
#include "common/wire.h"
#include "protocol/core_calls.h"
#include "protocol/handshake.h"

namespace gvirtus {
namespace {

class FuzzConnection final : public Connection {
 public:
  explicit FuzzConnection(std::vector<std::vector<std::byte>> messages)
      : messages_(std::move(messages)) {}

  void send(std::span<const ByteView> pieces) override {
    if (shut_down_) raise(ErrorKind::kDisconnected, "fuzz: shut down");
    for (const ByteView& piece : pieces) sent_ += piece.size();
  }
  ByteView recv() override { return next(); }
  ByteView recv(std::chrono::milliseconds) override { return next(); }
  void set_max_message(size_t bytes) override { max_message_bytes_ = bytes; }
  void shutdown() override { shut_down_ = true; }
  std::string peer_name() const override { return "fuzz://input"; }
  std::string transport() const override { return "fuzz"; }

 private:
  ByteView next() {
    while (!shut_down_ && at_ < messages_.size()) {
      const std::vector<std::byte>& m = messages_[at_++];
      // Wait only sleeps (up to 10 s): skipped, so that the fuzzer spends its time on parsing.
      if (m.size() >= 12 && load_le<uint32_t>(m.data() + 8) == core::call_id(core::Fn::kWait)) {
        continue;
      }
      if (m.size() > max_message_bytes_) {  // as every transport does, from the length
        raise(ErrorKind::kInvalidInput, "fuzz: message of " + std::to_string(m.size()) +
                                            " bytes exceeds the limit of " +
                                            std::to_string(max_message_bytes_));
      }
      return m;
    }
    raise(ErrorKind::kDisconnected, "fuzz: end of input");
  }

  std::vector<std::vector<std::byte>> messages_;
  size_t at_ = 0;
  size_t sent_ = 0;
  size_t max_message_bytes_ = kDefaultMaxMessageBytes;
  std::atomic<bool> shut_down_{false};
};

// The stateless decoders on the raw bytes.
void decode_everything(std::span<const std::byte> data) {
  try {
    decode_frame(data, 1 << 20);
  } catch (const Error&) {
  }
  try {
    WireReader in(data, "fuzz hello");
    decode_hello_request(in);
  } catch (const Error&) {
  }
  try {
    WireReader in(data, "fuzz hello reply");
    decode_hello_reply(in);
  } catch (const Error&) {
  }
  try {
    WireReader in(data, "fuzz authenticate");
    decode_authenticate(in);
  } catch (const Error&) {
  }
}

}  // namespace
}  // namespace gvirtus

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  using namespace gvirtus;
  const std::span<const std::byte> data(reinterpret_cast<const std::byte*>(bytes), size);
  decode_everything(data);
  if (size == 0) return 0;
  const bool authenticate = (bytes[0] & 1) != 0;
  std::vector<std::vector<std::byte>> messages;
  size_t at = 1;
  while (at + 4 <= size && messages.size() < 64) {
    const size_t length = std::min<size_t>(load_le<uint32_t>(data.data() + at), size - at - 4);
    messages.emplace_back(data.begin() + at + 4, data.begin() + at + 4 + length);
    at += 4 + length;
  }
  static const PluginRegistry plugins;  // core only
  std::optional<Secret> secret;
  if (authenticate) secret.emplace(std::vector<std::byte>(32, std::byte{0x5a}));
  Limits limits;
  limits.max_frame_bytes = 1 << 20;
  limits.max_inflight_bytes = 1 << 16;
  FuzzConnection connection(std::move(messages));
  run_session(connection, plugins, limits, std::move(secret));
  return 0;
}
