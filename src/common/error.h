// The error type of every C++ layer of gvirtus.
//
// Inside C++ code we signal failure with exceptions of type gvirtus::Error. The category tells the
// caller what to do about it (after Cap'n Proto's kj::Exception::Type):
//   kFailed         - something went wrong; retrying the same thing will likely fail again.
//   kOverloaded     - a limit was hit (sessions, bytes in flight); retry later.
//   kDisconnected   - the peer or the connection is gone; every call in flight fails; reconnect.
//   kUnimplemented  - the peer does not know this call; old and new peers can still talk.
//   kInvalidInput   - bad input from a caller, a peer or a file: who is at fault is in the message.
//   kTimedOut       - a bounded wait ran out (connect, handshake, reply).
// Errors are converted to cudaError_t exactly once, at the extern "C" boundary of the stub, and to
// a logged session end in the backend; an Error never escapes either.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace gvirtus {

enum class ErrorKind : uint32_t {
  kFailed = 1,
  kOverloaded = 2,
  kDisconnected = 3,
  kUnimplemented = 4,
  kInvalidInput = 5,
  kTimedOut = 6,
};

// Name of a category ("disconnected"...), for messages and logs.
std::string_view to_string(ErrorKind kind);

// True for values that name a category; used to validate kinds that arrive from a peer.
bool is_valid_error_kind(uint32_t value);

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const noexcept { return kind_; }

 private:
  ErrorKind kind_;
};

// Throws Error{kind, message}. A function so that call sites stay one line and [[noreturn]].
[[noreturn]] void raise(ErrorKind kind, const std::string& message);

// Throws Error{kFailed, "<what>: <strerror(err)>"}, or kDisconnected for errno values that mean the
// peer is gone (EPIPE, ECONNRESET, ...).
[[noreturn]] void raise_errno(const std::string& what, int err);

}  // namespace gvirtus
