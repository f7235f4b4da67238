#include "channel_bench.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/wire.h"
#include "sample_median.h"

namespace gvirtus::bench {
namespace {

using Clock = std::chrono::steady_clock;

enum class Op : uint64_t { kPingPong = 1, kStream = 2, kQuit = 3 };

constexpr size_t kControlBytes = 3 * sizeof(uint64_t);
constexpr size_t kAckBytes = 2 * sizeof(uint64_t);
// The stream warm-up sends about this many bytes: enough to reach steady state, cheap at 1 B.
constexpr size_t kStreamWarmupBytes = size_t{4} << 20;
constexpr uint64_t kMaxStreamWarmupMessages = 20'000;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The payload pattern; the ends check first and last bytes against it so that no copy or read
// can be optimised away and a misdelivered message is caught.
std::byte pattern_byte(size_t i) {
  return static_cast<std::byte>((i * 131 + 7) & 0xff);
}

uint64_t edge_sum(ByteView message) {
  if (message.empty()) return 0;
  return std::to_integer<uint64_t>(message.front()) + std::to_integer<uint64_t>(message.back());
}

void send_control(MessageChannel& channel, Op op, uint64_t bytes, uint64_t count) {
  std::byte control[kControlBytes];
  store_le<uint64_t>(control, static_cast<uint64_t>(op));
  store_le<uint64_t>(control + 8, bytes);
  store_le<uint64_t>(control + 16, count);
  channel.send(ByteView(control, kControlBytes));
}

// The server end: obeys control messages until told to quit.
void serve_loop(MessageChannel& channel) {
  for (;;) {
    const ByteView control = channel.recv(kControlBytes);
    const auto op = static_cast<Op>(load_le<uint64_t>(control.data()));
    const uint64_t bytes = load_le<uint64_t>(control.data() + 8);
    const uint64_t count = load_le<uint64_t>(control.data() + 16);
    switch (op) {
      case Op::kQuit:
        return;
      case Op::kPingPong:
        // Echo the received view itself: a communicator sends from its own receive buffer.
        for (uint64_t i = 0; i < count; ++i) channel.send(channel.recv(bytes));
        break;
      case Op::kStream: {
        uint64_t sum = 0;
        for (uint64_t i = 0; i < count; ++i) sum += edge_sum(channel.recv(bytes));
        std::byte ack[kAckBytes];
        store_le<uint64_t>(ack, count);
        store_le<uint64_t>(ack + 8, sum);
        channel.send(ByteView(ack, kAckBytes));
        break;
      }
      default:
        raise(ErrorKind::kFailed,
              "bench server: unknown control op " + std::to_string(static_cast<uint64_t>(op)));
    }
  }
}

}  // namespace

class ChannelSession::Client {
 public:
  Client(MessageChannel& channel, const Policy& policy, size_t max_bytes)
      : channel_(channel), policy_(policy), payload_(max_bytes) {
    for (size_t i = 0; i < payload_.size(); ++i) payload_[i] = pattern_byte(i);
    channel_.prepare(payload_.data(), payload_.size());
  }

  void begin(size_t bytes) {
    bytes_ = bytes;
    point_ = Point{};
    point_.bytes = bytes;
    slices_done_ = 0;
    samples_.clear();
    mbps_.clear();
    size_pingpong();
    size_stream();
    samples_.reserve(point_.round_trips);
  }

  void run_slice() {
    // Slice k runs its share of the round trips, so that the shares add up to the total exactly.
    const uint64_t total = point_.round_trips;
    const uint64_t slices = slice_count();
    const uint64_t share = total * (slices_done_ + 1) / slices - total * slices_done_ / slices;
    round_trips(share);
    const double seconds = stream_batch(point_.stream_messages);
    point_.stream_seconds += seconds;
    mbps_.push_back(static_cast<double>(point_.stream_messages) * static_cast<double>(bytes_) /
                    seconds / 1e6);
    ++slices_done_;
  }

  Point end() {
    if (samples_.empty() || mbps_.empty()) {
      raise(ErrorKind::kFailed, "bench: end() called before the slices of a size ran");
    }
    point_.rtt_min_us = *std::min_element(samples_.begin(), samples_.end()) * 1e6;
    point_.rtt_us = median(samples_) * 1e6;
    point_.mbps = median(mbps_);
    point_.mbps_max = *std::max_element(mbps_.begin(), mbps_.end());
    return point_;
  }

  uint64_t slice_count() const { return std::max<uint64_t>(policy_.slices, 1); }

  void quit() { send_control(channel_, Op::kQuit, 0, 0); }

 private:
  // Runs `count` timed round trips of the current size, appending each duration (seconds) to
  // samples_.
  void round_trips(uint64_t count) {
    const ByteView message(payload_.data(), bytes_);
    send_control(channel_, Op::kPingPong, bytes_, count);
    for (uint64_t i = 0; i < count; ++i) {
      const auto start = Clock::now();
      channel_.send(message);
      const ByteView echo = channel_.recv(bytes_);
      samples_.push_back(seconds_since(start));
      if (echo.front() != message.front() || echo.back() != message.back()) {
        raise(ErrorKind::kFailed, "ping-pong of " + std::to_string(bytes_) +
                                      " bytes: the echo differs from the message sent");
      }
    }
  }

  // Warms up and sets point_.round_trips, the total over all slices.
  void size_pingpong() {
    round_trips(std::max<uint64_t>(policy_.warmup_round_trips, 1));
    uint64_t count = policy_.fixed_count;
    if (count == 0) {
      const double each = *std::min_element(samples_.begin(), samples_.end());
      count = clamp_count(policy_.pingpong_seconds / each, policy_.min_round_trips,
                          policy_.max_round_trips);
    }
    samples_.clear();
    point_.round_trips = count;
  }

  // Streams `count` messages of the current size and returns the seconds until the server's ack.
  double stream_batch(uint64_t count) {
    const ByteView message(payload_.data(), bytes_);
    const auto start = Clock::now();
    send_control(channel_, Op::kStream, bytes_, count);
    for (uint64_t i = 0; i < count; ++i) channel_.send(message);
    const ByteView ack = channel_.recv(kAckBytes);
    const double elapsed = seconds_since(start);
    if (load_le<uint64_t>(ack.data()) != count ||
        load_le<uint64_t>(ack.data() + 8) != count * edge_sum(message)) {
      raise(ErrorKind::kFailed, "stream of " + std::to_string(count) + " x " +
                                    std::to_string(bytes_) +
                                    " bytes: the server's ack does not match what was sent");
    }
    return elapsed;
  }

  // Warms up and sets point_.stream_messages, the messages of each slice's batch.
  void size_stream() {
    uint64_t count = policy_.fixed_count;
    if (count == 0) {
      const uint64_t warmup =
          std::clamp<uint64_t>(kStreamWarmupBytes / bytes_, 1, kMaxStreamWarmupMessages);
      const double each = stream_batch(warmup) / static_cast<double>(warmup);
      count = clamp_count(policy_.stream_seconds / static_cast<double>(slice_count()) / each,
                          policy_.min_stream_messages, policy_.max_stream_messages);
    }
    point_.stream_messages = count;
  }

  static uint64_t clamp_count(double wanted, uint64_t low, uint64_t high) {
    if (!(wanted < static_cast<double>(high))) return high;  // also catches inf and NaN
    return std::clamp(static_cast<uint64_t>(std::ceil(wanted)), low, high);
  }

  MessageChannel& channel_;
  const Policy policy_;
  std::vector<std::byte> payload_;
  // The size being measured, between begin() and end().
  size_t bytes_ = 0;
  Point point_;
  uint64_t slices_done_ = 0;
  std::vector<double> samples_;  // round-trip times, seconds
  std::vector<double> mbps_;     // one per stream batch
};

ChannelSession::ChannelSession(ChannelPair channels, const Policy& policy, size_t largest)
    : channels_(std::move(channels)),
      client_(std::make_unique<Client>(*channels_.client, policy, largest)),
      server_thread_([this] { serve(); }) {}

ChannelSession::~ChannelSession() {
  if (!server_thread_.joinable()) return;
  channels_.client->shutdown();
  server_thread_.join();
}

void ChannelSession::serve() {
  try {
    serve_loop(*channels_.server);
  } catch (...) {
    server_error_ = std::current_exception();
    // Only a server that fails on its own is the cause; after the client's shutdown it is not.
    if (!client_failed_.load()) server_failed_first_ = true;
    channels_.server->shutdown();
  }
}

void ChannelSession::begin(size_t bytes) {
  try {
    client_->begin(bytes);
  } catch (...) {
    fail(std::current_exception());
  }
}

void ChannelSession::run_slice() {
  try {
    client_->run_slice();
  } catch (...) {
    fail(std::current_exception());
  }
}

Point ChannelSession::end() {
  return client_->end();
}

Point ChannelSession::measure(size_t bytes) {
  begin(bytes);
  for (uint64_t i = 0; i < client_->slice_count(); ++i) run_slice();
  return end();
}

void ChannelSession::finish() {
  try {
    client_->quit();
  } catch (...) {
    fail(std::current_exception());
  }
  server_thread_.join();
  if (server_error_) std::rethrow_exception(server_error_);
}

void ChannelSession::fail(std::exception_ptr client_error) {
  client_failed_ = true;
  channels_.client->shutdown();
  if (server_thread_.joinable()) server_thread_.join();
  if (server_failed_first_.load()) std::rethrow_exception(server_error_);
  std::rethrow_exception(client_error);
}

}  // namespace gvirtus::bench
