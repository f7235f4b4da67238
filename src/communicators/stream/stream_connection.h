// A Connection over a connected stream socket (TCP, Unix, vsock): the stream transports share it.
//
// Message framing on the stream: an 8-byte little-endian length, then the message. send() gathers
// the length and the caller's pieces into one sendmsg() (no copy, MSG_NOSIGNAL so a dead peer is
// an error and never a SIGPIPE in the user's application). recv() reads into a buffer the
// connection owns, taking as much as the socket has, so a small message usually costs one read().
// recv_placed() reads the end of a message straight into the caller's span instead, with reads
// of exactly its length, so no byte of the next message lands there.
#pragma once

#include <sys/uio.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "common/unique_fd.h"
#include "communicators/communicator.h"

namespace gvirtus {

class StreamConnection final : public Connection {
 public:
  StreamConnection(UniqueFd fd, std::string transport, std::string peer_name,
                   size_t max_message_bytes = kDefaultMaxMessageBytes);

  void send(std::span<const ByteView> pieces) override;
  void send_many(std::span<const std::span<const ByteView>> messages) override;
  ByteView recv() override;
  ByteView recv(std::chrono::milliseconds timeout) override;
  // Reads the placed end of a message from the socket straight into its span.
  ByteView recv_placed(size_t head_bytes, Placer place,
                       std::optional<std::chrono::milliseconds> timeout) override;
  void set_max_message(size_t bytes) override { max_message_bytes_ = bytes; }
  void shutdown() override;
  std::string peer_name() const override { return peer_name_; }
  std::string transport() const override { return transport_; }

 private:
  using Deadline = std::optional<std::chrono::steady_clock::time_point>;

  // Drops the message returned last and reads the next one's length; returns it.
  uint64_t next_length(Deadline deadline);
  ByteView receive(Deadline deadline);
  // Reads exactly `n` bytes, which are not buffered yet, into `into` (the placed end of a
  // message of `message_bytes`).
  void read_into(std::byte* into, size_t n, size_t message_bytes, Deadline deadline);
  // Waits until the socket is readable or `deadline` passes (kTimedOut); true when readable.
  bool wait_readable(const Deadline& deadline);
  // Writes every byte of iov[0, count), looping over partial writes; modifies the array.
  void write_all(iovec* iov, size_t count);
  // Reads at least `want` more buffered bytes, waiting until `deadline` if there is one.
  void fill(size_t want, size_t message_bytes, Deadline deadline);
  // Makes room for a message of `total` bytes from the current position.
  void reserve_message(size_t total);
  // The peer went (end of file, or `how` says how) with `message_bytes` of a message due.
  [[noreturn]] void fail_closed(size_t message_bytes, const char* how = "") const;

  UniqueFd fd_;
  std::string transport_;
  std::string peer_name_;
  size_t max_message_bytes_;
  std::atomic<bool> shut_down_{false};

  std::unique_ptr<std::byte[]> buffer_;  // received bytes live in [begin_, end_)
  size_t capacity_ = 0;
  size_t begin_ = 0;
  size_t end_ = 0;
  size_t consumed_ = 0;        // bytes of the message returned last, dropped at the next recv()
  uint32_t small_streak_ = 0;  // messages in a row that fit the initial buffer
};

// "tcp://127.0.0.1:40112": the peer of a connected IP socket, for logs.
std::string describe_peer(int fd, const char* scheme);

}  // namespace gvirtus
