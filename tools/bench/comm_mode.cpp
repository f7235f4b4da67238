#include "comm_mode.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "baselines.h"
#include "bench_args.h"
#include "comm_bench.h"
#include "comm_report.h"
#include "communicators/factory.h"

namespace gvirtus::bench {
namespace {

constexpr uint64_t kDefaultMaxBytes = uint64_t{64} << 20;
// --quick stops here unless --max-bytes says otherwise: the large-message path (a message bigger
// than a stream connection's initial buffer) is still exercised, in a few seconds in all.
constexpr uint64_t kQuickMaxBytes = uint64_t{4} << 20;
constexpr uint64_t kLimitMaxBytes = uint64_t{1} << 30;
constexpr size_t kMemcpyBytes = size_t{64} << 20;
constexpr size_t kQuickMemcpyBytes = size_t{16} << 20;

struct CommOptions {
  std::string transport = "tcp";
  std::string json_path;  // empty: table only
  bool quick = false;
  uint64_t max_bytes = 0;   // 0: the default for the mode
  uint64_t iterations = 0;  // 0: time-bounded counts
};

// Powers of two plus sizes that real traffic has: odd tiny ones, an Ethernet MTU's worth, and a
// few decimal and non-power-of-two sizes where protocol or buffer thresholds tend to show.
std::vector<size_t> message_sizes(uint64_t max_bytes) {
  std::vector<size_t> sizes = {3, 48, 1000, 1500, 3000, 48 << 10, 96 << 10, 1'000'000, 3 << 20};
  for (uint64_t bytes = 1; bytes <= max_bytes; bytes *= 2) sizes.push_back(bytes);
  std::erase_if(sizes, [&](size_t bytes) { return bytes > max_bytes; });
  sizes.push_back(max_bytes);  // always measure the largest size asked for
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

Policy make_policy(const CommOptions& options) {
  Policy policy;
  if (options.quick) {
    policy.pingpong_seconds = 0.005;
    policy.stream_seconds = 0.005;
    policy.warmup_round_trips = 1;
    policy.min_round_trips = 3;
    policy.min_stream_messages = 2;
  }
  policy.fixed_count = options.iterations;
  return policy;
}

std::string join(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

CommOptions parse_options(std::span<char* const> args) {
  CommOptions options;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string_view arg = args[i];
    auto next = [&]() -> std::string_view {
      if (i + 1 >= args.size()) throw UsageError(std::string(arg) + " needs a value");
      return args[++i];
    };
    if (arg == "--transport")
      options.transport = next();
    else if (arg == "--json")
      options.json_path = next();
    else if (arg == "--quick")
      options.quick = true;
    else if (arg == "--max-bytes")
      options.max_bytes = parse_bytes(arg, next(), 1, kLimitMaxBytes);
    else if (arg == "--iterations")
      options.iterations = parse_count(arg, next(), 1, 100'000'000);
    else
      throw UsageError("comm: unknown argument \"" + std::string(arg) + "\"");
  }
  if (options.max_bytes == 0) options.max_bytes = options.quick ? kQuickMaxBytes : kDefaultMaxBytes;
  // Caught now rather than after a minute of measuring.
  const std::filesystem::path parent = std::filesystem::path(options.json_path).parent_path();
  if (!options.json_path.empty() && !parent.empty() && !std::filesystem::is_directory(parent)) {
    throw UsageError("--json: the directory " + parent.string() + " does not exist");
  }
  return options;
}

const BenchTransport& choose_transport(const std::string& name) {
  if (const BenchTransport* transport = find_bench_transport(name)) return *transport;
  const std::vector<std::string> known = transport_names();
  if (std::find(known.begin(), known.end(), name) != known.end()) {
    throw UsageError("comm: gvirtus-bench cannot set up both ends of the " + name +
                     " transport yet (it can measure: " + join(bench_transport_names()) + ")");
  }
  throw UsageError("comm: unknown transport \"" + name +
                   "\" (it can measure: " + join(bench_transport_names()) + ")");
}

// Progress for long runs goes to stderr, so stdout stays the table alone.
void stage(const std::string& what) {
  std::cerr << "gvirtus-bench comm: " << what << "...\n";
}

}  // namespace

void print_comm_help() {
  std::cout
      << "usage: gvirtus-bench comm [--transport NAME] [--json FILE] [--quick]\n"
         "                          [--max-bytes N] [--iterations N]\n"
         "Measures a gvirtus transport (both ends in this process, no backend needed) and, in the\n"
         "same run, raw TCP loopback sockets, a Unix socket pair and memcpy, for message sizes\n"
         "from 1 B to 64 MiB: median ping-pong round trip and one-way streaming bandwidth.\n"
         "Prints a table with the transport's ratios to raw TCP.\n\n"
         "  --transport NAME  transport to measure (default tcp; can measure: "
      << join(bench_transport_names())
      << ")\n"
         "  --json FILE       also write the results as JSON to FILE\n"
         "  --quick           a smoke test of a few seconds: short measurements, sizes up to\n"
         "                    4 MiB unless --max-bytes is given\n"
         "  --max-bytes N     largest message size (suffixes K, M, G; default 64M)\n"
         "  --iterations N    per size exactly N round trips and 3 batches of N streamed\n"
         "                    messages, instead of about 0.2 s and 0.15 s of them\n"
         "Exit status: 0 on success, 1 when the transport fails, 2 on bad usage.\n";
}

int run_comm_mode(std::span<char* const> args) {
  if (std::any_of(args.begin(), args.end(),
                  [](const char* arg) { return std::string_view(arg) == "--help"; })) {
    print_comm_help();
    return 0;
  }
  const CommOptions options = parse_options(args);
  const BenchTransport& transport = choose_transport(options.transport);
  const std::vector<size_t> sizes = message_sizes(options.max_bytes);
  const Policy policy = make_policy(options);
  const auto start = std::chrono::steady_clock::now();

  CommResults results;
  results.run = collect_run_info();
  results.transport = transport.name;
  results.quick = options.quick;
  const size_t largest = sizes.back();
  // All channels stay connected and take turns, slice by slice within each size, so that each
  // ratio in the table compares numbers taken within a fraction of a second on a drifting host.
  struct Series {
    std::vector<Point>* points;
    std::unique_ptr<ChannelSession> session;
  };
  std::vector<Series> series;
  series.push_back({&results.points, std::make_unique<ChannelSession>(
                                         connect_comm_pair(transport, largest), policy, largest)});
  series.push_back(
      {&results.raw_tcp, std::make_unique<ChannelSession>(raw_tcp_pair(), policy, largest)});
  series.push_back({&results.unix_socket,
                    std::make_unique<ChannelSession>(unix_socket_pair(), policy, largest)});
  stage("measuring " + transport.name + ", raw_tcp and unix_socket at " +
        std::to_string(sizes.size()) + " sizes up to " + format_bytes(largest));
  for (const size_t bytes : sizes) {
    for (Series& s : series) s.session->begin(bytes);
    for (uint64_t slice = 0; slice < policy.slices; ++slice) {
      for (Series& s : series) s.session->run_slice();
    }
    for (Series& s : series) s.points->push_back(s.session->end());
  }
  for (Series& s : series) s.session->finish();
  stage("measuring memcpy");
  results.memcpy_bytes = options.quick ? kQuickMemcpyBytes : kMemcpyBytes;
  results.memcpy_mbps = memcpy_mbps(results.memcpy_bytes, options.quick ? 3 : 10);
  results.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  print_comm_table(std::cout, results);
  if (!options.json_path.empty()) {
    write_file(options.json_path, comm_json(results));
    std::cout << "results written to " << options.json_path << "\n";
  }
  return 0;
}

}  // namespace gvirtus::bench
