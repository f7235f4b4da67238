// GVIRTUS_STATS: real programs run against a real backend print, at exit, a table whose counts
// and byte totals match the calls they made; without the variable they print nothing.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "support/backend_process.h"

namespace gvirtus::testing {
namespace {

struct Output {
  std::string text;  // stdout and stderr together
  int status = -1;
};

Output run(const std::string& command) {
  Output out;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return out;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) out.text.append(buffer, n);
  out.status = ::pclose(pipe);
  return out;
}

// A row of the table: name, sync, async, failed, request bytes, reply bytes (timings ignored).
struct Row {
  uint64_t sync = 0, async = 0, failed = 0, request_bytes = 0, reply_bytes = 0;
};

// The row named `name`, or nullopt when the table has none.
std::optional<Row> find_row(const std::string& table, const std::string& name) {
  std::istringstream lines(table);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string first;
    Row row;
    if (fields >> first && first == name &&
        fields >> row.sync >> row.async >> row.failed >> row.request_bytes >> row.reply_bytes) {
      return row;
    }
  }
  return std::nullopt;
}

const std::string kBin = GVIRTUS_BUILD_BIN;

TEST(CallStats, gvirtus_stats_counts_every_ping_with_its_payload_bytes) {
  BackendProcess backend;
  const Output out = run("GVIRTUS_STATS=1 " + kBin + "/gvirtus-ping --config " +
                         backend.client_config_file() + " --count 25 --bytes 100");
  ASSERT_EQ(out.status, 0) << out.text;
  ASSERT_NE(out.text.find("gvirtus call stats"), std::string::npos) << out.text;
  const auto ping = find_row(out.text, "core.Ping");
  ASSERT_TRUE(ping) << out.text;
  EXPECT_EQ(ping->sync, 25u);
  EXPECT_EQ(ping->async, 0u);
  EXPECT_EQ(ping->failed, 0u);
  EXPECT_EQ(ping->request_bytes, 2500u);
  EXPECT_EQ(ping->reply_bytes, 2500u);  // the echo
  const auto total = find_row(out.text, "total");
  ASSERT_TRUE(total) << out.text;
  EXPECT_EQ(total->sync, 25u);
  EXPECT_EQ(total->request_bytes, 2500u);
}

TEST(CallStats, without_gvirtus_stats_nothing_is_printed) {
  BackendProcess backend;
  for (const char* env : {"env -u GVIRTUS_STATS", "GVIRTUS_STATS=0"}) {
    const Output out = run(std::string(env) + " " + kBin + "/gvirtus-ping --config " +
                           backend.client_config_file() + " --count 3");
    ASSERT_EQ(out.status, 0) << out.text;
    EXPECT_EQ(out.text.find("gvirtus call stats"), std::string::npos) << env << "\n" << out.text;
  }
}

// The cudart stub names its calls; every row of a CUDA program's table says which function.
TEST(CallStats, a_cuda_program_through_the_stub_shows_cudart_function_names) {
  const std::string program = kBin + "/../tests/e2e/programs/errors_versions";
  if (!std::filesystem::exists(program)) GTEST_SKIP() << "no CUDA toolkit: " << program;
  BackendProcess backend("", R"(["cudart"])");
  const Output out =
      run("env " GVIRTUS_STUB_PROGRAM_ENV " GVIRTUS_STATS=1 " + kBin + "/gvirtus-run --config " +
          backend.client_config_file() + " -- " + program);
  ASSERT_EQ(out.status, 0) << out.text;
  // errors_versions calls cudaGetDeviceCount once and cudaSetDevice once (with a bad device).
  const auto count = find_row(out.text, "cudart.cudaGetDeviceCount");
  ASSERT_TRUE(count) << out.text;
  EXPECT_EQ(count->sync, 1u);
  EXPECT_EQ(count->async, 0u);
  const auto set = find_row(out.text, "cudart.cudaSetDevice");
  ASSERT_TRUE(set) << out.text;
  EXPECT_EQ(set->sync, 1u);
  EXPECT_EQ(set->request_bytes, 4u);  // one int
  EXPECT_EQ(out.text.find("\n1:"), std::string::npos) << "an unnamed cudart id:\n" << out.text;
}

}  // namespace
}  // namespace gvirtus::testing
