// The descriptor a stub gives the application for an exported handle (common/shareable_token.h):
// it carries the token and nothing can change it; an import reads the token back, and refuses a
// descriptor that carries none; fabric handles pass as their bytes; Windows types are refused.
#include "common/shareable_token.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <vector>

namespace gvirtus {
namespace {

ShareableToken sample() {
  ShareableToken token{};
  for (uint8_t i = 0; i < 16; ++i) {
    token.server[i] = i;
    token.secret[i] = static_cast<uint8_t>(0xf0 | i);
  }
  token.index = 42;
  return token;
}

TEST(ShareableToken, a_descriptor_carries_its_token_sealed) {
  const int fd = shareable_handle_fd(sample());
  ASSERT_GE(fd, 0);
  const auto back = read_shareable_handle_fd(fd);
  ASSERT_TRUE(back);
  const ShareableToken expected = sample();
  EXPECT_EQ(std::memcmp(&*back, &expected, sizeof expected), 0);
  EXPECT_LT(::pwrite(fd, "x", 1, 0), 0) << "sealed: the token cannot be changed";
  EXPECT_LT(::ftruncate(fd, 1), 0);
  EXPECT_NE(::fcntl(fd, F_GETFD) & FD_CLOEXEC, 0);
  ::close(fd);
}

TEST(ShareableToken, other_descriptors_carry_none) {
  const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  EXPECT_FALSE(read_shareable_handle_fd(null));
  EXPECT_FALSE(read_shareable_handle_fd(-1));
  std::vector<std::byte> blob;
  EXPECT_EQ(take_shareable(kHandlePosixFd, reinterpret_cast<void*>(intptr_t{null}), blob),
            ShareableOutcome::kForeign);
  ::close(null);
}

TEST(ShareableToken, an_export_and_an_import_round_trip) {
  const ShareableToken token = sample();
  std::vector<std::byte> reply(sizeof token);
  std::memcpy(reply.data(), &token, sizeof token);
  int fd = -1;
  ASSERT_EQ(give_shareable(kHandlePosixFd, reply, &fd), ShareableOutcome::kDone);
  std::vector<std::byte> sent;
  ASSERT_EQ(take_shareable(kHandlePosixFd, reinterpret_cast<void*>(intptr_t{fd}), sent),
            ShareableOutcome::kDone);
  EXPECT_EQ(sent, reply);
  ::close(fd);

  std::vector<std::byte> fabric(kFabricHandleBytes, std::byte{3});
  unsigned char handle[kFabricHandleBytes] = {};
  ASSERT_EQ(give_shareable(kHandleFabric, fabric, handle), ShareableOutcome::kDone);
  std::vector<std::byte> fabric_sent;
  ASSERT_EQ(take_shareable(kHandleFabric, handle, fabric_sent), ShareableOutcome::kDone);
  EXPECT_EQ(fabric_sent, fabric);
  EXPECT_EQ(give_shareable(kHandlePosixFd, fabric, &fd), ShareableOutcome::kInvalidValue)
      << "a reply of the wrong size";
}

TEST(ShareableToken, only_descriptors_and_fabric_handles_are_shared) {
  EXPECT_EQ(shareable_type(kHandlePosixFd), ShareableOutcome::kDone);
  EXPECT_EQ(shareable_type(kHandleFabric), ShareableOutcome::kDone);
  EXPECT_EQ(shareable_type(kHandleWin32), ShareableOutcome::kNotSupported);
  EXPECT_EQ(shareable_type(kHandleWin32Kmt), ShareableOutcome::kNotSupported);
  EXPECT_EQ(shareable_type(0), ShareableOutcome::kInvalidValue);
  EXPECT_EQ(shareable_type(kHandlePosixFd | kHandleFabric), ShareableOutcome::kInvalidValue);
}

}  // namespace
}  // namespace gvirtus
