// Shareable handles between sessions (a shared backend service of the cuda and cudart plugins;
// the whole scheme: common/shareable_token.h).
//
// A session's worker keeps each descriptor its library exported (publish) and answers a token
// for it: 16 random bytes naming the worker's listening socket, the handle's index and a 16-byte
// random secret. Another session's worker - a separate process of the same daemon, or of another
// daemon of the machine - fetches the descriptor with the token (fetch): it connects to the
// exporting worker's abstract unix socket and receives a duplicate over SCM_RIGHTS, which its
// library then imports. The exporting worker answers on a thread of its own, started at its
// first publish; it answers only peers of its own user, each request within kRequestTimeout, and
// hands a descriptor only for a token whose secret matches (compared in constant time).
//
// Lifetime: a published descriptor lives as long as the exporting session (its worker) does, as
// a descriptor the application holds keeps a native export alive; an import made before then
// holds what it imported by itself. At most kMaxPublished per session.
//
// Thread affinity: any thread. One instance per plugin library in a worker process
// (shareable_handles()); a worker serves one session and never forks.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "common/shareable_token.h"
#include "common/unique_fd.h"
#include "common/wire.h"

namespace gvirtus::services {

class ShareableHandles {
 public:
  static constexpr size_t kMaxPublished = 256;
  static constexpr std::chrono::milliseconds kRequestTimeout{2000};

  ShareableHandles() = default;
  ~ShareableHandles();  // stops answering (the worker's own instance is never destroyed)
  ShareableHandles(const ShareableHandles&) = delete;
  ShareableHandles& operator=(const ShareableHandles&) = delete;

  // What a fetch gives: a descriptor of this process, and the size the exporter published with
  // it (a physical allocation's, which its importer's mappings are vetted against; 0 for a pool).
  struct Fetched {
    UniqueFd fd;
    uint64_t bytes = 0;
  };

  // Keeps `fd` (and `bytes`) for other sessions and names it. Nothing, with `why`, past
  // kMaxPublished or when the worker cannot listen.
  std::optional<ShareableToken> publish(UniqueFd fd, uint64_t bytes, std::string& why);

  // What `token` names (of this worker or another), or an invalid descriptor with `why`: the
  // exporting worker is gone or unreachable, or the token is not one of its.
  Fetched fetch(const ShareableToken& token, std::string& why);

 private:
  struct Published {
    uint8_t secret[16];
    UniqueFd fd;
    uint64_t bytes;
  };

  bool listen(std::string& why);  // under mutex_
  void serve();                   // the answering thread
  void answer(int connection);
  Fetched local(uint64_t index, const uint8_t (&secret)[16]);

  std::mutex mutex_;
  uint8_t server_[16] = {};
  UniqueFd listener_;
  std::thread server_thread_;
  std::vector<Published> published_;
};

// This plugin library's instance in the worker.
ShareableHandles& shareable_handles();

// What an import names, ready for the library's import call: a descriptor fetched from the
// exporting session (with the size it published), or a fabric handle's bytes.
struct ImportSource {
  uint32_t type = 0;
  UniqueFd fd;
  uint64_t bytes = 0;
  std::array<std::byte, kFabricHandleBytes> fabric{};
  // The os handle the library takes: the descriptor as its value, or the fabric handle's address.
  void* os_handle() {
    return type == kHandlePosixFd ? reinterpret_cast<void*>(static_cast<intptr_t>(fd.get()))
                                  : static_cast<void*>(fabric.data());
  }
};

// An import's `blob` (common/shareable_token.h) for a handle of `type`. Raises kInvalidInput
// when its size is not the type's (the stub sends no other); false with `why` when the exporting
// session cannot give the descriptor.
bool import_source(uint32_t type, std::span<const std::byte> blob, ImportSource& source,
                   std::string& why);

// An export's reply blob from what the library wrote at `handle` for `type`: the descriptor
// (kept by this session, published with `bytes`) as its token, or the fabric handle's bytes.
// False with `why` when the descriptor cannot be published (it is closed then).
bool export_blob(uint32_t type, const void* handle, uint64_t bytes, std::vector<std::byte>& blob,
                 std::string& why);

// The plugins' export and import handlers over the two above, for a library whose success is 0.
// reply_export writes an export's reply - the status, then the blob (empty after a failure) -
// for the library's export into `handle` that answered `result`; a descriptor that cannot be
// published makes it `os_error`, logged naming `call`. fetch_import fills `source` for an
// import, or answers `invalid`, logged naming `call`.
void log_shareable_failure(const char* call, const std::string& why);

template <typename Status>
Status reply_export(WireWriter& out, Status result, Status os_error, uint32_t type,
                    const void* handle, uint64_t bytes, const char* call) {
  std::vector<std::byte> blob;
  std::string why;
  if (result == Status{} && !export_blob(type, handle, bytes, blob, why)) {
    log_shareable_failure(call, why);
    result = os_error;
  }
  out.put<int32_t>(static_cast<int32_t>(result));
  out.put_blob(blob.data(), result == Status{} ? blob.size() : 0);
  return result;
}

template <typename Status>
Status fetch_import(uint32_t type, std::span<const std::byte> blob, ImportSource& source,
                    Status invalid, const char* call) {
  std::string why;
  if (import_source(type, blob, source, why)) return Status{};
  log_shareable_failure(call, why);
  return invalid;
}

}  // namespace gvirtus::services
