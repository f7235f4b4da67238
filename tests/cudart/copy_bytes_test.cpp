// Every byte of host-to-device and device-to-host copies through the stub libcudart.so.13, over
// each way bytes can travel: tcp (the data sent from the application's buffer, the reply landing
// in it), shm with its arena (pageable copies through pinned staging blocks, pinned memory in the
// arena itself) and shm without one (copies as messages through the ring, landing in place); or
// over the endpoint $GVIRTUS_COPY_ENDPOINT alone (the VM harness: rdma and vsock).
//
// The application is programs/copy_check.cpp, run through gvirtus-run; see it for the sizes,
// alignments and memory kinds it checks, and for the reuse check. The backend runs with the
// accepting device (bench/copy/accepting_device.cpp) in "keep" mode: a device whose memory is
// host memory, so a round trip returns what was sent. Not GPU evidence: it checks the copy path.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "device_doubles.h"
#include "support/backend_process.h"
#include "support/run_command.h"

namespace gvirtus::testing {
namespace {

// One way for the bytes to travel: a transport of the test backend, or an endpoint of the
// environment's (GVIRTUS_COPY_ENDPOINT: the VM harness runs rdma and vsock so).
struct CopyPath {
  std::string name;
  TestTransport transport = TestTransport::tcp;
  std::string endpoint_json;  // empty: the transport's default endpoint
};

void PrintTo(const CopyPath& path, std::ostream* out) {
  *out << path.name;
}

std::vector<CopyPath> copy_paths() {
  if (const char* endpoint = std::getenv("GVIRTUS_COPY_ENDPOINT")) {
    return {{"endpoint", TestTransport::tcp, endpoint}};
  }
  // Without an arena a pageable copy streams through the ring as messages (with one it goes
  // through pinned staging blocks there, and only small copies are messages).
  const std::string no_arena = R"({"suite":"shm","protocol":"shm","arena_bytes":0,"path":")" +
                               std::string("/tmp/gvirtus-copybytes-") + std::to_string(::getpid()) +
                               R"(.sock"})";
  return {{"tcp", TestTransport::tcp, ""},
          {"shm_arena", TestTransport::shm, ""},
          {"shm_ring", TestTransport::shm, no_arena}};
}

BackendOptions backend_options(const CopyPath& path) {
  BackendOptions options =
      runtime_on_device_doubles(path.transport, GVIRTUS_ACCEPTING_DEVICE_PRELOAD);
  options.endpoint_json = path.endpoint_json;
  return options;
}

class CopyBytes : public ::testing::TestWithParam<CopyPath> {};

TEST_P(CopyBytes, every_byte_of_odd_sizes_and_alignments_round_trips_pageable_and_pinned) {
  BackendProcess backend(backend_options(GetParam()));
  // GVIRTUS_COPY_MAX_BYTES leaves out the larger sizes (the VM harness's emulated CPU is slow).
  const char* max_bytes = std::getenv("GVIRTUS_COPY_MAX_BYTES");
  const auto [out, status] =
      run_merged(std::string(GVIRTUS_BUILD_BIN) + "/gvirtus-run --config " +
                 backend.client_config_file() + " -- " + GVIRTUS_COPY_CHECK +
                 (max_bytes != nullptr ? std::string(" --max-bytes ") + max_bytes : ""));
  EXPECT_EQ(status, 0) << out << "\nbackend log:\n" << backend.log();
  const std::string all = max_bytes != nullptr ? "ok: " : "ok: 114 round trips checked";
  EXPECT_NE(out.find(all), std::string::npos) << out;
}

// Managed memory (programs/managed_check.cpp): the host's writes reach the device and the
// device's reach the host, over four rounds of 16 MiB, every word checked on both sides.
TEST_P(CopyBytes, managed_memory_is_coherent_between_the_host_and_the_device) {
  BackendProcess backend(backend_options(GetParam()));
  const auto [out, status] =
      run_merged(std::string(GVIRTUS_BUILD_BIN) + "/gvirtus-run --config " +
                 backend.client_config_file() + " -- " + GVIRTUS_MANAGED_CHECK);
  EXPECT_EQ(status, 0) << out << "\nbackend log:\n" << backend.log();
  EXPECT_NE(out.find("managed: ok"), std::string::npos) << out;
}

INSTANTIATE_TEST_SUITE_P(Paths, CopyBytes, ::testing::ValuesIn(copy_paths()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace gvirtus::testing
