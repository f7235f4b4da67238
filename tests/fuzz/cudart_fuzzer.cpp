// libFuzzer target: the cudart plugin's call dispatch. Every generated and hand-written handler
// decodes hostile requests, vets handles and device pointers and calls NVIDIA's real runtime
// (which, on a machine without a driver, answers with its initialisation error: what is fuzzed is
// everything our code does before and after it).
//
// Input: calls, each a u16 little-endian function id of cudart_calls.txt, a u32 length and that
// many payload bytes (a short last one takes what is left). They run in order in one plugin
// session, with 64 KiB of "shared memory" as an shm client would have. A handler may reject a
// request as malformed (Error kInvalidInput ends a real session, so it ends the input here) or
// fail otherwise (sent back as an error reply); it must never crash, leak or trip a sanitizer.
// Built and run by tests/fuzz/CMakeLists.txt (ctest: cudart_fuzz); seeds in
// tests/fuzz/cudart_seeds.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "backend/plugin.h"
#include "common/error.h"
#include "common/frame.h"
#include "common/wire.h"
#include "plugins/cudart/cudart_calls.h"

gvirtus::BackendPlugin* gvirtus_backend_plugin_object();  // backend/plugin_export.h

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  using namespace gvirtus;
  const std::span<const std::byte> data(reinterpret_cast<const std::byte*>(bytes), size);
  alignas(4096) static std::byte shared[1 << 16];
  SessionInfo info;
  info.transport = "fuzz";
  info.shared_memory = std::span(shared);
  // No client runs host functions here: a host function's gate returns at once and the gates'
  // "next" waits for nothing (backend/services/host_gates.h).
  static const std::atomic<int> no_client{1};
  info.client_gone = &no_client;
  const std::unique_ptr<PluginSession> session =
      gvirtus_backend_plugin_object()->open_session(info);
  WireWriter reply;
  size_t at = 0;
  for (int calls = 0; at + 6 <= size && calls < 64; ++calls) {
    const uint16_t fn = load_le<uint16_t>(data.data() + at);
    const size_t length = std::min<size_t>(load_le<uint32_t>(data.data() + at + 2), size - at - 6);
    FrameHeader header;
    header.call_id = cudart::call_id(static_cast<cudart::Fn>(fn));
    header.payload_bytes = static_cast<uint32_t>(length);
    Call call{header, WireReader(data.subspan(at + 6, length), "request"), reply};
    at += 6 + length;
    reply.clear();
    try {
      session->handle(call);
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::kInvalidInput) break;  // a real session would end here
    }
  }
  return 0;
}
