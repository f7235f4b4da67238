// Secret files and proofs (protocol/auth.h): what is refused and why, and that the proofs bind
// everything they should.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "common/error.h"
#include "protocol/auth.h"

namespace gvirtus {
namespace {

using ::testing::HasSubstr;

class SecretFile : public ::testing::Test {
 protected:
  SecretFile() {
    char tmpl[] = "/tmp/gvirtus-secret-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
  }
  ~SecretFile() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& text, mode_t mode) {
    const std::string p = dir_ + "/secret";
    std::filesystem::remove(p);
    std::ofstream(p) << text;
    ::chmod(p.c_str(), mode);
    return p;
  }
  static std::string error_of(const std::string& path, SecretReader reader) {
    try {
      load_secret(path, reader);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
      return e.what();
    }
    return "";
  }
  std::string dir_;
};

TEST_F(SecretFile, trailing_whitespace_is_not_part_of_the_secret) {
  const Secret a = load_secret(write("0123456789abcdef\n", 0600), SecretReader::kBackend);
  const Secret b = load_secret(write("0123456789abcdef", 0600), SecretReader::kBackend);
  EXPECT_EQ(a.bytes().size(), 16u);
  EXPECT_TRUE(std::equal(a.bytes().begin(), a.bytes().end(), b.bytes().begin()));
}

TEST_F(SecretFile, modes_short_long_and_odd_files_are_refused_with_the_reason) {
  const std::string good = "0123456789abcdef0123";
  EXPECT_THAT(error_of(write(good, 0644), SecretReader::kBackend), HasSubstr("mode 0644"));
  EXPECT_THAT(error_of(write(good, 0640), SecretReader::kBackend), HasSubstr("mode 0640"));
  EXPECT_THAT(error_of(write(good, 0604), SecretReader::kClient), HasSubstr("every user"));
  EXPECT_EQ(error_of(write(good, 0640), SecretReader::kClient), "");  // a team's group secret
  EXPECT_THAT(error_of(write("short", 0600), SecretReader::kBackend), HasSubstr("at least 16"));
  EXPECT_THAT(error_of(write(std::string(5000, 'x'), 0600), SecretReader::kBackend),
              HasSubstr("larger than 4096"));
  EXPECT_THAT(error_of(dir_, SecretReader::kBackend), HasSubstr("not a regular file"));
  EXPECT_THAT(error_of(dir_ + "/none", SecretReader::kBackend), HasSubstr("cannot open"));
}

TEST(AuthProofs, proofs_depend_on_secret_hello_nonce_and_side) {
  const Secret k1({std::vector<std::byte>(32, std::byte{1})});
  const Secret k2({std::vector<std::byte>(32, std::byte{2})});
  const std::byte hello_bytes[] = {std::byte{1}, std::byte{2}};
  const AuthDigest h1 = hello_digest(hello_bytes), h2 = hello_digest({});
  const AuthNonce n1 = random_nonce(), n2 = random_nonce();
  EXPECT_NE(n1, n2);
  const AuthProof p = backend_proof(k1, h1, n1);
  EXPECT_TRUE(same_proof(p, backend_proof(k1, h1, n1)));
  EXPECT_FALSE(same_proof(p, backend_proof(k2, h1, n1)));
  EXPECT_FALSE(same_proof(p, backend_proof(k1, h2, n1)));
  EXPECT_FALSE(same_proof(p, backend_proof(k1, h1, n2)));
  EXPECT_FALSE(same_proof(p, client_proof(k1, h1, n1, p)));  // labels keep the sides apart
}

TEST(AuthConfig, secure_application_needs_a_secret_file) {
  Config config;
  config.source = "x.json";
  EXPECT_FALSE(configured_secret(config, SecretReader::kClient).has_value());
  config.secure_application = true;
  try {
    configured_secret(config, SecretReader::kClient);
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("x.json: secure_application: true needs"));
  }
}

}  // namespace
}  // namespace gvirtus
