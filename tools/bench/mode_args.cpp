#include "mode_args.h"

#include <algorithm>
#include <filesystem>

#include "bench_args.h"
#include "communicators/factory.h"

namespace gvirtus::bench {

std::string bench_transport_list() {
  std::string text;
  for (const std::string& name : bench_transport_names()) text += (text.empty() ? "" : ", ") + name;
  return text;
}

const BenchTransport& choose_bench_transport(std::string_view mode, const std::string& name) {
  if (const BenchTransport* transport = find_bench_transport(name)) return *transport;
  const std::vector<std::string> known = transport_names();
  const bool exists = std::find(known.begin(), known.end(), name) != known.end();
  throw UsageError(std::string(mode) + ": " +
                   (exists ? "gvirtus-bench cannot set up the " + name + " transport yet"
                           : "unknown transport \"" + name + "\"") +
                   " (it can measure: " + bench_transport_list() + ")");
}

void check_output_path(std::string_view option, const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!path.empty() && !parent.empty() && !std::filesystem::is_directory(parent)) {
    throw UsageError(std::string(option) + ": the directory " + parent.string() +
                     " does not exist");
  }
}

void parse_workload_options(std::string_view mode, std::span<char* const> args,
                            WorkloadOptions& common,
                            FunctionRef<bool(std::string_view arg, NextValue next)> own) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string_view arg = args[i];
    auto next = [&]() -> std::string_view {
      if (i + 1 >= args.size()) throw UsageError(std::string(arg) + " needs a value");
      return args[++i];
    };
    if (arg == "--transport") {
      common.transports.emplace_back(choose_bench_transport(mode, std::string(next())).name);
    } else if (arg == "--json") {
      common.json_path = next();
    } else if (arg == "--quick") {
      common.quick = true;
    } else if (!own(arg, next)) {
      throw UsageError(std::string(mode) + ": unknown argument \"" + std::string(arg) + "\"");
    }
  }
  if (common.transports.empty()) common.transports = {"tcp", "shm"};
  check_output_path("--json", common.json_path);
}

bool wants_help(std::span<char* const> args) {
  return std::any_of(args.begin(), args.end(),
                     [](const char* arg) { return std::string_view(arg) == "--help"; });
}

}  // namespace gvirtus::bench
