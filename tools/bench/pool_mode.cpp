#include "pool_mode.h"

#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "backend_child.h"
#include "bench_args.h"
#include "common/error.h"
#include "driver_tools.h"
#include "json_out.h"
#include "mode_args.h"
#include "program_run.h"
#include "run_info.h"

namespace gvirtus::bench {
namespace {

struct PoolOptions {
  std::vector<uint64_t> sizes{uint64_t{1} << 20, uint64_t{64} << 20, uint64_t{256} << 20};
  int rounds = 5;
  std::string json_path;
};

struct PoolRow {
  uint64_t bytes;
  double direct_bytes_per_s;
  double relayed_bytes_per_s;
};

void print_help() {
  std::cout
      << "usage: gvirtus-bench pool [--json FILE] [--quick] [--rounds N]\n"
         "Copies between two backends of a client's pool (cuMemcpyPeer, device 0 to device 1,\n"
         "two gvirtus-backend children on loopback tcp): direct, backend to backend, against\n"
         "relayed through the client (GVIRTUS_POOL_COPIES=relayed), at 1 MiB, 64 MiB and\n"
         "256 MiB; every copied byte is checked. Each backend serves the machine's GPU with\n"
         "NVIDIA's driver, else the simulated device (host memory: the figures are then the\n"
         "transports' and copies', not a GPU's).\n"
         "  --json FILE   also write the results as JSON to FILE\n"
         "  --quick       1 MiB and 64 MiB, 2 rounds (a smoke test)\n"
         "  --rounds N    timed copies per size and path (default 5)\n";
}

PoolOptions parse_options(std::span<char* const> args) {
  PoolOptions o;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string arg = args[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= args.size()) throw UsageError(arg + " needs a value");
      return args[++i];
    };
    if (arg == "--json") {
      o.json_path = next();
    } else if (arg == "--quick") {
      o.sizes = {uint64_t{1} << 20, uint64_t{64} << 20};
      o.rounds = 2;
    } else if (arg == "--rounds") {
      o.rounds = static_cast<int>(parse_count("--rounds", next(), 1, 1000));
    } else {
      throw UsageError("pool: unknown option " + arg);
    }
  }
  check_output_path("--json", o.json_path);
  return o;
}

// gvirtus-bench-peer's copy rate over the pool, or Error{kFailed} with what it said.
double peer_rate(const DriverTools& tools, const std::string& config, uint64_t bytes, int rounds,
                 bool relayed, const BackendChild& a, const BackendChild& b) {
  std::vector<std::string> argv = {"/usr/bin/env", "GVIRTUS_CONFIG=" + config,
                                   "LD_LIBRARY_PATH=" + tools.stub_dir};
  if (relayed) argv.push_back("GVIRTUS_POOL_COPIES=relayed");
  argv.insert(argv.end(), {tools.probe, std::to_string(bytes), std::to_string(rounds)});
  const ProgramRun run = run_program(argv);
  const std::string output = run.out + run.err;
  double rate = 0;
  const size_t at = output.find("bytes_per_s=");
  if (run.status != 0 || at == std::string::npos ||
      std::sscanf(output.c_str() + at, "bytes_per_s=%lf", &rate) != 1) {
    raise(ErrorKind::kFailed, "gvirtus-bench-peer failed (status " + std::to_string(run.status) +
                                  "): " + output + "\nfirst backend:\n" + a.log() +
                                  "\nsecond backend:\n" + b.log());
  }
  // A direct run that fell back to relaying says so in its log: it would not measure direct.
  if (!relayed && output.find("are relayed through this process") != std::string::npos) {
    raise(ErrorKind::kFailed, "the direct copy fell back to relaying: " + output);
  }
  return rate;
}

std::string pool_json(const std::vector<PoolRow>& rows, const DriverTools& tools, int rounds) {
  JsonWriter out;
  out.begin_object().key("mode").value("pool");
  write_run_info(out, collect_run_info());
  out.key("device").value(tools.device).key("transport").value("tcp");
  out.key("copy").value("cuMemcpyPeer, device 0 (backend 0) to device 1 (backend 1)");
  out.key("rounds").value(rounds).key("results").begin_array();
  for (const PoolRow& r : rows) {
    out.begin_object(JsonWriter::kInline).key("bytes").value(r.bytes);
    out.key("direct_bytes_per_s").value(r.direct_bytes_per_s);
    out.key("relayed_bytes_per_s").value(r.relayed_bytes_per_s);
    out.key("direct_over_relayed").value(r.direct_bytes_per_s / r.relayed_bytes_per_s);
    out.end_object();
  }
  out.end_array().end_object();
  return out.str();
}

}  // namespace

int run_pool_mode(std::span<char* const> args) {
  if (wants_help(args)) {
    print_help();
    return 0;
  }
  const PoolOptions o = parse_options(args);
  const DriverTools tools = find_driver_tools("gvirtus-bench-peer");
  if (!tools.missing.empty()) raise(ErrorKind::kFailed, tools.missing);
  const BenchTransport& transport = choose_bench_transport("pool", "tcp");
  // One device each: the copy goes from the first backend's to the second's.
  const std::vector<std::string> one_device = {"GVIRTUS_SIMULATED_DEVICES=1",
                                               "CUDA_VISIBLE_DEVICES=0"};
  BackendChild first(transport, tools.plugins, one_device);
  BackendChild second(transport, tools.plugins, one_device);
  const std::string config = first.client_config_file() + ".pool.json";
  write_file(config, R"({"communicator": [{"endpoint": )" + first.client_endpoint_json() +
                         R"(, "backend": "first"}, {"endpoint": )" + second.client_endpoint_json() +
                         R"(, "backend": "second"}], "connect_timeout_ms": 5000})");
  std::vector<PoolRow> rows;
  std::printf("%-12s %18s %18s %10s   (%s device, loopback tcp)\n", "bytes", "direct MB/s",
              "relayed MB/s", "ratio", tools.device.c_str());
  for (const uint64_t bytes : o.sizes) {
    PoolRow row{bytes, 0, 0};
    row.relayed_bytes_per_s = peer_rate(tools, config, bytes, o.rounds, true, first, second);
    row.direct_bytes_per_s = peer_rate(tools, config, bytes, o.rounds, false, first, second);
    std::printf("%-12llu %18.1f %18.1f %9.2fx\n", static_cast<unsigned long long>(bytes),
                row.direct_bytes_per_s / 1e6, row.relayed_bytes_per_s / 1e6,
                row.direct_bytes_per_s / row.relayed_bytes_per_s);
    rows.push_back(row);
  }
  if (!o.json_path.empty()) {
    write_file(o.json_path, pool_json(rows, tools, o.rounds));
    std::cout << "results written to " << o.json_path << "\n";
  }
  return 0;
}

}  // namespace gvirtus::bench
