// The handshake messages: round trip, and hostile counts and strings are bounded.
#include <gtest/gtest.h>

#include <string>

#include "protocol/core_calls.h"
#include "protocol/handshake.h"

namespace gvirtus {
namespace {

TEST(Handshake, hello_round_trips) {
  HelloRequest hello{kProtocolVersion, "saxpy", 42, 13000, {to_ref(core::kIdentity)}};
  WireWriter w;
  encode(hello, w);
  WireReader r(w.view(), "hello");
  const HelloRequest back = decode_hello_request(r);
  EXPECT_EQ(back.program, "saxpy");
  EXPECT_EQ(back.pid, 42u);
  EXPECT_EQ(back.cuda_runtime_version, 13000u);
  ASSERT_EQ(back.plugins.size(), 1u);
  EXPECT_EQ(back.plugins[0].name, "core");
  EXPECT_EQ(back.plugins[0].table_hash, core::kIdentity.table_hash);
  EXPECT_EQ(back.visible_devices, "");
  hello.visible_devices = "3,1";
  WireWriter with;
  encode(hello, with);
  WireReader again(with.view(), "hello");
  EXPECT_EQ(decode_hello_request(again).visible_devices, "3,1");
}

// Another version's hello is read no further than its version, so that the backend can name the
// versions that differ rather than call the hello malformed.
TEST(Handshake, a_hello_of_another_version_is_read_up_to_its_version) {
  WireWriter w;
  w.put<uint16_t>(kProtocolVersion - 1);
  w.put_string("old-client");
  WireReader r(w.view(), "hello");
  EXPECT_EQ(decode_hello_request(r).protocol_version, kProtocolVersion - 1);
}

TEST(Handshake, a_huge_plugin_count_is_rejected_before_allocating) {
  WireWriter w;
  w.put<uint16_t>(kProtocolVersion);
  w.put_string("x");
  w.put<uint32_t>(1);
  w.put<uint32_t>(0);
  w.put<uint32_t>(0xffffffff);
  WireReader r(w.view(), "hello");
  EXPECT_THROW(decode_hello_request(r), Error);
}

TEST(Handshake, every_truncation_of_a_hello_is_rejected) {
  HelloRequest hello{kProtocolVersion, "app", 1, 0, {to_ref(core::kIdentity)}};
  WireWriter w;
  encode(hello, w);
  for (size_t n = 0; n < w.size(); ++n) {
    WireReader r(w.view().first(n), "hello");
    EXPECT_THROW(decode_hello_request(r), Error) << n;
  }
}

// The backend and the client accept only kHandshakeMaxFrameBytes until the handshake is done:
// the largest hello the decoder accepts (longest program name, most plugins, longest names) must
// fit, and one more byte of plugin name is refused by the decoder itself.
TEST(Handshake, the_largest_accepted_hello_fits_the_bound_before_the_handshake) {
  HelloRequest hello{kProtocolVersion, std::string(kMaxHelloString, 'p'), 1, 13000, {}};
  hello.visible_devices = std::string(kMaxSelectionText, '1');
  for (uint16_t i = 0; i < kMaxHelloPlugins; ++i) {
    hello.plugins.push_back({i, std::string(kMaxPluginName, 'n'), 0x0123456789abcdefULL});
  }
  WireWriter w;
  encode(hello, w);
  EXPECT_EQ(kFrameHeaderBytes + w.size(), kMaxHelloFrameBytes);
  EXPECT_LE(kFrameHeaderBytes + w.size(), kHandshakeMaxFrameBytes);
  WireReader r(w.view(), "hello");
  EXPECT_EQ(decode_hello_request(r).plugins.size(), kMaxHelloPlugins);

  hello.plugins.back().name += 'n';
  WireWriter longer;
  encode(hello, longer);
  WireReader refused(longer.view(), "hello");
  EXPECT_THROW(decode_hello_request(refused), Error);
}

TEST(CallTable, the_hash_depends_on_the_table_text) {
  EXPECT_NE(fnv1a64("Ping:1:sync"), fnv1a64("Ping:1:async"));
  static_assert(core::kIdentity.table_hash != 0);
  static_assert(core::call_id(core::Fn::kPing) == make_call_id(0, 1));
}

}  // namespace
}  // namespace gvirtus
