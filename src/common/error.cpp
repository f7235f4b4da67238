#include "common/error.h"

#include <cerrno>
#include <cstring>

namespace gvirtus {

std::string_view to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kFailed:
      return "failed";
    case ErrorKind::kOverloaded:
      return "overloaded";
    case ErrorKind::kDisconnected:
      return "disconnected";
    case ErrorKind::kUnimplemented:
      return "unimplemented";
    case ErrorKind::kInvalidInput:
      return "invalid input";
    case ErrorKind::kTimedOut:
      return "timed out";
  }
  return "unknown";
}

bool is_valid_error_kind(uint32_t value) {
  return value >= static_cast<uint32_t>(ErrorKind::kFailed) &&
         value <= static_cast<uint32_t>(ErrorKind::kTimedOut);
}

void raise(ErrorKind kind, const std::string& message) {
  throw Error(kind, message);
}

void raise_errno(const std::string& what, int err) {
  const bool peer_gone = err == EPIPE || err == ECONNRESET || err == ENOTCONN ||
                         err == ECONNABORTED || err == ESHUTDOWN || err == ETIMEDOUT ||
                         err == EHOSTUNREACH || err == ENETUNREACH || err == ENETDOWN;
  const ErrorKind kind =
      err == ECONNREFUSED || peer_gone ? ErrorKind::kDisconnected : ErrorKind::kFailed;
  throw Error(kind, what + ": " + std::strerror(err));
}

}  // namespace gvirtus
