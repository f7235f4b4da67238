// Every byte of host-to-device and device-to-host copies through the stub libcudart.so.13, over
// each way bytes can travel: tcp (the data sent from the application's buffer, the reply landing
// in it), shm with its arena (pageable copies through pinned staging blocks, pinned memory in the
// arena itself) and shm without one (copies as messages through the ring, landing in place).
//
// The application is programs/copy_check.cpp, run through gvirtus-run; see it for the sizes,
// alignments and memory kinds it checks, and for the reuse check. The backend runs with the
// accepting device (bench/copy/accepting_device.cpp) in "keep" mode: a device whose memory is
// host memory, so a round trip returns what was sent. Not GPU evidence: it checks the copy path.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <sstream>
#include <string>

#include "support/backend_process.h"

namespace gvirtus::testing {
namespace {

enum class CopyPath { tcp, shm_arena, shm_ring };

void PrintTo(CopyPath path, std::ostream* out) {
  *out << (path == CopyPath::tcp ? "tcp" : path == CopyPath::shm_arena ? "shm_arena" : "shm_ring");
}

BackendOptions backend_options(CopyPath path) {
  BackendOptions options;
  options.plugins = R"(["cudart"])";
  options.transport = path == CopyPath::tcp ? TestTransport::tcp : TestTransport::shm;
  options.exec_prefix = {"env", "LD_PRELOAD=" GVIRTUS_ACCEPTING_DEVICE_PRELOAD,
                         "GVIRTUS_ACCEPTING_DEVICE=keep"};
  if (path == CopyPath::shm_ring) {
    options.endpoint_json = R"({"suite":"shm","protocol":"shm","arena_bytes":0,"path":")" +
                            std::string("/tmp/gvirtus-copybytes-") + std::to_string(::getpid()) +
                            R"(.sock"})";
  }
  return options;
}

// Runs `command` and returns what it printed (stdout and stderr) and its exit status.
std::pair<std::string, int> run(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return {"popen failed", -1};
  char chunk[4096];
  while (const size_t got = std::fread(chunk, 1, sizeof chunk, pipe)) out.append(chunk, got);
  const int status = ::pclose(pipe);
  return {out, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status)};
}

class CopyBytes : public ::testing::TestWithParam<CopyPath> {};

TEST_P(CopyBytes, every_byte_of_odd_sizes_and_alignments_round_trips_pageable_and_pinned) {
  BackendProcess backend(backend_options(GetParam()));
  const auto [out, status] = run(std::string(GVIRTUS_BUILD_BIN) + "/gvirtus-run --config " +
                                 backend.client_config_file() + " -- " + GVIRTUS_COPY_CHECK);
  EXPECT_EQ(status, 0) << out << "\nbackend log:\n" << backend.log();
  EXPECT_NE(out.find("ok: 112 round trips checked"), std::string::npos) << out;
}

INSTANTIATE_TEST_SUITE_P(Paths, CopyBytes,
                         ::testing::Values(CopyPath::tcp, CopyPath::shm_arena, CopyPath::shm_ring),
                         [](const auto& info) {
                           std::ostringstream name;
                           PrintTo(info.param, &name);
                           return name.str();
                         });

}  // namespace
}  // namespace gvirtus::testing
