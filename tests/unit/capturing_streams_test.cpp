// Which streams capture, as a stub knows them (common/capturing_streams.h): the captures it began,
// and, only while one is under way, the backend's answer for another stream (one that joined a
// capture by waiting for an event recorded in it).
#include "common/capturing_streams.h"

#include <gtest/gtest.h>

#include <functional>
#include <set>

namespace gvirtus {
namespace {

using Stream = const void*;
const Stream kNull = nullptr;
const Stream kLegacy = reinterpret_cast<Stream>(0x1);
const Stream kOrigin = reinterpret_cast<Stream>(0x1000);
const Stream kJoined = reinterpret_cast<Stream>(0x2000);
const Stream kOther = reinterpret_cast<Stream>(0x3000);

// The backend's answers: `joined` captures; counts how often it is asked.
struct Backend {
  std::set<Stream> joined;
  int asked = 0;
  bool operator()(Stream stream) {
    ++asked;
    return joined.count(stream) != 0;
  }
};

TEST(CapturingStreams, a_process_that_captures_nothing_never_asks_the_backend) {
  CapturingStreams<Stream> streams;
  Backend backend{{kJoined}};
  EXPECT_FALSE(streams.capturing(kJoined, {kNull, kLegacy}, std::ref(backend)));
  EXPECT_FALSE(streams.capturing(kOther, {kNull, kLegacy}, std::ref(backend)));
  EXPECT_EQ(backend.asked, 0);
}

TEST(CapturingStreams, while_a_capture_is_under_way_other_streams_are_asked_about) {
  CapturingStreams<Stream> streams;
  Backend backend{{kJoined}};
  streams.began(kOrigin);
  EXPECT_TRUE(streams.capturing(kOrigin, {kNull, kLegacy}, std::ref(backend)));
  EXPECT_EQ(backend.asked, 0) << "a capture the stub began is known without a round trip";
  EXPECT_TRUE(streams.capturing(kJoined, {kNull, kLegacy}, std::ref(backend)));
  EXPECT_FALSE(streams.capturing(kOther, {kNull, kLegacy}, std::ref(backend)));
  EXPECT_EQ(backend.asked, 2);
  EXPECT_FALSE(streams.capturing(kNull, {kNull, kLegacy}, std::ref(backend)));
  EXPECT_FALSE(streams.capturing(kLegacy, {kNull, kLegacy}, std::ref(backend)));
  EXPECT_EQ(backend.asked, 2) << "the predefined streams no capture takes are never asked about";
  streams.ended(kOrigin);
  EXPECT_FALSE(streams.capturing(kOrigin, {kNull, kLegacy}, std::ref(backend)));
  EXPECT_FALSE(streams.capturing(kJoined, {kNull, kLegacy}, std::ref(backend)));
  EXPECT_EQ(backend.asked, 2) << "once the capture ended, nothing is asked again";
}

}  // namespace
}  // namespace gvirtus
