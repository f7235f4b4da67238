#include "calls_mode.h"

#include <dlfcn.h>

#include <cstdio>
#include <filesystem>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <string>
#include <vector>

#include "backend_child.h"
#include "bench_args.h"
#include "calls_report.h"
#include "channel_bench.h"
#include "comm_bench.h"
#include "common/error.h"
#include "common/paths.h"
#include "concurrent_calls.h"
#include "driver_tools.h"
#include "frontend/client.h"
#include "json_out.h"
#include "mode_args.h"
#include "protocol/core_calls.h"

namespace gvirtus::bench {
namespace {

constexpr size_t kRttBytes = 64;  // the comm mode's small-message size, for comparison
constexpr uint64_t kWarmupCalls = 200;
// The backend's default session limit (limits.max_sessions): one session per client.
constexpr uint64_t kMaxClients = 64;

struct CallsOptions {
  std::string transport = "tcp";
  std::string json_path;
  bool quick = false;
  uint64_t rounds = 3;
  uint64_t sync_calls = 20'000;    // timed, per round
  uint64_t async_calls = 200'000;  // per round
  uint64_t payload_bytes = 8;
  uint64_t clients = 0;               // 0: no concurrent measurement
  uint64_t calls_per_client = 2'000;  // timed, per client and round
};

CallsOptions parse_options(std::span<char* const> args) {
  CallsOptions o;
  bool rounds_given = false, sync_given = false, async_given = false, client_calls_given = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string_view arg = args[i];
    auto next = [&]() -> std::string_view {
      if (i + 1 >= args.size()) throw UsageError(std::string(arg) + " needs a value");
      return args[++i];
    };
    if (arg == "--transport") {
      o.transport = next();
    } else if (arg == "--json") {
      o.json_path = next();
    } else if (arg == "--quick") {
      o.quick = true;
    } else if (arg == "--rounds") {
      o.rounds = parse_count(arg, next(), 1, 100);
      rounds_given = true;
    } else if (arg == "--sync-calls") {
      o.sync_calls = parse_count(arg, next(), 1, 100'000'000);
      sync_given = true;
    } else if (arg == "--async-calls") {
      o.async_calls = parse_count(arg, next(), 1, 1'000'000'000);
      async_given = true;
    } else if (arg == "--payload") {
      o.payload_bytes = parse_bytes(arg, next(), 0, 1 << 20);
    } else if (arg == "--clients") {
      o.clients = parse_count(arg, next(), 1, kMaxClients);
    } else if (arg == "--client-calls") {
      o.calls_per_client = parse_count(arg, next(), 1, 10'000'000);
      client_calls_given = true;
    } else {
      throw UsageError("calls: unknown argument \"" + std::string(arg) + "\"");
    }
  }
  if (o.quick) {  // a smoke test: every path once, in well under a second of measuring
    if (!rounds_given) o.rounds = 1;
    if (!sync_given) o.sync_calls = 500;
    if (!async_given) o.async_calls = 5'000;
    if (!client_calls_given) o.calls_per_client = 200;
  }
  check_output_path("--json", o.json_path);
  return o;
}

void print_help() {
  std::cout
      << "usage: gvirtus-bench calls [--transport NAME] [--json FILE] [--quick]\n"
         "                           [--rounds N] [--sync-calls N] [--async-calls N]\n"
         "                           [--payload BYTES] [--clients N [--client-calls N]]\n"
         "Starts gvirtus-backend (beside this tool) on a free local address of the transport\n"
         "and measures through the real client: the synchronous null call (core Ping), the\n"
         "asynchronous call rate (core Sink, then one synchronous call to drain) and, in the\n"
         "same run, the raw 64-byte round trip of the same communicator; and driver mode:\n"
         "the asynchronous cuLaunchKernel rate, a synchronous query (cuStreamQuery) and a\n"
         "synchronisation (cuCtxSynchronize) through gvirtus's libcuda.so.1\n"
         "(gvirtus-bench-driver), on the GPU where the machine has NVIDIA's driver, else on\n"
         "the simulated device (said so: not GPU evidence); both again against a backend\n"
         "that keeps its workers' output (\"device_output\": \"backend\"): the cost of\n"
         "relaying the device's output.\n\n"
         "  --transport NAME  default tcp; can measure: "
      << bench_transport_list()
      << "\n"
         "  --json FILE       also write the results as JSON to FILE\n"
         "  --quick           smoke test: 1 round, 500 sync and 5000 async calls\n"
         "  --rounds N        rounds, each with a fresh backend (default 3)\n"
         "  --sync-calls N    timed synchronous calls per round (default 20000)\n"
         "  --async-calls N   asynchronous calls per round (default 200000)\n"
         "  --payload BYTES   payload of each Ping and Sink (default 8)\n"
         "  --clients N       also N clients at once (1 to 64), each with its own session,\n"
         "                    making synchronous Pings: their total rate over the transport\n"
         "                    and, in the same round, over tcp for comparison\n"
         "  --client-calls N  timed Pings per client and round (default 2000; --quick 200)\n"
         "Exit status: 0 on success, 1 when the stack fails, 2 on bad usage.\n";
}

using Clock = std::chrono::steady_clock;

double us_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

void ping(Client& client, std::span<const ByteView> payload) {
  client.call(core::call_id(core::Fn::kPing), payload,
              [](WireReader& in) { (void)in.get_raw(in.remaining()); });
}

// The raw round trip of the transport: the comm mode's measurement at one size.
void measure_transport(const BenchTransport& transport, bool quick, CallsRound& round) {
  Policy policy;
  if (quick) {
    policy.pingpong_seconds = 0.02;
    policy.stream_seconds = 0.005;
  }
  ChannelSession session(connect_comm_pair(transport, kRttBytes), policy, kRttBytes);
  const Point point = session.measure(kRttBytes);
  session.finish();
  round.transport_rtt_us = point.rtt_us;
  round.transport_rtt_min_us = point.rtt_min_us;
  round.transport_round_trips = point.round_trips;
}

void measure_calls(const BenchTransport& transport, const CallsOptions& o, CallsResults& results,
                   CallsRound& round) {
  BackendChild backend(transport, "[]");
  Client client(backend.client_config(), {});
  client.connect();
  const std::vector<std::byte> bytes(o.payload_bytes, std::byte{0x5a});
  const ByteView payload[] = {bytes};
  for (uint64_t i = 0; i < kWarmupCalls; ++i) ping(client, payload);

  std::vector<double> samples;
  samples.reserve(o.sync_calls);
  for (uint64_t i = 0; i < o.sync_calls; ++i) {
    const auto start = Clock::now();
    ping(client, payload);
    samples.push_back(us_between(start, Clock::now()));
  }
  results.sync_us.insert(results.sync_us.end(), samples.begin(), samples.end());
  std::nth_element(samples.begin(), samples.begin() + samples.size() / 2, samples.end());
  round.sync_median_us = samples[samples.size() / 2];

  // The drain: the backend serves a client thread's calls in order, so the Ping's reply means
  // every Sink before it has been received and run.
  const auto start = Clock::now();
  for (uint64_t i = 0; i < o.async_calls; ++i) {
    client.send_async(core::call_id(core::Fn::kSink), payload);
  }
  ping(client, payload);
  round.async_calls_per_s = double(o.async_calls) / (us_between(start, Clock::now()) / 1e6);
  if (auto error = client.take_async_error()) throw *error;
}

struct DriverRow {
  double launches_per_s = 0;
  double query_us = 0;
  double synchronize_us = 0;
};

// The driver-mode row: gvirtus-bench-driver through gvirtus's libcuda.so.1 against a backend of
// its own on `transport`; with `extra_json` in the backend's configuration.
DriverRow measure_driver(const BenchTransport& transport, const CallsOptions& o,
                         const DriverTools& t, const std::string& extra_json) {
  BackendChild backend(transport, t.plugins, {}, extra_json);
  const std::string command = "env GVIRTUS_CONFIG=" + backend.client_config_file() +
                              " LD_LIBRARY_PATH=" + t.stub_dir + " " + t.probe + " " +
                              std::to_string(o.quick ? 2'000 : o.async_calls / 2) + " " +
                              std::to_string(o.quick ? 200 : o.sync_calls / 2);
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) raise(ErrorKind::kFailed, "cannot run " + t.probe);
  char text[256] = {};
  const bool read = std::fgets(text, sizeof text, pipe) != nullptr;
  const int status = ::pclose(pipe);
  DriverRow row;
  if (!read || status != 0 ||
      std::sscanf(text, "launches_per_s=%lf query_median_us=%lf synchronize_median_us=%lf",
                  &row.launches_per_s, &row.query_us, &row.synchronize_us) != 3) {
    raise(ErrorKind::kFailed, "gvirtus-bench-driver failed (status " + std::to_string(status) +
                                  "): " + text + "\n" + backend.log());
  }
  return row;
}

// N clients at once over `transport`, then (unless it is tcp) the same over tcp.
void measure_concurrent(const BenchTransport& transport, const CallsOptions& o,
                        CallsResults& results, CallsRound& round) {
  ConcurrentCalls measured =
      measure_concurrent_calls(transport, o.clients, o.calls_per_client, o.payload_bytes);
  round.concurrent_calls_per_s = measured.calls_per_s;
  results.concurrent_us.insert(results.concurrent_us.end(), measured.call_us.begin(),
                               measured.call_us.end());
  if (transport.name == kConcurrentBaseline) {
    round.concurrent_baseline_calls_per_s = measured.calls_per_s;
    return;
  }
  round.concurrent_baseline_calls_per_s =
      measure_concurrent_calls(choose_bench_transport("calls", kConcurrentBaseline), o.clients,
                               o.calls_per_client, o.payload_bytes)
          .calls_per_s;
}

}  // namespace

int run_calls_mode(std::span<char* const> args) {
  if (wants_help(args)) {
    print_help();
    return 0;
  }
  const CallsOptions o = parse_options(args);
  const BenchTransport& transport = choose_bench_transport("calls", o.transport);
  const auto start = Clock::now();
  CallsResults results;
  results.run = collect_run_info();
  results.transport = transport.name;
  results.quick = o.quick;
  results.payload_bytes = o.payload_bytes;
  results.rtt_bytes = kRttBytes;
  results.async_calls = o.async_calls;
  results.clients = o.clients;
  results.calls_per_client = o.calls_per_client;
  results.sync_us.reserve(o.rounds * o.sync_calls);
  const DriverTools driver = find_driver_tools("gvirtus-bench-driver");
  if (driver.missing.empty()) {
    results.driver_device = driver.device;
  } else {
    results.driver_skipped = driver.missing;
  }
  for (uint64_t r = 0; r < o.rounds; ++r) {
    std::cerr << "gvirtus-bench calls: round " << r + 1 << " of " << o.rounds << " over "
              << transport.name << "...\n";
    CallsRound round;
    // One after the other, not side by side: both ends may want the same local address (the
    // bench transport's server endpoint), and only one of them may hold it at a time.
    measure_transport(transport, o.quick, round);
    measure_calls(transport, o, results, round);
    if (driver.missing.empty()) {
      const DriverRow relayed = measure_driver(transport, o, driver, "");
      round.driver_launches_per_s = relayed.launches_per_s;
      round.driver_query_us = relayed.query_us;
      round.driver_synchronize_us = relayed.synchronize_us;
      const DriverRow unrelayed =
          measure_driver(transport, o, driver, R"("device_output": "backend")");
      round.driver_query_unrelayed_us = unrelayed.query_us;
      round.driver_synchronize_unrelayed_us = unrelayed.synchronize_us;
    }
    if (o.clients > 0) measure_concurrent(transport, o, results, round);
    results.rounds.push_back(round);
  }
  results.seconds = us_between(start, Clock::now()) / 1e6;
  print_calls_summary(std::cout, results);
  if (!o.json_path.empty()) {
    write_file(o.json_path, calls_json(results));
    std::cout << "results written to " << o.json_path << "\n";
  }
  return 0;
}

}  // namespace gvirtus::bench
