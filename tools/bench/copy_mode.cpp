#include "copy_mode.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "backend_child.h"
#include "baselines.h"
#include "bench_args.h"
#include "comm_bench.h"
#include "common/error.h"
#include "common/paths.h"
#include "copy_report.h"
#include "json_out.h"
#include "mode_args.h"
#include "program_run.h"
#include "sample_median.h"

namespace gvirtus::bench {
namespace {

constexpr uint64_t kMinBytes = uint64_t{4} << 10;
constexpr uint64_t kDefaultMaxBytes = uint64_t{1} << 30;
constexpr uint64_t kQuickMaxBytes = uint64_t{64} << 20;
constexpr uint64_t kLimitMaxBytes = uint64_t{4} << 30;
// memcpy's best of as many copies as make about 256 MiB (at least 5): small copies are timed
// often enough that one lucky run is not all there is.
int memcpy_repeats(uint64_t bytes) {
  return static_cast<int>(std::clamp<uint64_t>((uint64_t{256} << 20) / bytes, 5, 2000));
}

struct CopyOptions : WorkloadOptions {
  uint64_t max_bytes = 0;       // 0: the default for the mode
  std::string device = "keep";  // the accepting device's mode, without a GPU
  int rounds = 0;               // 0: the default for the mode
};

CopyOptions parse_options(std::span<char* const> args) {
  CopyOptions o;
  parse_workload_options("copy", args, o, [&](std::string_view arg, NextValue next) {
    if (arg == "--max-bytes") {
      o.max_bytes = parse_bytes(arg, next(), kMinBytes, kLimitMaxBytes);
    } else if (arg == "--accepting") {
      o.device = next();
      if (o.device != "keep" && o.device != "drop") {
        throw UsageError("copy: --accepting takes keep or drop, not " + o.device);
      }
    } else if (arg == "--rounds") {
      o.rounds = static_cast<int>(parse_count(arg, next(), 1, 20));
    } else {
      return false;
    }
    return true;
  });
  if (o.max_bytes == 0) o.max_bytes = o.quick ? kQuickMaxBytes : kDefaultMaxBytes;
  if (o.rounds == 0) o.rounds = o.quick ? 1 : 3;
  return o;
}

void print_help() {
  std::cout
      << "usage: gvirtus-bench copy [--transport NAME]... [--json FILE] [--quick]\n"
         "                          [--max-bytes N] [--accepting keep|drop] [--rounds N]\n"
         "Measures cudaMemcpy host to device and device to host, from pageable and pinned\n"
         "memory, for sizes from 4 KiB up to --max-bytes (gvirtus-copy-workload), through\n"
         "gvirtus-run against a gvirtus-backend it starts per transport, beside the same\n"
         "run's raw streaming bandwidth of that transport and single-core memcpy, and natively\n"
         "where there is a GPU. Without a GPU the backend runs with the accepting device\n"
         "preloaded (a test double that takes the bytes but no device behind it): the\n"
         "bytes travel as they would, and the output says it is not GPU evidence.\n\n"
         "  --transport NAME  a transport to measure (repeatable; default tcp and shm; can: "
      << bench_transport_list()
      << ")\n"
         "  --json FILE       also write every point and its ratios to FILE\n"
         "  --quick           up to 64 MiB, short batches\n"
         "  --max-bytes N     largest copy (suffixes K, M, G; default 1G)\n"
         "  --accepting MODE  without a GPU, what the accepting device does with the bytes:\n"
         "                    keep (default: stores them with a memcpy, as a GPU's copy costs\n"
         "                    something) or drop (takes them and does nothing: gvirtus's data\n"
         "                    path alone, as the GVirtuS comparison of issue 23 measured)\n"
         "  --rounds N        per transport, N rounds of the copies through gvirtus each followed\n"
         "                    by the raw streaming; each figure is the median of its N rounds, so\n"
         "                    the ratio compares runs made minutes apart at most (default 3;\n"
         "                    --quick: 1)\n"
         "Exit status: 0 on success, 1 when a run fails, 2 on bad usage.\n";
}

// A file the build puts beside the bench, or the install puts at `installed` (relative to the
// install prefix, the bench being in its bin/).
std::string beside_bench(const std::string& name, const std::filesystem::path& installed) {
  const std::filesystem::path here = executable_dir() / name;
  if (std::filesystem::exists(here)) return here.string();
  const std::filesystem::path there = executable_dir() / ".." / installed / name;
  if (std::filesystem::exists(there)) return there.lexically_normal().string();
  raise(ErrorKind::kFailed, "no " + here.string() + " (nor " + there.string() + ")");
}

// What the backend preloads without a GPU: $GVIRTUS_BENCH_ACCEPTING_DEVICE when set (a
// sanitized build puts its runtime first there), else the accepting device built or installed
// with the bench.
std::string accepting_device_preload() {
  if (const char* preload = std::getenv("GVIRTUS_BENCH_ACCEPTING_DEVICE")) return preload;
  return beside_bench("libgvirtus-accepting-device.so",
                      std::filesystem::path(GVIRTUS_INSTALL_LIBDIR) / "gvirtus");
}

std::vector<uint64_t> sizes_of(const std::vector<CopyPoint>& points) {
  std::vector<uint64_t> sizes;
  for (const CopyPoint& p : points) sizes.push_back(p.bytes);
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

// The transport's one-way streaming bandwidth at each size, as `gvirtus-bench comm` measures it.
Bandwidths raw_streaming(const BenchTransport& transport, const std::vector<uint64_t>& sizes,
                         bool quick) {
  Policy policy;
  if (quick) policy.stream_seconds = policy.pingpong_seconds = 0.02;
  const size_t largest = static_cast<size_t>(sizes.back());
  ChannelSession session(connect_comm_pair(transport, largest), policy, largest);
  Bandwidths raw;
  for (uint64_t bytes : sizes) raw[bytes] = session.measure(static_cast<size_t>(bytes)).mbps;
  session.finish();
  return raw;
}

// The median of each point's rounds (its bandwidth; its best and its copies over all of them).
std::vector<CopyPoint> median_points(const std::vector<std::vector<CopyPoint>>& rounds) {
  std::vector<CopyPoint> out;
  for (const CopyPoint& first : rounds.front()) {
    std::vector<double> mbps;
    CopyPoint merged = first;
    merged.copies = 0;
    for (const auto& round : rounds) {
      for (const CopyPoint& p : round) {
        if (p.direction != first.direction || p.memory != first.memory || p.bytes != first.bytes) {
          continue;
        }
        mbps.push_back(p.mbps);
        merged.mbps_max = std::max(merged.mbps_max, p.mbps_max);
        merged.copies += p.copies;
      }
    }
    merged.mbps = median(mbps);
    out.push_back(merged);
  }
  return out;
}

Bandwidths median_bandwidths(const std::vector<Bandwidths>& rounds) {
  Bandwidths out;
  for (const auto& [bytes, unused] : rounds.front()) {
    std::vector<double> mbps;
    for (const Bandwidths& round : rounds) {
      if (const auto it = round.find(bytes); it != round.end()) mbps.push_back(it->second);
    }
    out[bytes] = median(mbps);
  }
  return out;
}

// `device`: the accepting device's mode when there is no GPU. The copies through gvirtus and the
// raw streaming alternate, `rounds` times: a machine whose speed drifts (a VM's neighbours) moves
// both sides of a ratio alike.
CopyTransport run_over(const std::string& name, const std::vector<std::string>& workload, bool gpu,
                       const std::string& device, bool quick, int rounds) {
  CopyTransport t{name, {}, {}, {}};
  try {
    const BenchTransport& transport = *find_bench_transport(name);
    std::vector<std::string> environment;
    if (!gpu) {
      environment.push_back("GVIRTUS_ACCEPTING_DEVICE=" + device);
      environment.push_back("LD_PRELOAD=" + accepting_device_preload());
    }
    std::vector<std::vector<CopyPoint>> points;
    std::vector<Bandwidths> raw;
    for (int round = 1; round <= rounds; ++round) {
      std::cerr << "gvirtus-bench copy: through gvirtus over " << name << ", round " << round
                << " of " << rounds << "...\n";
      {  // the backend goes before the raw streaming, which listens where it did
        BackendChild backend(transport, R"(["cudart"])", environment);
        std::vector<std::string> argv = {(executable_dir() / "gvirtus-run").string(), "--config",
                                         backend.client_config_file(), "--"};
        argv.insert(argv.end(), workload.begin(), workload.end());
        const ProgramRun run = run_program(argv);
        if (run.status != 0) {
          raise(ErrorKind::kFailed, "the copy workload exited with " + std::to_string(run.status) +
                                        ": " + first_line(run.err) + "\nbackend log:\n" +
                                        backend.log());
        }
        points.push_back(parse_copy_points(run.out));
      }
      std::cerr << "gvirtus-bench copy: raw " << name << " streaming, round " << round << "...\n";
      raw.push_back(raw_streaming(transport, sizes_of(points.back()), quick));
    }
    t.points = median_points(points);
    t.raw = median_bandwidths(raw);
  } catch (const Error& e) {
    std::cerr << "gvirtus-bench copy: over " << name << ": " << e.what() << "\n";
    t.error = e.what();
  }
  return t;
}

}  // namespace

int run_copy_mode(std::span<char* const> args) {
  if (wants_help(args)) {
    print_help();
    return 0;
  }
  const CopyOptions o = parse_options(args);
  const auto start = std::chrono::steady_clock::now();
  const std::vector<std::string> workload = {
      beside_bench("gvirtus-copy-workload",
                   std::filesystem::path(GVIRTUS_INSTALL_LIBEXECDIR) / "gvirtus"),
      "--min-bytes",
      std::to_string(kMinBytes),
      "--max-bytes",
      std::to_string(o.max_bytes),
      "--seconds",
      o.quick ? "0.03" : "0.3"};
  CopyResults results;
  results.run = collect_run_info();
  results.quick = o.quick;
  results.accepting = o.device;
  results.rounds = o.rounds;
  std::cerr << "gvirtus-bench copy: native run...\n";
  const ProgramRun native = run_program(workload);
  constexpr std::string_view kNoDevice = "no CUDA device: ";
  if (const auto at = native.err.find(kNoDevice); native.status == 2 && at != std::string::npos) {
    results.native_error = first_line(native.err.substr(at));
    std::cerr << "gvirtus-bench copy: " << results.native_error
              << "; the backends run with the accepting device (not GPU evidence)\n";
  } else if (native.status != 0) {
    raise(ErrorKind::kFailed, "the native copy workload exited with " +
                                  std::to_string(native.status) + ": " + first_line(native.err));
  } else {
    results.native = parse_copy_points(native.out);
    results.gpu = true;
  }
  for (const std::string& name : o.transports) {
    results.transports.push_back(
        run_over(name, workload, results.gpu, o.device, o.quick, o.rounds));
  }
  for (const CopyTransport& t : results.transports) {
    for (uint64_t bytes : sizes_of(t.points)) {
      if (!results.memcpy.contains(bytes)) {
        results.memcpy[bytes] = memcpy_mbps(static_cast<size_t>(bytes), memcpy_repeats(bytes));
      }
    }
  }
  results.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  print_copy_summary(std::cout, results);
  if (!o.json_path.empty()) {
    write_file(o.json_path, copy_json(results));
    std::cout << "results written to " << o.json_path << "\n";
  }
  const bool all_ran = std::none_of(results.transports.begin(), results.transports.end(),
                                    [](const CopyTransport& t) { return !t.error.empty(); });
  return all_ran ? 0 : 1;
}

}  // namespace gvirtus::bench
