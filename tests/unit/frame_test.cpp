// The frame codec: what goes out comes back, and anything malformed is rejected with a reason.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "common/frame.h"
#include "common/wire.h"

namespace gvirtus {
namespace {

std::vector<std::byte> frame_bytes(const FrameHeader& h, size_t payload_bytes) {
  const EncodedHeader header = encode_header(h);
  std::vector<std::byte> out(header.bytes, header.bytes + kFrameHeaderBytes);
  for (size_t i = 0; i < payload_bytes; ++i) out.push_back(static_cast<std::byte>(i));
  return out;
}

FrameHeader request(uint32_t payload_bytes) {
  FrameHeader h;
  h.flags = kFlagRequest;
  h.call_id = make_call_id(1, 7);
  h.thread_id = 3;
  h.request_id = 0x0102030405060708ull;
  h.payload_bytes = payload_bytes;
  return h;
}

std::string rejection(std::span<const std::byte> message, uint64_t limit = 1 << 20) {
  try {
    decode_frame(message, limit);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
    return e.what();
  }
  return "";
}

TEST(Frame, header_round_trips_with_payload_view) {
  const auto bytes = frame_bytes(request(5), 5);
  const Frame f = decode_frame(bytes, 1 << 20);
  EXPECT_EQ(f.header.call_id, make_call_id(1, 7));
  EXPECT_EQ(call_plugin(f.header.call_id), 1);
  EXPECT_EQ(call_function(f.header.call_id), 7);
  EXPECT_EQ(f.header.thread_id, 3u);
  EXPECT_EQ(f.header.request_id, 0x0102030405060708ull);
  EXPECT_TRUE(f.header.is_request());
  ASSERT_EQ(f.payload.size(), 5u);
  EXPECT_EQ(f.payload.data(), bytes.data() + kFrameHeaderBytes);
}

TEST(Frame, wire_layout_is_little_endian_at_fixed_offsets) {
  const auto bytes = frame_bytes(request(0), 0);
  EXPECT_EQ(bytes[0], std::byte{'G'});
  EXPECT_EQ(bytes[3], std::byte{'T'});
  EXPECT_EQ(bytes[16], std::byte{0x08});  // request id, least significant byte first
  EXPECT_EQ(bytes[23], std::byte{0x01});
}

TEST(Frame, every_truncated_header_is_rejected) {
  const auto bytes = frame_bytes(request(0), 0);
  for (size_t n = 0; n < kFrameHeaderBytes; ++n) {
    EXPECT_NE(rejection(std::span(bytes).first(n)).find("truncated header"), std::string::npos);
  }
}

TEST(Frame, payload_shorter_or_longer_than_announced_is_rejected) {
  auto bytes = frame_bytes(request(10), 10);
  EXPECT_NE(rejection(std::span(bytes).first(bytes.size() - 1)).find("announces 10"),
            std::string::npos);
  bytes.push_back(std::byte{0});
  EXPECT_NE(rejection(bytes).find("announces 10"), std::string::npos);
}

TEST(Frame, oversized_frame_is_rejected_before_anything_else) {
  const auto bytes = frame_bytes(request(100), 100);
  EXPECT_NE(rejection(bytes, 64).find("exceeds the limit"), std::string::npos);
}

TEST(Frame, wrong_magic_is_rejected) {
  auto bytes = frame_bytes(request(0), 0);
  bytes[0] = std::byte{'H'};
  EXPECT_NE(rejection(bytes).find("wrong magic"), std::string::npos);
}

TEST(Frame, wrong_version_is_rejected_naming_both_versions) {
  FrameHeader h = request(0);
  h.version = kProtocolVersion + 1;
  const std::string why = rejection(frame_bytes(h, 0));
  EXPECT_NE(why.find("unsupported protocol version " + std::to_string(kProtocolVersion + 1)),
            std::string::npos)
      << why;
}

TEST(Frame, inconsistent_flags_and_status_are_rejected) {
  const std::vector<std::pair<uint16_t, uint32_t>> bad = {
      {0, 0},                                            // neither request nor reply
      {kFlagRequest | kFlagReply, 0},                    // both
      {kFlagRequest | kFlagError, 1},                    // requests carry no errors
      {kFlagReply | kFlagAsync, 0},                      // replies are never async
      {kFlagReply | kFlagError, 0},                      // an error needs a kind
      {kFlagReply | kFlagError, 999},                    // ... a known one
      {kFlagReply, 5},                                   // a success has status 0
      {static_cast<uint16_t>(kFlagRequest | 0x100), 0},  // unknown flag
  };
  for (const auto& [flags, status] : bad) {
    FrameHeader h = request(0);
    h.flags = flags;
    h.status = status;
    EXPECT_FALSE(rejection(frame_bytes(h, 0)).empty()) << "flags " << flags << " status " << status;
  }
}

// Random bytes, and random corruptions of a valid frame: each is either a valid frame or a
// rejection with a reason. The process survives all of them (ASan builds check the reads).
TEST(Frame, random_and_corrupted_frames_never_crash) {
  std::mt19937 rng(12345);
  const auto valid = frame_bytes(request(24), 24);
  int accepted = 0;
  for (int i = 0; i < 200000; ++i) {
    std::vector<std::byte> m;
    if (i % 2 == 0) {
      m.resize(rng() % 80);
      for (auto& b : m) b = static_cast<std::byte>(rng());
    } else {
      m = valid;
      for (int flips = 1 + rng() % 3; flips > 0; --flips) {
        m[rng() % m.size()] = static_cast<std::byte>(rng());
      }
      if (rng() % 4 == 0) m.resize(rng() % (m.size() + 1));
    }
    try {
      const Frame f = decode_frame(m, 1 << 20);
      EXPECT_EQ(f.payload.size() + kFrameHeaderBytes, m.size());
      ++accepted;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
      EXPECT_GT(std::strlen(e.what()), 10u);
    }
  }
  EXPECT_GT(accepted, 0);  // some corruptions only touch ids or payload and stay valid
}

TEST(Wire, values_round_trip) {
  WireWriter w;
  w.put<uint8_t>(0xab);
  w.put<int32_t>(-5);
  w.put<uint64_t>(0xfedcba9876543210ull);
  w.put_bool(true);
  w.put_double(3.25);
  w.put_string("gvirtus");
  WireReader r(w.view(), "test");
  EXPECT_EQ(r.get<uint8_t>(), 0xab);
  EXPECT_EQ(r.get<int32_t>(), -5);
  EXPECT_EQ(r.get<uint64_t>(), 0xfedcba9876543210ull);
  EXPECT_TRUE(r.get_bool());
  EXPECT_EQ(r.get_double(), 3.25);
  EXPECT_EQ(r.get_string(), "gvirtus");
  EXPECT_NO_THROW(r.expect_end());
}

// put_space must point into the buffer as it is after growing (a D2H copy lands there).
TEST(Wire, put_space_points_into_the_grown_buffer_and_store_at_patches) {
  WireWriter w;
  w.put<int32_t>(-1);
  for (size_t bytes : {size_t{1}, size_t{1000}, size_t{1} << 20, size_t{8} << 20}) {
    const size_t before = w.size();
    std::byte* space = w.put_space(bytes);
    ASSERT_EQ(space, w.view().data() + before);
    std::memset(space, 0xab, bytes);  // ASan reports a write into a freed buffer
  }
  w.store_at<int32_t>(0, 7);
  WireReader r(w.view(), "t");
  EXPECT_EQ(r.get<int32_t>(), 7);
  EXPECT_EQ(r.get<uint8_t>(), 0xab);
  w.truncate(4);
  EXPECT_EQ(w.size(), 4u);
}

TEST(Wire, reads_past_the_end_are_rejected_with_what_was_read) {
  WireWriter w;
  w.put<uint16_t>(1);
  WireReader r(w.view(), "reply to cudaMalloc");
  try {
    r.get<uint32_t>();
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
    EXPECT_NE(std::string(e.what()).find("reply to cudaMalloc"), std::string::npos);
  }
}

TEST(Wire, blob_longer_than_the_message_or_the_bound_is_rejected) {
  WireWriter w;
  w.put<uint64_t>(~uint64_t{0});  // a hostile length
  WireReader r(w.view(), "t");
  EXPECT_THROW(r.get_blob(), Error);

  WireWriter w2;
  w2.put_string("0123456789");
  WireReader r2(w2.view(), "t");
  EXPECT_THROW(r2.get_string(5), Error);
}

TEST(Wire, booleans_other_than_0_or_1_and_trailing_bytes_are_rejected) {
  WireWriter w;
  w.put<uint8_t>(2);
  WireReader r(w.view(), "t");
  EXPECT_THROW(r.get_bool(), Error);

  WireWriter w2;
  w2.put<uint32_t>(1);
  WireReader r2(w2.view(), "t");
  r2.get<uint16_t>();
  EXPECT_THROW(r2.expect_end(), Error);
}

}  // namespace
}  // namespace gvirtus
