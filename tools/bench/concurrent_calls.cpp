#include "concurrent_calls.h"

#include <atomic>
#include <chrono>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>

#include "backend_child.h"
#include "common/error.h"
#include "frontend/client.h"
#include "protocol/core_calls.h"

namespace gvirtus::bench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr uint64_t kWarmupCalls = 50;

// One synchronous Ping; a reply that is not the payload is an error, not a figure.
void checked_ping(Client& client, std::span<const std::byte> payload) {
  const ByteView piece(payload.data(), payload.size());
  bool same = false;
  client.call(core::call_id(core::Fn::kPing), std::span(&piece, 1), [&](WireReader& in) {
    const auto echo = in.get_raw(in.remaining());
    same = echo.size() == payload.size() &&
           (payload.empty() || std::memcmp(echo.data(), payload.data(), payload.size()) == 0);
  });
  if (!same) raise(ErrorKind::kFailed, "a Ping came back with other bytes than it sent");
}

}  // namespace

ConcurrentCalls measure_concurrent_calls(const BenchTransport& transport, uint64_t clients,
                                         uint64_t calls_per_client, size_t payload_bytes) {
  BackendChild backend(transport, "[]");
  const Config config = backend.client_config();
  std::vector<std::vector<double>> samples(clients);
  std::atomic<uint64_t> ready{0};
  std::atomic<bool> go{false};
  std::mutex error_mutex;
  std::exception_ptr first_error;

  std::vector<std::thread> threads;
  threads.reserve(clients);
  for (uint64_t c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      bool counted = false;
      try {
        std::vector<std::byte> payload(payload_bytes);
        for (size_t i = 0; i < payload_bytes; ++i) payload[i] = std::byte(c + i);
        Client client(config, {});
        client.connect();
        for (uint64_t i = 0; i < kWarmupCalls; ++i) checked_ping(client, payload);
        samples[c].reserve(calls_per_client);
        ++ready;
        counted = true;
        while (!go.load()) std::this_thread::yield();
        for (uint64_t i = 0; i < calls_per_client; ++i) {
          const auto start = Clock::now();
          checked_ping(client, payload);
          samples[c].push_back(
              std::chrono::duration<double, std::micro>(Clock::now() - start).count());
        }
      } catch (...) {
        std::lock_guard lock(error_mutex);
        if (!first_error) first_error = std::current_exception();
      }
      if (!counted) ++ready;  // never leave the others waiting for this one
    });
  }
  while (ready.load() < clients) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const auto start = Clock::now();
  go = true;
  for (std::thread& t : threads) t.join();
  ConcurrentCalls result;
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (first_error) std::rethrow_exception(first_error);
  for (const std::vector<double>& s : samples) {
    result.call_us.insert(result.call_us.end(), s.begin(), s.end());
  }
  result.calls_per_s = double(result.call_us.size()) / result.seconds;
  return result;
}

}  // namespace gvirtus::bench
