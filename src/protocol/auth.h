// Shared-secret authentication of a session, both ways (DESIGN.md section 8, docs/security.md).
//
// Both sides hold the same secret (a file named by "secret_file" in properties.json). The
// exchange rides on the handshake and proves knowledge of the secret without sending it:
//
//   client -> Hello request      ... plus a fresh 32-byte client nonce
//   backend -> Hello reply       ... plus a fresh backend nonce N and the backend's proof
//                                    Pb = HMAC-SHA256(K, "gvirtus-auth-v1 backend" | H | N)
//                                    where H = SHA-256 of the hello request's payload
//   client -> Authenticate       the client's proof Pc = HMAC-SHA256(K, "gvirtus-auth-v1 client"
//                                    | H | N | Pb), sent only after Pb checked out (or a reason
//                                    why it gives up: no secret, or Pb did not match)
//   backend -> reply             empty: the session is open; or an error naming the refusal
//
// The backend proves itself first, so a client never computes a proof for an unauthenticated
// peer; the two proofs carry different labels, so one can never be replayed as the other; fresh
// nonces on both sides make every proof single-use. This authenticates the peers at connect time;
// it does not encrypt or sign the frames that follow (see docs/security.md).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/config.h"

namespace gvirtus {

inline constexpr size_t kAuthNonceBytes = 32;
inline constexpr size_t kAuthProofBytes = 32;  // HMAC-SHA256
inline constexpr size_t kMinSecretBytes = 16;
inline constexpr size_t kMaxSecretBytes = 4096;

using AuthNonce = std::array<std::byte, kAuthNonceBytes>;
using AuthProof = std::array<std::byte, kAuthProofBytes>;
using AuthDigest = std::array<std::byte, 32>;  // SHA-256 of the hello request

// How the backend answers the hello: no authentication, or the HMAC challenge above.
enum class AuthScheme : uint8_t { kNone = 0, kHmacSha256 = 1 };

// What the client's Authenticate call carries.
enum class AuthOutcome : uint8_t {
  kProof = 0,  // Pc follows
  kClientHasNoSecret = 1,
  kBackendProofWrong = 2,
};

// A shared secret held in memory; wiped when it goes.
class Secret {
 public:
  explicit Secret(std::vector<std::byte> bytes) : bytes_(std::move(bytes)) {}
  ~Secret();
  Secret(Secret&&) = default;
  Secret& operator=(Secret&&) = default;
  Secret(const Secret&) = delete;
  Secret& operator=(const Secret&) = delete;
  std::span<const std::byte> bytes() const { return bytes_; }

 private:
  std::vector<std::byte> bytes_;
};

// Which side reads the secret: the backend refuses a file that anyone but its owner may read,
// write or execute (group or other permission bits); a client refuses one that others may read
// (a team may share a secret through a group). Both refuse files of other owners than themselves
// or root, and secrets shorter than kMinSecretBytes (trailing whitespace, e.g. the newline of
// `base64 > file`, is not part of the secret).
enum class SecretReader { kBackend, kClient };

// Reads and checks a secret file. Throws Error{kInvalidInput} naming the file and the defect.
Secret load_secret(const std::string& path, SecretReader reader);

// The secret a configuration asks for: none when it names no secret_file (then
// secure_application must be false), else the loaded file. Throws Error{kInvalidInput} with a
// message naming the configuration file for a secure_application without a secret_file.
std::optional<Secret> configured_secret(const Config& config, SecretReader reader);

// Fresh random bytes from the kernel (getrandom).
AuthNonce random_nonce();

AuthDigest hello_digest(std::span<const std::byte> hello_payload);
AuthProof backend_proof(const Secret& secret, const AuthDigest& hello, const AuthNonce& nonce);
AuthProof client_proof(const Secret& secret, const AuthDigest& hello, const AuthNonce& nonce,
                       const AuthProof& backend);
// Constant-time comparison, so the time taken does not tell an attacker how much was right.
bool same_proof(const AuthProof& a, const AuthProof& b);

}  // namespace gvirtus
