// The Communicator contract: how frames travel between the stub and the backend.
//
// A communicator moves opaque messages; it knows nothing of frames, calls or CUDA. Channels are
// message-oriented, reliable, ordered and bidirectional. The call sequence is the same for every
// transport (after NCCL's net plugin API):
//
//   server: Communicator::serve() -> Listener; Listener::accept() -> Connection (one per client)
//   client: Communicator::connect(timeout) -> Connection
//   both:   Connection::register_memory / unregister_memory (no-ops on streams),
//           send(pieces...), recv() or recv_placed(), close via dtor
//
// Nobody may branch on which transport it holds: everything a caller needs is in these interfaces.
// Errors are gvirtus::Error exceptions: kDisconnected when the peer is gone (also mid-message),
// kTimedOut when a bounded wait runs out, kInvalidInput when the peer sends a message over the size
// limit, kFailed for local failures.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "common/function_ref.h"

namespace gvirtus {

using ByteView = std::span<const std::byte>;

// A view of bytes as a ByteView, for building send() pieces from any trivially copyable object.
template <typename T>
ByteView bytes_of(const T& value) {
  return ByteView(reinterpret_cast<const std::byte*>(&value), sizeof(T));
}

// Where Connection::recv_placed() writes the end of a message instead of the transport's buffer.
struct Placement {
  size_t at = 0;              // the message's bytes from `at` to its end...
  std::span<std::byte> into;  // ...are written here; empty: nothing is placed
  // Whether this placement can be honoured for a message of `message_bytes`, asked once its
  // first `head_bytes` arrived: it must start at or after them and cover exactly the rest.
  bool fits(size_t head_bytes, size_t message_bytes) const {
    return !into.empty() && at >= head_bytes && at <= message_bytes &&
           into.size() == message_bytes - at;
  }
};

// Chooses the placement of a message from its first bytes (`head`: as many as were asked for, or
// the whole message when it is shorter) and its size. Runs on the receiving thread before the
// rest of the message is read; must not call into the connection.
using Placer = FunctionRef<Placement(ByteView head, size_t message_bytes)>;

class Connection {
 public:
  virtual ~Connection() = default;

  // Sends the pieces, in order, as one message. Blocks until every byte has been handed to the
  // transport; the pieces may be reused on return. Not thread-safe against other send() calls
  // (callers serialize sends); safe to run concurrently with recv() on another thread.
  virtual void send(std::span<const ByteView> pieces) = 0;

  // Sends several messages, in order, exactly as one send() each would; a transport may hand
  // them over at once (one system call). Same thread-safety as send().
  virtual void send_many(std::span<const std::span<const ByteView>> messages) {
    for (const auto& pieces : messages) send(pieces);
  }

  // Blocks until the next whole message has arrived and returns a view of it in transport-owned
  // memory, valid until the next recv() or until the connection is destroyed. Not thread-safe
  // against other recv() calls.
  virtual ByteView recv() = 0;

  // Like recv(), but gives up after `timeout` with kTimedOut. A partly received message stays
  // buffered and the next recv() continues it.
  virtual ByteView recv(std::chrono::milliseconds timeout) = 0;

  // recv() for a message whose end may go straight where its user wants it (a device-to-host
  // copy's bytes into the application's buffer, with no transport buffer in between). Once the
  // first `head_bytes` of the message have arrived, `place` is asked (see Placer); when it names
  // a span for exactly the message's bytes from an offset at or after head_bytes to its end,
  // those bytes are written there as they arrive and the returned view holds only the bytes
  // before that offset. Otherwise this is recv() (with `timeout` when given). A failure or
  // timeout after bytes were placed shuts the connection down: the placed message cannot be
  // resumed. The default receives as recv() does and copies the end out; transports that can
  // land bytes directly override it.
  virtual ByteView recv_placed(size_t head_bytes, Placer place,
                               std::optional<std::chrono::milliseconds> timeout) {
    const ByteView message = timeout ? recv(*timeout) : recv();
    const size_t head = std::min(head_bytes, message.size());
    const Placement p = place(message.first(head), message.size());
    if (!p.fits(head_bytes, message.size())) return message;
    std::memcpy(p.into.data(), message.data() + p.at, p.into.size());
    return message.first(p.at);
  }

  // Sets the bound on the messages recv() accepts from now on (the connection starts with the
  // one it was made with). Each message's length is checked against it before any of its body is
  // buffered; a longer one fails recv() with kInvalidInput naming the bound. Call it from the
  // receiving thread, between messages: the backend keeps the bound small until its peer has
  // completed the handshake, so an unauthenticated peer cannot make it buffer a large message.
  virtual void set_max_message(size_t bytes) = 0;

  // Tells a zero-copy transport that [addr, addr+bytes) will be sent from or received into
  // repeatedly, and stays mapped until unregister_memory() names the same range. Stream
  // transports ignore it. Never required for correctness. Thread-safe.
  virtual void register_memory(const void* addr, size_t bytes) {
    (void)addr;
    (void)bytes;
  }

  // Takes back one register_memory() of the same range, before its memory is unmapped: a
  // transport that pinned the pages would otherwise keep sending the old ones should new memory
  // be mapped at that address. Only for memory no send() is reading any more. Thread-safe.
  virtual void unregister_memory(const void* addr, size_t bytes) {
    (void)addr;
    (void)bytes;
  }

  // Memory that the peer maps too (the same bytes, perhaps at another address), or an empty span
  // when the transport shares none. Both ends see the same span size; they agree on positions in
  // it by offset. What lives there and who may write it when is the callers' protocol.
  virtual std::span<std::byte> shared_memory() { return {}; }

  // Wakes every thread blocked in send()/recv() on this connection, which then fail with
  // kDisconnected; later calls fail the same way. Thread-safe, idempotent. The peer sees the
  // connection end.
  virtual void shutdown() = 0;

  // A human-readable name of the peer, for logs ("tcp://127.0.0.1:40112").
  virtual std::string peer_name() const = 0;

  // The transport name ("tcp"), for logs and statistics only, never for branching.
  virtual std::string transport() const = 0;
};

class Listener {
 public:
  virtual ~Listener() = default;

  // Blocks until a client connects and returns its connection. Throws kFailed on a local error.
  virtual std::unique_ptr<Connection> accept() = 0;

  // A file descriptor that polls readable when accept() would not block, so that a daemon can
  // wait on many listeners (and signals) at once. Owned by the listener.
  virtual int wait_fd() const = 0;

  // Where this listener listens, with the real port when 0 was asked for ("tcp://127.0.0.1:9999").
  virtual std::string local_name() const = 0;

  // Says that every connection accepted from now on will be used by a forked child (the
  // backend's worker), not by the process that accepted it. Transports whose kernel objects
  // cannot serve another process (rdma) then finish the setup in that child, on first use;
  // others ignore it. Called once, before the first accept().
  virtual void hand_off_to_workers() {}
};

// One configured endpoint of one transport: it can listen there or connect there.
class Communicator {
 public:
  virtual ~Communicator() = default;

  // Starts listening on the endpoint. Throws kFailed (with the address) if that is impossible.
  virtual std::unique_ptr<Listener> serve() = 0;

  // Connects to the endpoint, giving up after `timeout` with kTimedOut; a refused connection
  // fails at once with kDisconnected.
  virtual std::unique_ptr<Connection> connect(std::chrono::milliseconds timeout) = 0;

  // The endpoint in URL form, for logs ("tcp://127.0.0.1:9999").
  virtual std::string name() const = 0;
};

// Default bound on one received message; a larger one from a peer is rejected with kInvalidInput.
inline constexpr size_t kDefaultMaxMessageBytes = size_t{256} << 20;

}  // namespace gvirtus
