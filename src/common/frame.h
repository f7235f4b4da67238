// The frame: the unit of the gvirtus wire protocol (DESIGN.md section 5).
//
// Every message a communicator carries is one frame: a fixed 32-byte little-endian header followed
// by `payload_bytes` of payload.
//
//   offset  size  field
//        0     4  magic          "GVRT" (0x54525647 little-endian)
//        4     2  version        kProtocolVersion
//        6     2  flags          kFlagRequest | kFlagReply, plus kFlagAsync / kFlagError
//        8     4  call_id        plugin id << 16 | function id, from the plugin's call table
//       12     4  thread_id      the client thread that made the call (per-thread ordering)
//       16     8  request_id     chosen by the client; a reply carries its request's id
//       24     4  status         replies: 0, or an ErrorKind when kFlagError is set
//       28     4  payload_bytes  length of the payload that follows
//
// decode_frame() accepts only a well-formed frame and says why it rejects anything else.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "common/error.h"

namespace gvirtus {

inline constexpr uint32_t kFrameMagic = 0x54525647;  // "GVRT" read as a little-endian u32
// 2: authentication in the handshake; 3: the device selection in the hello; 4: output frames
// (protocol/output_frames.h).
inline constexpr uint16_t kProtocolVersion = 4;
inline constexpr size_t kFrameHeaderBytes = 32;

enum FrameFlags : uint16_t {
  kFlagRequest = 1 << 0,  // client -> backend
  kFlagReply = 1 << 1,    // backend -> client
  kFlagAsync = 1 << 2,    // a request that wants no reply (errors come back later, if any)
  kFlagError = 1 << 3,    // a reply whose status is an ErrorKind and whose payload is the message
};
inline constexpr uint16_t kKnownFrameFlags = kFlagRequest | kFlagReply | kFlagAsync | kFlagError;

// Numeric call ids: the plugin in the high half, the function in the low half.
constexpr uint32_t make_call_id(uint16_t plugin, uint16_t function) {
  return (uint32_t{plugin} << 16) | function;
}
constexpr uint16_t call_plugin(uint32_t call_id) {
  return static_cast<uint16_t>(call_id >> 16);
}
constexpr uint16_t call_function(uint32_t call_id) {
  return static_cast<uint16_t>(call_id);
}

struct FrameHeader {
  uint16_t version = kProtocolVersion;
  uint16_t flags = 0;
  uint32_t call_id = 0;
  uint32_t thread_id = 0;
  uint64_t request_id = 0;
  uint32_t status = 0;
  uint32_t payload_bytes = 0;

  bool is_request() const { return (flags & kFlagRequest) != 0; }
  bool is_reply() const { return (flags & kFlagReply) != 0; }
  bool is_async() const { return (flags & kFlagAsync) != 0; }
  bool is_error() const { return (flags & kFlagError) != 0; }
};

// The encoded header, ready to be the first piece of a gather send.
struct EncodedHeader {
  std::byte bytes[kFrameHeaderBytes];
  std::span<const std::byte> view() const { return bytes; }
};

EncodedHeader encode_header(const FrameHeader& header);

struct Frame {
  FrameHeader header;
  std::span<const std::byte> payload;  // a view into the received message
};

// Validates and splits a received message. Throws Error{kInvalidInput} naming the defect:
// truncated header, wrong magic, unsupported version, unknown or inconsistent flags, a payload
// length that disagrees with the message, or a frame over `max_frame_bytes` (header included).
// `placed` counts bytes of the payload's end that the transport wrote elsewhere
// (Connection::recv_placed): the header then announces that many more than `message` holds, and
// Frame::payload is the part that is here.
Frame decode_frame(std::span<const std::byte> message, uint64_t max_frame_bytes,
                   uint64_t placed = 0);

// "call 0x00010002 request 7 thread 1" - for logs.
std::string describe(const FrameHeader& header);

}  // namespace gvirtus
