// The process's gvirtus session as a stub library sees it: a thin C++ face of the frontend's C
// ABI (frontend_abi.h), so that stub code keeps throwing and catching gvirtus::Error while the
// session itself lives once per process, in libgvirtus-frontend.so.1.
//
// Nothing here holds state: every function goes through the C ABI. A reply decoder's exception
// is caught on this side of the ABI, carried across as a status, and thrown again here.
#pragma once

#include <cstddef>
#include <exception>
#include <optional>
#include <span>
#include <string>

#include "common/error.h"
#include "common/function_ref.h"
#include "common/wire.h"
#include "communicators/communicator.h"  // ByteView
#include "frontend/frontend_abi.h"
#include "protocol/handshake.h"

namespace gvirtus::process_session {

using ReplyDecoder = FunctionRef<void(WireReader&)>;

namespace detail {

struct DecodeContext {
  ReplyDecoder decode;
  std::exception_ptr thrown;  // what the decoder threw, thrown again after the call returns
};

inline int decode_trampoline(void* context, const void* payload, size_t size) {
  auto* c = static_cast<DecodeContext*>(context);
  try {
    WireReader in(std::span(static_cast<const std::byte*>(payload), size), "reply");
    c->decode(in);
    return GVIRTUS_OK;
  } catch (const Error& e) {
    c->thrown = std::current_exception();
    gvirtus_error_message_set(e.what());
    return static_cast<int>(e.kind());
  } catch (...) {
    c->thrown = std::current_exception();
    return static_cast<int>(ErrorKind::kFailed);
  }
}

// Throws what a C ABI status stands for: the decoder's own exception, or an Error.
inline void check(int status, const DecodeContext* context = nullptr) {
  if (status == GVIRTUS_OK) return;
  if (context != nullptr && context->thrown) std::rethrow_exception(context->thrown);
  const ErrorKind kind = is_valid_error_kind(static_cast<uint32_t>(status))
                             ? static_cast<ErrorKind>(status)
                             : ErrorKind::kFailed;
  raise(kind, gvirtus_error_message());
}

template <size_t N>
size_t to_pieces(std::span<const ByteView> payload, gvirtus_piece (&pieces)[N]) {
  if (payload.size() > N) raise(ErrorKind::kInvalidInput, "too many payload pieces");
  for (size_t i = 0; i < payload.size(); ++i) pieces[i] = {payload[i].data(), payload[i].size()};
  return payload.size();
}

}  // namespace detail

// A synchronous call begun and not yet finished (begin_call / finish_call).
using PendingCall = gvirtus_pending;

// Sends a synchronous call and waits for its reply; throws like gvirtus::Client::call().
inline void call(uint32_t call_id, std::span<const ByteView> payload, ReplyDecoder decode) {
  gvirtus_piece pieces[15]{};  // only `count` are read; initialised for the compiler's sake
  const size_t count = detail::to_pieces(payload, pieces);
  detail::DecodeContext context{decode, nullptr};
  detail::check(gvirtus_call(call_id, pieces, count, detail::decode_trampoline, &context),
                &context);
}

// Where the end of a reply may land directly (gvirtus_landing in frontend_abi.h).
using Landing = gvirtus_landing;

// A request's pieces: the encoded arguments, then its data when there is any - a copy's bytes,
// sent from the application's buffer as they lie, with no copy into the request.
inline std::span<const ByteView> request_pieces(const ByteView (&pieces)[2]) {
  return {pieces, pieces[1].empty() ? size_t{1} : size_t{2}};
}

inline PendingCall begin_call(uint32_t call_id, std::span<const ByteView> payload,
                              Landing* landing = nullptr) {
  gvirtus_piece pieces[15]{};  // only `count` are read; initialised for the compiler's sake
  const size_t count = detail::to_pieces(payload, pieces);
  PendingCall pending{};
  detail::check(gvirtus_begin_call_into(call_id, pieces, count, landing, &pending));
  return pending;
}

inline void finish_call(const PendingCall& pending, ReplyDecoder decode) {
  detail::DecodeContext context{decode, nullptr};
  detail::check(gvirtus_finish_call(&pending, detail::decode_trampoline, &context), &context);
}

inline void send_async(uint32_t call_id, std::span<const ByteView> payload) {
  gvirtus_piece pieces[15]{};  // only `count` are read; initialised for the compiler's sake
  const size_t count = detail::to_pieces(payload, pieces);
  detail::check(gvirtus_send_async(call_id, pieces, count));
}

// Memory the backend maps too (empty when the transport shares none); connects if needed.
inline std::span<std::byte> shared_memory() {
  void* base = nullptr;
  size_t size = 0;
  detail::check(gvirtus_shared_memory(&base, &size));
  return {static_cast<std::byte*>(base), size};
}

// A block of the shared memory for page-locked host memory (gvirtus_shared_take): its offset and
// size, or nullopt when the memory is full or shared with no backend.
struct SharedBlock {
  uint64_t offset;
  uint64_t bytes;
};
inline std::optional<SharedBlock> take_shared(uint64_t bytes) {
  uint64_t offset = 0, taken = 0;
  detail::check(gvirtus_shared_take(bytes, &offset, &taken));
  if (taken == 0) return std::nullopt;
  return SharedBlock{offset, taken};
}
inline void give_back_shared(uint64_t offset) {
  detail::check(gvirtus_shared_give_back(offset));
}

// The application's page-locked host memory, for transports that send from it without a copy
// (gvirtus_host_memory_register). Best effort: a failure only costs that path, so nothing throws.
inline void register_host_memory(const void* addr, size_t bytes) {
  (void)gvirtus_host_memory_register(addr, bytes);
}
inline void unregister_host_memory(const void* addr, size_t bytes) {
  (void)gvirtus_host_memory_unregister(addr, bytes);
}

// Managed memory mirrored in this process (gvirtus_managed_map, frontend/managed_memory.h).
// map throws Error with the reason when the region cannot be mirrored; invalidate and find never
// fail.
inline void managed_map(uint64_t address, uint64_t bytes, gvirtus_managed_move fetch,
                        gvirtus_managed_move flush, void* context) {
  detail::check(gvirtus_managed_map(address, bytes, fetch, flush, context));
}
// A managed variable of `owner` (gvirtus_managed_map_variable); throws Error with the reason when
// it cannot be mirrored.
inline void managed_map_variable(const void* owner, uint64_t address, uint64_t bytes,
                                 gvirtus_managed_move fetch, gvirtus_managed_move flush,
                                 void* context) {
  detail::check(gvirtus_managed_map_variable(owner, address, bytes, fetch, flush, context));
}
inline void managed_unmap_owner(const void* owner, gvirtus_managed_move fetch) {
  gvirtus_managed_unmap_owner(owner, fetch);
}
inline void managed_unmap(uint64_t address) {
  (void)gvirtus_managed_unmap(address);
}
inline void managed_invalidate() {
  gvirtus_managed_invalidate(0, 0);
}
// Only [address, address + bytes): nothing for an empty range.
inline void managed_invalidate_range(uint64_t address, uint64_t bytes) {
  if (bytes != 0) gvirtus_managed_invalidate(address, bytes);
}
// Changes to the session's devices the process's stubs tell each other of (frontend_abi.h).
inline uint64_t device_generation() {
  return gvirtus_device_generation();
}
inline void device_generation_bump() {
  gvirtus_device_generation_bump();
}
inline bool managed_find(uint64_t address, uint64_t* base = nullptr, uint64_t* bytes = nullptr) {
  return gvirtus_managed_find(address, base, bytes) != 0;
}
// Whether [address, address + bytes) lies within one managed allocation (never for 0 bytes): the
// drivers refuse a prefetch of anything else at once (CUDA_ERROR_INVALID_VALUE, seen on a GPU).
inline bool managed_covers(uint64_t address, uint64_t bytes) {
  uint64_t base = 0, size = 0;
  return bytes != 0 && managed_find(address, &base, &size) && bytes <= base + size - address;
}

// The process's pool (gvirtus_pool_size): how many backends, which one the calling thread's calls
// go to, and routing it to another (throws Error{kInvalidInput} for a backend the pool lacks).
inline uint32_t pool_size() {
  return gvirtus_pool_size();
}
inline std::string pool_device_selection() {
  return gvirtus_pool_device_selection();
}
inline uint32_t route() {
  return gvirtus_route_get();
}
inline void set_route(uint32_t backend) {
  detail::check(gvirtus_route_set(backend));
}

// Identifies the current session (a forked child's differs); never connects.
inline const void* token() {
  return gvirtus_session_token();
}

// Opens a stub's plugin in the process's session (see gvirtus_open_plugin). Throws the refusal.
inline void open_plugin(const PluginIdentity& identity) {
  const std::string name(identity.name);
  const gvirtus_plugin plugin{sizeof(gvirtus_plugin), identity.id, name.c_str(),
                              identity.table_hash, identity.version};
  detail::check(gvirtus_open_plugin(&plugin));
}

// Whether the frontend library this stub was loaded with speaks the ABI it was built for.
inline bool abi_compatible() {
  return gvirtus_frontend_abi_version() == GVIRTUS_FRONTEND_ABI_VERSION;
}

}  // namespace gvirtus::process_session
