// Shareable handles across machines. A library exports a memory pool or a physical allocation as
// a POSIX file descriptor (CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), which the application
// passes to another process (SCM_RIGHTS, pidfd_getfd) to import there. Under gvirtus the
// descriptor the driver made lives in the exporting session's worker, on the backend's machine;
// the application needs one of its own machine. So:
//  - the backend keeps the driver's descriptor and answers a ShareableToken naming it
//    (backend/services/shareable_handles.h: the worker that holds it and a secret);
//  - the stub gives the application a descriptor of its own machine that carries the token: a
//    memfd whose bytes are kShareableMagic then the token (shareable_handle_fd). Passing it on
//    passes the token, and the capability with it; nothing else can name the handle;
//  - the importing stub reads the token back (read_shareable_handle_fd) and sends it; its worker
//    fetches the driver's descriptor from the exporting worker and imports it there.
// A descriptor that is not such a memfd is refused by the importing stub
// (CUDA_ERROR_INVALID_VALUE), as the driver refuses a descriptor it did not export.
#pragma once

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <tuple>
#include <vector>

#include "common/unique_fd.h"

namespace gvirtus {

struct ShareableToken {
  uint8_t server[16];  // the exporting worker's listening name
  uint64_t index;      // the handle among those it keeps
  uint8_t secret[16];  // the capability: whoever holds the token may import it
};
static_assert(sizeof(ShareableToken) == 40);

inline constexpr char kShareableMagic[8] = {'g', 'v', 'i', 'r', 't', 'u', 's', 'H'};

// A new descriptor of this machine carrying `token` (close-on-exec, as the driver's are), or -1
// with errno set.
inline int shareable_handle_fd(const ShareableToken& token) {
  UniqueFd fd(::memfd_create("gvirtus-shareable-handle", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!fd.valid()) return -1;
  unsigned char bytes[sizeof kShareableMagic + sizeof token];
  std::memcpy(bytes, kShareableMagic, sizeof kShareableMagic);
  std::memcpy(bytes + sizeof kShareableMagic, &token, sizeof token);
  if (::pwrite(fd.get(), bytes, sizeof bytes, 0) != static_cast<ssize_t>(sizeof bytes)) return -1;
  // Sealed: whoever receives it cannot make it name another handle.
  ::fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
  return fd.release();
}

// The token `fd` carries, or nothing when it is not such a descriptor.
inline std::optional<ShareableToken> read_shareable_handle_fd(int fd) {
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
      st.st_size != static_cast<off_t>(sizeof kShareableMagic + sizeof(ShareableToken))) {
    return std::nullopt;
  }
  unsigned char bytes[sizeof kShareableMagic + sizeof(ShareableToken)];
  if (::pread(fd, bytes, sizeof bytes, 0) != static_cast<ssize_t>(sizeof bytes) ||
      std::memcmp(bytes, kShareableMagic, sizeof kShareableMagic) != 0) {
    return std::nullopt;
  }
  ShareableToken token{};
  std::memcpy(&token, bytes + sizeof kShareableMagic, sizeof token);
  return token;
}

// A shareable handle exported or imported, as both stubs send it (cuda rows 288-293, cudart rows
// 301-302): the pool or physical allocation exported (0 for an import), the handle type and the
// flags. An import's blob follows (shareable_blob_bytes of the type: the token or the fabric
// handle); an export's reply is the status, then that blob (empty after a failure), and an
// import's the status, then the imported handle as u64.
struct ShareableRequest {
  uint64_t handle;
  uint32_t type;
  uint64_t flags;
  static constexpr auto kFields =
      std::tuple{&ShareableRequest::handle, &ShareableRequest::type, &ShareableRequest::flags};
};

// The handle types shared this way (CUmemAllocationHandleType and cudaMemAllocationHandleType
// number them alike): a POSIX descriptor travels as its token, a fabric handle as its 64 bytes,
// which mean the same on every machine of the fabric. Windows handles do not exist on Linux.
inline constexpr uint32_t kHandlePosixFd = 0x1;
inline constexpr uint32_t kHandleWin32 = 0x2;
inline constexpr uint32_t kHandleWin32Kmt = 0x4;
inline constexpr uint32_t kHandleFabric = 0x8;
inline constexpr size_t kFabricHandleBytes = 64;

// What travels for a handle of `type` (its token or fabric handle); 0 for any other type.
inline size_t shareable_blob_bytes(uint32_t type) {
  return type == kHandlePosixFd  ? sizeof(ShareableToken)
         : type == kHandleFabric ? kFabricHandleBytes
                                 : 0;
}

// The stub's outcomes, each library answering with its own status for them.
// kForeign: a descriptor that carries no token (the driver did not export it either).
enum class ShareableOutcome { kDone, kInvalidValue, kNotSupported, kOperatingSystem, kForeign };

// Whether a handle of `type` can be exported or imported at all.
inline ShareableOutcome shareable_type(uint32_t type) {
  if (shareable_blob_bytes(type) != 0) return ShareableOutcome::kDone;
  return type == kHandleWin32 || type == kHandleWin32Kmt ? ShareableOutcome::kNotSupported
                                                         : ShareableOutcome::kInvalidValue;
}

// An export's reply `blob` into the application's `handle_out`: a descriptor carrying the token
// (an int), or the fabric handle's bytes.
inline ShareableOutcome give_shareable(uint32_t type, std::span<const std::byte> blob,
                                       void* handle_out) {
  if (handle_out == nullptr || blob.size() != shareable_blob_bytes(type)) {
    return ShareableOutcome::kInvalidValue;
  }
  if (type == kHandleFabric) {
    std::memcpy(handle_out, blob.data(), blob.size());
    return ShareableOutcome::kDone;
  }
  ShareableToken token{};
  std::memcpy(&token, blob.data(), sizeof token);
  const int fd = shareable_handle_fd(token);
  if (fd < 0) return ShareableOutcome::kOperatingSystem;
  std::memcpy(handle_out, &fd, sizeof fd);
  return ShareableOutcome::kDone;
}

// What an import of the application's `os_handle` sends: the token its descriptor carries (the
// descriptor is the handle's value, as the driver takes it), or the fabric handle it points at.
// A descriptor that carries none was not exported through gvirtus: kInvalidValue.
inline ShareableOutcome take_shareable(uint32_t type, const void* os_handle,
                                       std::vector<std::byte>& blob) {
  if (type == kHandleFabric) {
    if (os_handle == nullptr) return ShareableOutcome::kInvalidValue;
    blob.resize(kFabricHandleBytes);
    std::memcpy(blob.data(), os_handle, kFabricHandleBytes);
    return ShareableOutcome::kDone;
  }
  const auto token =
      read_shareable_handle_fd(static_cast<int>(reinterpret_cast<intptr_t>(os_handle)));
  if (!token) return ShareableOutcome::kForeign;
  blob.resize(sizeof *token);
  std::memcpy(blob.data(), &*token, sizeof *token);
  return ShareableOutcome::kDone;
}

}  // namespace gvirtus
