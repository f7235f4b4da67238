#include "common/frame.h"

#include <cstdio>

#include "common/wire.h"

namespace gvirtus {

EncodedHeader encode_header(const FrameHeader& header) {
  EncodedHeader out;
  std::byte* p = out.bytes;
  store_le<uint32_t>(p + 0, kFrameMagic);
  store_le<uint16_t>(p + 4, header.version);
  store_le<uint16_t>(p + 6, header.flags);
  store_le<uint32_t>(p + 8, header.call_id);
  store_le<uint32_t>(p + 12, header.thread_id);
  store_le<uint64_t>(p + 16, header.request_id);
  store_le<uint32_t>(p + 24, header.status);
  store_le<uint32_t>(p + 28, header.payload_bytes);
  return out;
}

namespace {

[[noreturn]] void reject(const std::string& why) {
  raise(ErrorKind::kInvalidInput, "malformed frame: " + why);
}

std::string hex32(uint32_t value) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%08x", value);
  return text;
}

}  // namespace

Frame decode_frame(std::span<const std::byte> message, uint64_t max_frame_bytes, uint64_t placed) {
  if (message.size() < kFrameHeaderBytes) {
    reject("truncated header: " + std::to_string(message.size()) + " bytes, need " +
           std::to_string(kFrameHeaderBytes));
  }
  if (message.size() + placed > max_frame_bytes) {
    reject("frame of " + std::to_string(message.size() + placed) + " bytes exceeds the limit of " +
           std::to_string(max_frame_bytes));
  }
  const std::byte* p = message.data();
  const uint32_t magic = load_le<uint32_t>(p + 0);
  if (magic != kFrameMagic) {
    reject("wrong magic " + hex32(magic) + " (expected " + hex32(kFrameMagic) +
           "): the peer does not speak the gvirtus protocol");
  }
  Frame frame;
  FrameHeader& h = frame.header;
  h.version = load_le<uint16_t>(p + 4);
  h.flags = load_le<uint16_t>(p + 6);
  h.call_id = load_le<uint32_t>(p + 8);
  h.thread_id = load_le<uint32_t>(p + 12);
  h.request_id = load_le<uint64_t>(p + 16);
  h.status = load_le<uint32_t>(p + 24);
  h.payload_bytes = load_le<uint32_t>(p + 28);
  if (h.version != kProtocolVersion) {
    reject("unsupported protocol version " + std::to_string(h.version) + " (this side speaks " +
           std::to_string(kProtocolVersion) + ")");
  }
  if ((h.flags & ~kKnownFrameFlags) != 0) reject("unknown flags " + hex32(h.flags));
  if (h.is_request() == h.is_reply()) reject("a frame must be exactly one of request or reply");
  if (h.is_request() && h.is_error()) reject("a request cannot carry an error");
  if (h.is_reply() && h.is_async()) reject("a reply cannot be asynchronous");
  if (h.is_error() ? !is_valid_error_kind(h.status) : h.status != 0) {
    reject("invalid status " + std::to_string(h.status) + " for flags " + hex32(h.flags));
  }
  if (h.payload_bytes != message.size() - kFrameHeaderBytes + placed) {
    reject("header announces " + std::to_string(h.payload_bytes) + " payload bytes but " +
           std::to_string(message.size() - kFrameHeaderBytes + placed) + " arrived");
  }
  frame.payload = message.subspan(kFrameHeaderBytes);
  return frame;
}

std::string describe(const FrameHeader& header) {
  return "call " + hex32(header.call_id) + " request " + std::to_string(header.request_id) +
         " thread " + std::to_string(header.thread_id);
}

}  // namespace gvirtus
