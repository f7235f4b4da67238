// The NetPIPE-style measurement that every gvirtus-bench comm channel goes through: gvirtus
// communicators and the raw-socket baselines alike, so their numbers are comparable.
//
// Before each measurement the client sends a fixed 24-byte control message (op, bytes, count):
//   ping-pong: `count` times, the client sends `bytes` and the server echoes the message it got;
//              each round trip is timed on its own and the median is reported.
//   stream:    the client sends `count` messages of `bytes` back to back; the server receives
//              them all and answers with one 16-byte ack (count, checksum of first+last bytes);
//              bandwidth is count*bytes over the time from the first send to the ack (one-way);
//              repeated in a few batches, the median batch is reported.
// Each size is measured in slices (see Policy::slices) so that several channels can take turns.
//   quit:      the server returns.
// Counts are time-bounded: a short warm-up run estimates the cost of one message and the measured
// runs are sized to take about Policy's seconds, within the minimum and maximum counts.
// The caller's thread is the client; a thread of the session is the server.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <thread>

#include "communicators/communicator.h"

namespace gvirtus::bench {

// One end of a reliable, ordered message channel, as the measurement sees it.
class MessageChannel {
 public:
  virtual ~MessageChannel() = default;

  // Sends `data` as one message; blocks until it is handed to the transport.
  virtual void send(ByteView data) = 0;

  // Blocks for the next message, which the peer sent with `expected` bytes (channels without
  // framing read exactly that many). The view stays valid until the next recv(). A message of
  // another size throws gvirtus::Error{kFailed}.
  virtual ByteView recv(size_t expected) = 0;

  // Makes blocked and later calls on both ends fail, so that when one end of the benchmark fails
  // the other does not wait forever. Thread-safe.
  virtual void shutdown() = 0;

  // Announces a buffer that will be sent from repeatedly (zero-copy transports register it).
  virtual void prepare(const void* addr, size_t bytes) {
    (void)addr;
    (void)bytes;
  }
};

// How long and how often to measure each message size.
struct Policy {
  double pingpong_seconds = 0.2;  // target duration of the timed round trips of one size
  double stream_seconds = 0.15;   // target duration of the streamed batches of one size
  uint64_t warmup_round_trips = 2;
  uint64_t min_round_trips = 5;
  uint64_t max_round_trips = 200'000;
  uint64_t min_stream_messages = 2;  // per batch
  uint64_t max_stream_messages = 1'000'000;
  // Each size is measured in this many slices, each a share of the round trips and one stream
  // batch; sessions of several channels run their slices in turn, so that a change in the host's
  // state (a virtual CPU going idle, a neighbour's load) hits every channel alike. The median
  // batch is reported as the bandwidth.
  uint64_t slices = 3;
  // When > 0 (--iterations): exactly this many round trips in all, and this many messages per
  // stream batch, with no warm-up-based sizing.
  uint64_t fixed_count = 0;
};

// The result for one message size.
struct Point {
  size_t bytes = 0;
  double rtt_us = 0;  // median round trip
  double rtt_min_us = 0;
  uint64_t round_trips = 0;
  double mbps = 0;  // median streaming bandwidth of the batches, one way, 1e6 bytes per second
  double mbps_max = 0;
  uint64_t stream_messages = 0;  // per batch
  double stream_seconds = 0;     // of all batches
};

// Both ends of one channel, owned together.
struct ChannelPair {
  std::unique_ptr<MessageChannel> client;
  std::unique_ptr<MessageChannel> server;
};

// A running measurement over one channel: the server end runs on a thread of its own from
// construction until finish() or destruction. Sessions of several channels can be alive at once,
// so that the caller measures every channel at one size before moving to the next and ratios
// compare numbers taken close together in time. Not thread-safe; use from one thread.
class ChannelSession {
 public:
  // `largest` bounds the sizes that measure() will be asked for. Sizes are at least 1 byte.
  ChannelSession(ChannelPair channels, const Policy& policy, size_t largest);
  ~ChannelSession();  // shuts both ends down and joins the server if finish() was not called
  ChannelSession(const ChannelSession&) = delete;
  ChannelSession& operator=(const ChannelSession&) = delete;

  // Measuring one size: begin() warms up and sizes the runs, run_slice() runs one of
  // Policy::slices slices, end() gives the result once all have run. Each call, on failure, shuts
  // both ends down and throws the first gvirtus::Error either end raised (the other end's is only
  // the consequence); the session is then unusable.
  void begin(size_t bytes);
  void run_slice();
  Point end();

  // begin(), every slice, end(): one size on its own.
  Point measure(size_t bytes);

  // Stops the server end and joins it; rethrows a server failure. Call at most once.
  void finish();

 private:
  class Client;

  void serve();
  [[noreturn]] void fail(std::exception_ptr client_error);

  ChannelPair channels_;
  std::unique_ptr<Client> client_;
  std::atomic<bool> server_failed_first_{false};
  std::atomic<bool> client_failed_{false};
  std::exception_ptr server_error_;
  std::thread server_thread_;
};

}  // namespace gvirtus::bench
