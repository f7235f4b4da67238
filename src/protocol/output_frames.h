// Output frames: what the backend's worker printed (backend/output_relay.h) on its way to the
// application's stdout and stderr.
//
// An output frame is a reply frame of the core Output call with request id 0, which no request
// has. Its payload is one byte naming the stream (1 stdout, 2 stderr), then at most
// kMaxOutputPayload bytes of output. The backend sends output frames only ahead of a synchronous
// reply, so a client reads them while it waits for that reply, and prints them before the call
// returns.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/frame.h"
#include "protocol/core_calls.h"

namespace gvirtus {

enum class OutputStream : uint8_t { kStdout = 1, kStderr = 2 };

inline constexpr size_t kMaxOutputPayload = size_t{1} << 20;

// The header of an output frame carrying `bytes` of output (the stream's byte not counted).
inline FrameHeader output_frame_header(uint32_t thread_id, size_t bytes) {
  FrameHeader h;
  h.flags = kFlagReply;
  h.call_id = core::call_id(core::Fn::kOutput);
  h.thread_id = thread_id;
  h.request_id = 0;
  h.payload_bytes = static_cast<uint32_t>(1 + bytes);
  return h;
}

inline bool is_output_frame(const FrameHeader& h) {
  return h.is_reply() && h.call_id == core::call_id(core::Fn::kOutput) && h.request_id == 0;
}

}  // namespace gvirtus
