#include "protocol/auth.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

#include "common/error.h"
#include "common/unique_fd.h"

namespace gvirtus {
namespace {

constexpr std::string_view kBackendLabel = "gvirtus-auth-v1 backend";
constexpr std::string_view kClientLabel = "gvirtus-auth-v1 client";

std::string octal_mode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

[[noreturn]] void fail_secret(const std::string& path, const std::string& why) {
  raise(ErrorKind::kInvalidInput, "secret_file " + path + ": " + why);
}

bool is_space(std::byte b) {
  const auto c = static_cast<unsigned char>(b);
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

// HMAC-SHA256 over the concatenated pieces.
AuthProof hmac(const Secret& secret, std::initializer_list<std::span<const std::byte>> pieces) {
  std::vector<std::byte> message;
  for (const auto& piece : pieces) message.insert(message.end(), piece.begin(), piece.end());
  AuthProof out{};
  unsigned int length = 0;
  const auto key = secret.bytes();
  if (::HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
             reinterpret_cast<const unsigned char*>(message.data()), message.size(),
             reinterpret_cast<unsigned char*>(out.data()), &length) == nullptr ||
      length != out.size()) {
    raise(ErrorKind::kFailed, "HMAC-SHA256 failed in libcrypto");
  }
  OPENSSL_cleanse(message.data(), message.size());
  return out;
}

std::span<const std::byte> bytes_of(std::string_view text) {
  return {reinterpret_cast<const std::byte*>(text.data()), text.size()};
}

}  // namespace

Secret::~Secret() {
  if (!bytes_.empty()) OPENSSL_cleanse(bytes_.data(), bytes_.size());
}

Secret load_secret(const std::string& path, SecretReader reader) {
  // O_NOFOLLOW is not used: an operator may keep the secret behind a symlink; the checks below
  // apply to the file itself (fstat on the opened descriptor, so nothing can be swapped between).
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) fail_secret(path, std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    fail_secret(path, std::string("cannot stat: ") + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) fail_secret(path, "not a regular file");
  if (st.st_uid != ::geteuid() && st.st_uid != 0) {
    fail_secret(path, "owned by uid " + std::to_string(st.st_uid) + ", not by this user (uid " +
                          std::to_string(::geteuid()) + ") or root");
  }
  if (reader == SecretReader::kBackend && (st.st_mode & 077) != 0) {
    fail_secret(path, "mode " + octal_mode(st.st_mode) +
                          " lets others than its owner use it; the backend refuses to start "
                          "with it (chmod 600 " +
                          path + ")");
  }
  if (reader == SecretReader::kClient && (st.st_mode & S_IROTH) != 0) {
    fail_secret(path, "mode " + octal_mode(st.st_mode) +
                          " lets every user read it; refusing to use it (chmod 600 or 640 " + path +
                          ")");
  }
  if (st.st_size > static_cast<off_t>(kMaxSecretBytes) + 2) {
    fail_secret(path, "larger than " + std::to_string(kMaxSecretBytes) + " bytes");
  }
  std::vector<std::byte> bytes(kMaxSecretBytes + 2);
  size_t have = 0;
  for (;;) {
    const ssize_t got = ::read(fd.get(), bytes.data() + have, bytes.size() - have);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) fail_secret(path, std::string("cannot read: ") + std::strerror(errno));
    if (got == 0) break;
    have += static_cast<size_t>(got);
    if (have == bytes.size()) break;
  }
  while (have > 0 && is_space(bytes[have - 1])) --have;
  Secret secret({bytes.begin(), bytes.begin() + static_cast<ptrdiff_t>(have)});
  OPENSSL_cleanse(bytes.data(), bytes.size());
  if (have > kMaxSecretBytes) {
    fail_secret(path, "larger than " + std::to_string(kMaxSecretBytes) + " bytes");
  }
  if (have < kMinSecretBytes) {
    fail_secret(path, "holds " + std::to_string(have) + " bytes; a secret needs at least " +
                          std::to_string(kMinSecretBytes) +
                          " (e.g. head -c 32 /dev/urandom | base64 > FILE)");
  }
  return secret;
}

std::optional<Secret> configured_secret(const Config& config, SecretReader reader) {
  if (!config.secret_file) {
    if (config.secure_application) {
      raise(ErrorKind::kInvalidInput,
            config.source +
                ": secure_application: true needs \"secret_file\", the shared secret both sides "
                "authenticate with (docs/security.md)");
    }
    return std::nullopt;
  }
  return load_secret(*config.secret_file, reader);
}

AuthNonce random_nonce() {
  AuthNonce nonce{};
  size_t have = 0;
  while (have < nonce.size()) {
    const ssize_t got = ::getrandom(nonce.data() + have, nonce.size() - have, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) raise_errno("getrandom", errno);
    have += static_cast<size_t>(got);
  }
  return nonce;
}

AuthDigest hello_digest(std::span<const std::byte> hello_payload) {
  AuthDigest digest{};
  ::SHA256(reinterpret_cast<const unsigned char*>(hello_payload.data()), hello_payload.size(),
           reinterpret_cast<unsigned char*>(digest.data()));
  return digest;
}

AuthProof backend_proof(const Secret& secret, const AuthDigest& hello, const AuthNonce& nonce) {
  return hmac(secret, {bytes_of(kBackendLabel), hello, nonce});
}

AuthProof client_proof(const Secret& secret, const AuthDigest& hello, const AuthNonce& nonce,
                       const AuthProof& backend) {
  return hmac(secret, {bytes_of(kClientLabel), hello, nonce, backend});
}

bool same_proof(const AuthProof& a, const AuthProof& b) {
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace gvirtus
