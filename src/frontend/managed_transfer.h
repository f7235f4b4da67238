// A managed memory mirror's transfer over a stub's own copy call (frontend/managed_memory.h), for
// the stubs that mirror managed memory (libcuda.so.1's and libcudart.so.13's managed_memory.cpp):
// one synchronous request that the stub's `encode` writes - a copy by device address of `bytes`,
// followed by the bytes themselves when flushing - whose reply is an i32 status (`success` when
// the copy was made) and, when fetching, a blob of exactly `bytes` that lands in `host`.
//
// The request goes from a buffer of its own, never a stub's thread-local encoder: the fault that
// asks for a fetch may come while the faulting thread is in the middle of filling one. Returns
// GVIRTUS_OK, or the error kind that stopped it (the copy refused: kFailed).
#pragma once

#include <cstdint>
#include <cstring>

#include "common/error.h"
#include "common/wire.h"
#include "frontend/process_session.h"

namespace gvirtus::process_session {

template <typename Encode>
int managed_transfer(uint32_t call_id, Encode encode, int32_t success, void* host, uint64_t bytes,
                     bool fetch) noexcept {
  try {
    WireWriter request;
    encode(request);
    const ByteView pieces[2] = {
        request.view(), fetch ? ByteView{} : ByteView(static_cast<std::byte*>(host), bytes)};
    int32_t status = success + 1;  // anything but success until the reply says
    call(call_id, request_pieces(pieces), [&](WireReader& r) {
      status = r.get<int32_t>();
      if (!fetch || r.remaining() == 0) return;
      const auto data = r.get_blob(bytes);
      if (data.size() != bytes) raise(ErrorKind::kInvalidInput, "a short managed memory fetch");
      std::memcpy(host, data.data(), bytes);
    });
    return status == success ? GVIRTUS_OK : static_cast<int>(ErrorKind::kFailed);
  } catch (const Error& e) {
    return static_cast<int>(e.kind());
  } catch (...) {
    return static_cast<int>(ErrorKind::kFailed);
  }
}

}  // namespace gvirtus::process_session
