// Shareable handles between sessions (backend/services/shareable_handles.h), with real sockets and
// processes: a descriptor one instance published is fetched by another process through its
// token, with the size published with it; a wrong secret or index, a worker that is gone and a
// peer that sends garbage are refused without harming the serving one; a session keeps at most
// kMaxPublished.
#include "backend/services/shareable_handles.h"

#include "common/error.h"
#include "support/in_child.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <string>

namespace gvirtus::services {
namespace {

// A memfd holding `text`.
UniqueFd holding(const std::string& text) {
  UniqueFd fd(::memfd_create("shareable-test", MFD_CLOEXEC));
  EXPECT_EQ(::pwrite(fd.get(), text.data(), text.size(), 0), static_cast<ssize_t>(text.size()));
  return fd;
}

std::string text_of(int fd) {
  char bytes[64] = {};
  const ssize_t got = ::pread(fd, bytes, sizeof bytes, 0);
  return got > 0 ? std::string(bytes, static_cast<size_t>(got)) : std::string();
}

using testing::in_child;

TEST(ShareableHandles, another_process_fetches_what_was_published_with_its_size) {
  ShareableHandles exporter;
  std::string why;
  const auto token = exporter.publish(holding("the pool"), 4096, why);
  ASSERT_TRUE(token) << why;
  EXPECT_EQ(in_child([&] {
              ShareableHandles importer;  // a worker of its own
              std::string reason;
              ShareableHandles::Fetched fetched = importer.fetch(*token, reason);
              return fetched.fd.valid() && text_of(fetched.fd.get()) == "the pool" &&
                     fetched.bytes == 4096;
            }),
            0);
}

TEST(ShareableHandles, the_exporting_session_itself_gets_a_duplicate) {
  ShareableHandles handles;
  std::string why;
  const auto token = handles.publish(holding("mine"), 0, why);
  ASSERT_TRUE(token) << why;
  ShareableHandles::Fetched fetched = handles.fetch(*token, why);
  ASSERT_TRUE(fetched.fd.valid()) << why;
  EXPECT_EQ(text_of(fetched.fd.get()), "mine");
}

TEST(ShareableHandles, a_wrong_secret_or_index_is_refused_and_the_right_one_still_served) {
  ShareableHandles exporter;
  std::string why;
  const auto token = exporter.publish(holding("secret"), 0, why);
  ASSERT_TRUE(token) << why;
  ShareableToken forged = *token;
  forged.secret[7] ^= 1;
  ShareableToken beyond = *token;
  beyond.index = 5;
  EXPECT_EQ(in_child([&] {
              ShareableHandles importer;
              std::string a, b, c;
              const bool forged_refused = !importer.fetch(forged, a).fd.valid() &&
                                          a.find("does not know") != std::string::npos;
              const bool beyond_refused = !importer.fetch(beyond, b).fd.valid();
              return forged_refused && beyond_refused && importer.fetch(*token, c).fd.valid();
            }),
            0);
}

TEST(ShareableHandles, a_worker_that_is_gone_is_said_to_be) {
  ShareableToken nobody{};
  nobody.server[0] = 0x5a;  // no worker listens by this name
  ShareableHandles importer;
  std::string why;
  EXPECT_FALSE(importer.fetch(nobody, why).fd.valid());
  EXPECT_NE(why.find("gone"), std::string::npos) << why;
}

TEST(ShareableHandles, a_peer_sending_garbage_does_not_stop_the_server) {
  ShareableHandles exporter;
  std::string why;
  const auto token = exporter.publish(holding("still here"), 0, why);
  ASSERT_TRUE(token) << why;
  // The listening name, as fetch() builds it: connect and send three bytes.
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::string name = "gvirtus-shareable-";
  static constexpr char kHex[] = "0123456789abcdef";
  for (uint8_t byte : token->server) {
    name += kHex[byte >> 4];
    name += kHex[byte & 15];
  }
  std::memcpy(address.sun_path + 1, name.data(), name.size());
  const int raw = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  ASSERT_EQ(::connect(raw, reinterpret_cast<sockaddr*>(&address),
                      static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size())),
            0);
  ASSERT_EQ(::send(raw, "abc", 3, MSG_NOSIGNAL), 3);
  char reply = 0;
  EXPECT_LE(::recv(raw, &reply, 1, 0), 0) << "garbage gets no descriptor";
  ::close(raw);
  EXPECT_EQ(in_child([&] {
              ShareableHandles importer;
              std::string reason;
              ShareableHandles::Fetched fetched = importer.fetch(*token, reason);
              return fetched.fd.valid() && text_of(fetched.fd.get()) == "still here";
            }),
            0);
}

TEST(ShareableHandles, a_session_keeps_at_most_its_limit) {
  ShareableHandles handles;
  std::string why;
  for (size_t i = 0; i < ShareableHandles::kMaxPublished; ++i) {
    ASSERT_TRUE(handles.publish(holding("x"), 0, why)) << i << ": " << why;
  }
  EXPECT_FALSE(handles.publish(holding("one more"), 0, why));
  EXPECT_NE(why.find("exported handles already"), std::string::npos) << why;
}

TEST(ShareableHandles, an_import_source_of_the_wrong_size_is_malformed) {
  ImportSource source;
  std::string why;
  const std::byte short_blob[3] = {};
  EXPECT_THROW(import_source(kHandlePosixFd, short_blob, source, why), gvirtus::Error);
  const std::byte fabric[kFabricHandleBytes] = {std::byte{9}};
  ASSERT_TRUE(import_source(kHandleFabric, fabric, source, why)) << why;
  EXPECT_EQ(static_cast<const std::byte*>(source.os_handle())[0], std::byte{9});
  EXPECT_THROW(import_source(kHandleWin32, fabric, source, why), gvirtus::Error);
}

}  // namespace
}  // namespace gvirtus::services
