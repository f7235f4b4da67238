// gvirtus-ping: checks that a gvirtus backend answers, through the same frontend core the CUDA
// stub uses, and reports round-trip times. The quick start's smoke test.
//
//   gvirtus-ping [--config FILE] [--count N] [--bytes N]
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/error.h"
#include "frontend/client.h"
#include "protocol/core_calls.h"

namespace {

int usage(const char* why) {
  std::cerr << "gvirtus-ping: " << why
            << "\nusage: gvirtus-ping [--config FILE] [--count N] [--bytes N]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string config_path;
  long count = 10;
  long bytes = 64;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--help" || arg == "-h") {
      std::cout << "usage: gvirtus-ping [--config FILE] [--count N] [--bytes N]\n"
                   "Sends N ping calls of the given payload size to the configured gvirtus\n"
                   "backend and prints the round-trip times. Exit status 0 if all came back.\n";
      return 0;
    } else if (arg == "--config" && has_value) {
      config_path = argv[++i];
    } else if (arg == "--count" && has_value) {
      count = std::strtol(argv[++i], nullptr, 10);
    } else if (arg == "--bytes" && has_value) {
      bytes = std::strtol(argv[++i], nullptr, 10);
    } else {
      return usage(("unknown argument \"" + arg + "\"").c_str());
    }
  }
  if (count <= 0 || bytes < 0 || bytes > (64L << 20)) return usage("bad --count or --bytes");

  try {
    const std::filesystem::path path =
        config_path.empty() ? gvirtus::find_config() : std::filesystem::path(config_path);
    gvirtus::Client client(gvirtus::load_config(path), {});
    client.connect();
    const gvirtus::HelloReply backend = client.backend();
    std::cout << "connected to " << backend.backend_version << " (worker pid " << backend.worker_pid
              << ") using " << path.string() << "\n";

    std::vector<std::byte> payload(static_cast<size_t>(bytes));
    for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<std::byte>(i * 131 + 7);
    std::vector<double> rtts;
    for (long n = 0; n < count; ++n) {
      const gvirtus::ByteView pieces[] = {payload};
      bool same = false;
      const auto start = std::chrono::steady_clock::now();
      client.call(gvirtus::core::call_id(gvirtus::core::Fn::kPing), pieces,
                  [&](gvirtus::WireReader& in) {
                    const auto echo = in.get_raw(in.remaining());
                    same = echo.size() == payload.size() &&
                           std::memcmp(echo.data(), payload.data(), payload.size()) == 0;
                  });
      const double us =
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
              .count();
      if (!same) {
        std::cerr << "gvirtus-ping: reply " << n << " differs from what was sent\n";
        return 1;
      }
      rtts.push_back(us);
    }
    std::sort(rtts.begin(), rtts.end());
    std::cout << count << " pings of " << bytes << " bytes: min " << rtts.front() << " us, median "
              << rtts[rtts.size() / 2] << " us, max " << rtts.back() << " us\n";
    return 0;
  } catch (const gvirtus::Error& e) {
    std::cerr << "gvirtus-ping: " << e.what() << "\n";
    return 1;
  }
}
