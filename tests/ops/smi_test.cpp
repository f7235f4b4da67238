// gvirtus-smi against real backends: one serving a live client session, and one that is gone.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "backend/gpu_inventory.h"
#include "common/frame.h"
#include "common/json.h"
#include "frontend/client.h"
#include "protocol/core_calls.h"
#include "protocol/status.h"
#include "support/backend_process.h"

namespace gvirtus::testing {
namespace {

struct SmiRun {
  std::string output;
  int exit_code = -1;
};

SmiRun run_smi(const std::string& config) {
  SmiRun run;
  const std::string command =
      std::string(GVIRTUS_BUILD_BIN) + "/gvirtus-smi --config " + config + " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) run.output.append(buffer, n);
  const int status = ::pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

// The cells of the table row whose PID column is `pid`, trimmed; empty if there is none.
std::vector<std::string> session_row(const std::string& output, uint32_t pid) {
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] != '|') continue;
    std::vector<std::string> cells;
    std::istringstream row(line.substr(1));
    for (std::string cell; std::getline(row, cell, '|');) {
      const auto first = cell.find_first_not_of(' ');
      const auto last = cell.find_last_not_of(' ');
      cells.push_back(first == std::string::npos ? "" : cell.substr(first, last - first + 1));
    }
    // Worker | Client | Transport | Program | PID | Calls | Received | Sent | Allocated |
    // GPU-Memory | Age
    if (cells.size() == 11 && cells[4] == std::to_string(pid)) return cells;
  }
  return {};
}

void ping(Client& client, int times) {
  for (int i = 0; i < times; ++i) {
    const std::byte byte{42};
    const ByteView pieces[] = {ByteView(&byte, 1)};
    client.call(core::call_id(core::Fn::kPing), pieces, [](WireReader& in) { in.get_raw(1); });
  }
}

// GPUs are either listed in a table or reported absent with the reason, never silently.
void expect_gpus_reported(const std::string& output) {
  const bool table = output.find("| GPU |") != std::string::npos &&
                     output.find("Memory-Usage") != std::string::npos;
  const bool none_with_reason = output.find("GPUs: 0 (") != std::string::npos;
  EXPECT_TRUE(table != none_with_reason) << output;
}

TEST(Smi, shows_the_gpus_and_a_live_sessions_address_transport_and_calls) {
  BackendProcess backend;
  Client client(backend.client_config(), {});
  ping(client, 7);
  const uint32_t worker = client.backend().worker_pid;

  const SmiRun smi = run_smi(backend.client_config_file());
  EXPECT_EQ(smi.exit_code, 0) << smi.output;
  EXPECT_NE(smi.output.find("Backend tcp 127.0.0.1:" + std::to_string(backend.port()) +
                            ": gvirtus-backend"),
            std::string::npos)
      << smi.output;
  EXPECT_NE(smi.output.find("pid " + std::to_string(backend.pid())), std::string::npos)
      << smi.output;
  expect_gpus_reported(smi.output);
  // Our session, and not gvirtus-smi's own.
  EXPECT_NE(smi.output.find("1 of 64 sessions"), std::string::npos) << smi.output;
  const auto row = session_row(smi.output, static_cast<uint32_t>(::getpid()));
  ASSERT_FALSE(row.empty()) << "no session row for pid " << ::getpid() << ":\n" << smi.output;
  EXPECT_EQ(row[0], std::to_string(worker));
  EXPECT_EQ(row[1].rfind("tcp://127.0.0.1:", 0), 0u) << row[1];
  EXPECT_GT(std::stoi(row[1].substr(16)), 0) << row[1];
  EXPECT_EQ(row[2], "tcp");
  EXPECT_EQ(row[3], program_invocation_short_name);
  EXPECT_EQ(row[5], "7");  // the seven pings; the handshake is not a call
  const std::string traffic = std::to_string(7 * (kFrameHeaderBytes + 1)) + "B";  // header + 1
  EXPECT_EQ(row[6], traffic);
  EXPECT_EQ(row[7], traffic);
  EXPECT_EQ(row[8], "0B");  // core calls allocate nothing
  ping(client, 3);
  EXPECT_EQ(session_row(run_smi(backend.client_config_file()).output, ::getpid())[5], "10");
}

TEST(Smi, json_output_carries_the_same_figures_for_scripts) {
  BackendProcess backend;
  Client client(backend.client_config(), {});
  ping(client, 4);
  const SmiRun smi = run_smi(backend.client_config_file() + " --json");
  EXPECT_EQ(smi.exit_code, 0) << smi.output;
  const JsonValue doc = parse_json(smi.output, "gvirtus-smi --json");
  const JsonValue& backends = *doc.find("backends");
  ASSERT_EQ(backends.size(), 1u);
  EXPECT_TRUE(backends[0].find("answered")->as_bool());
  EXPECT_EQ(backends[0].find("daemon_pid")->as_uint64(), static_cast<uint64_t>(backend.pid()));
  // No GPU table without a reason, and the reason only without GPUs.
  EXPECT_NE(backends[0].find("gpus")->size() == 0, backends[0].find("gpu_error")->is_null());
  const JsonValue& sessions = *backends[0].find("sessions");
  ASSERT_EQ(sessions.size(), 1u) << smi.output;
  EXPECT_EQ(sessions[0].find("client_pid")->as_uint64(), static_cast<uint64_t>(::getpid()));
  EXPECT_EQ(sessions[0].find("calls")->as_uint64(), 4u);
  EXPECT_EQ(sessions[0].find("transport")->as_string(), "tcp");
}

TEST(Smi, a_session_that_ended_is_no_longer_listed) {
  BackendProcess backend;
  {
    Client client(backend.client_config(), {});
    ping(client, 1);
    ASSERT_FALSE(session_row(run_smi(backend.client_config_file()).output, ::getpid()).empty());
  }
  // The worker exits when its client leaves; the daemon frees its slot when it reaps it.
  std::string output;
  EXPECT_TRUE(eventually(5000, [&] {
    output = run_smi(backend.client_config_file()).output;
    return output.find("Sessions: none") != std::string::npos;
  })) << output;
}

TEST(Smi, an_unreachable_backend_is_named_with_the_reason_and_fails) {
  std::string config;
  {
    BackendProcess gone;
    config = gone.client_config_file();
    const SmiRun before = run_smi(config);
    ASSERT_EQ(before.exit_code, 0) << before.output;
    gone.stop(SIGTERM);
    std::ifstream in(config);
    std::stringstream text;
    text << in.rdbuf();
    config = ::testing::TempDir() + "/smi-unreachable.json";
    std::ofstream(config) << text.str();
  }
  const SmiRun smi = run_smi(config);
  EXPECT_EQ(smi.exit_code, 1) << smi.output;
  EXPECT_NE(smi.output.find(": UNREACHABLE: "), std::string::npos) << smi.output;
  EXPECT_NE(smi.output.find("Connection refused"), std::string::npos) << smi.output;
}

TEST(Smi, a_backend_with_every_session_busy_still_answers_but_serves_no_other_client) {
  BackendProcess backend(R"("limits":{"max_sessions":1})");
  Client client(backend.client_config(), {});
  ping(client, 2);
  const SmiRun smi = run_smi(backend.client_config_file());
  EXPECT_EQ(smi.exit_code, 0) << smi.output;
  EXPECT_NE(smi.output.find("1 of 1 sessions"), std::string::npos) << smi.output;
  EXPECT_EQ(session_row(smi.output, ::getpid())[5], "2") << smi.output;
  // A status-only session refuses anything but a status query.
  Client second(backend.client_config(), {});
  try {
    ping(second, 1);
    FAIL() << "a client beyond max_sessions was served";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kOverloaded) << e.what();
    EXPECT_NE(std::string(e.what()).find("maximum of 1 sessions"), std::string::npos) << e.what();
  }
  ping(client, 1);  // the real session is undisturbed
}

TEST(Smi, every_backend_of_the_configuration_is_asked_even_after_one_fails) {
  BackendProcess up;
  uint16_t down_port = 0;
  {
    BackendProcess gone;
    down_port = gone.port();
  }
  const std::string config = ::testing::TempDir() + "/smi-two-backends.json";
  auto endpoint = [](uint16_t port) {
    return R"({"endpoint":{"suite":"tcp/ip","protocol":"tcp","server_address":"127.0.0.1",)"
           R"("port":")" +
           std::to_string(port) + R"("},"plugins":[]})";
  };
  std::ofstream(config) << R"({"communicator":[)" << endpoint(down_port) << ","
                        << endpoint(up.port()) << R"(],"connect_timeout_ms":2000})";
  const SmiRun smi = run_smi(config);
  EXPECT_EQ(smi.exit_code, 1) << smi.output;
  EXPECT_NE(smi.output.find("2 backends"), std::string::npos) << smi.output;
  EXPECT_NE(smi.output.find("Backend tcp 127.0.0.1:" + std::to_string(down_port) + ": UNREACHABLE"),
            std::string::npos)
      << smi.output;
  EXPECT_NE(
      smi.output.find("Backend tcp 127.0.0.1:" + std::to_string(up.port()) + ": gvirtus-backend"),
      std::string::npos)
      << smi.output;
}

// A session that asked for the status is a monitor's: never listed, so that one gvirtus-smi's
// session, which its worker serves until it sees the client gone, never shows in the next query.
TEST(Smi, a_session_that_asked_for_the_status_is_not_listed) {
  BackendProcess backend;
  Client application(backend.client_config(), {});
  ping(application, 2);
  Client monitor(backend.client_config(), {});
  BackendStatus seen;
  monitor.call(core::call_id(core::Fn::kStatus), {},
               [&](WireReader& in) { seen = decode_backend_status(in); });
  ASSERT_EQ(seen.sessions.size(), 1u);  // the application's, not the asking session's own
  EXPECT_EQ(seen.sessions[0].calls, 2u);
  const SmiRun smi = run_smi(backend.client_config_file() + " --json");
  ASSERT_EQ(smi.exit_code, 0) << smi.output;
  const JsonValue doc = parse_json(smi.output, "gvirtus-smi --json");
  const JsonValue& listed = *(*doc.find("backends"))[0].find("sessions");
  ASSERT_EQ(listed.size(), 1u) << smi.output;  // the monitor, still connected, is not
  EXPECT_EQ(listed[0].find("calls")->as_uint64(), 2u) << smi.output;
  ping(monitor, 1);  // a monitor's session still serves its client
}

TEST(Smi, status_queries_stay_well_formed_while_sessions_come_and_go) {
  BackendProcess backend;
  std::atomic<bool> stop{false};
  std::atomic<int> sessions{0};
  std::vector<std::thread> churn;
  for (int t = 0; t < 3; ++t) {
    churn.emplace_back([&] {
      while (!stop.load()) {
        Client client(backend.client_config(), {});
        ping(client, 3);
        ++sessions;
      }
    });
  }
  size_t seen = 0;
  // At least 8 queries, and on until one caught a live session: on a loaded machine the churning
  // threads may not have a session open during the first few (10 s at most).
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (int i = 0; i < 8 || (seen == 0 && std::chrono::steady_clock::now() < give_up); ++i) {
    const SmiRun smi = run_smi(backend.client_config_file() + " --json");
    ASSERT_EQ(smi.exit_code, 0) << smi.output;
    const JsonValue doc = parse_json(smi.output, "gvirtus-smi --json");
    const JsonValue& listed = *(*doc.find("backends"))[0].find("sessions");
    seen += listed.size();
    for (size_t j = 0; j < listed.size(); ++j) {
      // Every listed session is one of this test's clients, published whole.
      EXPECT_EQ(listed[j].find("client_pid")->as_uint64(), static_cast<uint64_t>(::getpid()));
      EXPECT_EQ(listed[j].find("program")->as_string(), program_invocation_short_name);
      EXPECT_LE(listed[j].find("calls")->as_uint64(), 3u);
    }
  }
  stop = true;
  for (auto& t : churn) t.join();
  EXPECT_GT(sessions.load(), 0);
  EXPECT_GT(seen, 0u) << "no query caught a live session: the churn did not overlap the queries";
}

TEST(Smi, a_backend_that_accepts_but_never_answers_is_given_up_within_the_timeout) {
  // A listening socket nobody serves: the kernel completes the connection, no hello reply comes.
  const int silent = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(silent, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(silent, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(::listen(silent, 4), 0);
  socklen_t length = sizeof address;
  ASSERT_EQ(::getsockname(silent, reinterpret_cast<sockaddr*>(&address), &length), 0);
  const std::string config = ::testing::TempDir() + "/smi-silent.json";
  std::ofstream(config) << R"({"communicator":[{"endpoint":{"suite":"tcp/ip","protocol":"tcp",)"
                        << R"("server_address":"127.0.0.1","port":")" << ntohs(address.sin_port)
                        << R"("},"plugins":[]}]})";
  const auto start = std::chrono::steady_clock::now();
  const SmiRun smi = run_smi(config + " --timeout 300");
  const auto took = std::chrono::steady_clock::now() - start;
  ::close(silent);
  EXPECT_EQ(smi.exit_code, 1) << smi.output;
  EXPECT_NE(smi.output.find(": UNREACHABLE: "), std::string::npos) << smi.output;
  EXPECT_LT(took, std::chrono::seconds(5)) << smi.output;
  EXPECT_EQ(run_smi(config + " --timeout 0").exit_code, 2);
}

TEST(Smi, a_missing_configuration_is_a_clear_error) {
  const SmiRun smi = run_smi("/nonexistent/gvirtus.json");
  EXPECT_EQ(smi.exit_code, 1) << smi.output;
  EXPECT_NE(smi.output.find("/nonexistent/gvirtus.json"), std::string::npos) << smi.output;
}

TEST(Smi, a_pools_backends_are_shown_with_their_place_in_the_pool) {
  BackendProcess first;
  BackendProcess second;
  const std::string config = ::testing::TempDir() + "/smi-pool.json";
  std::ofstream(config) << pool_config_json({&first, &second});
  const SmiRun smi = run_smi(config);
  EXPECT_EQ(smi.exit_code, 0) << smi.output;
  EXPECT_NE(smi.output.find("a pool of 2 backends (2 endpoints)"), std::string::npos) << smi.output;
  // Both backends run on this machine: without NVML (no driver) each adds no device to the pool;
  // on a GPU machine the second backend's first device follows the first backend's.
  const GpuInventory gpus = read_gpu_inventory();
  const std::string expected =
      gpus.error.empty() && !gpus.gpus.empty()
          ? "Pool: backend \"backend1\", device " + std::to_string(gpus.gpus.size())
          : std::string("Pool: backend \"backend1\", no device of the pool");
  EXPECT_NE(smi.output.find(expected), std::string::npos) << expected << "\n" << smi.output;
}

}  // namespace
}  // namespace gvirtus::testing
