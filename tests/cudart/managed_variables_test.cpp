// Managed variables (__managed__) through the runtime stub, end to end on a machine without a
// GPU: the e2e program managed_variables runs through gvirtus-run against a backend with the
// accepting device in "keep" mode (bench/copy/accepting_device.cpp), which loads its module and
// places its managed variables packed in managed memory, as a driver does. The stub resolves
// each at __cudaInitModule, mirrors its pages and writes its address into the host code's slot;
// the program's copies out of and into the variables then check both directions of the mirror.
// Not GPU evidence: no kernel runs, and the variables start zeroed (no initial value).
#include <gtest/gtest.h>

#include <string>

#include "device_doubles.h"
#include "support/backend_process.h"
#include "support/run_command.h"
#include "support/text.h"

namespace gvirtus::testing {
namespace {

class ManagedVariables : public ::testing::TestWithParam<TestTransport> {};

TEST_P(ManagedVariables, are_mirrored_at_their_backend_address_both_ways) {
  BackendProcess backend(runtime_on_device_doubles(GetParam(), GVIRTUS_ACCEPTING_DEVICE_PRELOAD));
  // The program is nvcc's, never instrumented: a sanitizer build's stub needs its runtime loaded
  // first (GVIRTUS_STUB_PROGRAM_ENV).
  const auto [out, status] =
      run_merged("env " GVIRTUS_STUB_PROGRAM_ENV " GVIRTUS_STATS=1 " +
                 std::string(GVIRTUS_BUILD_BIN) + "/gvirtus-run --config " +
                 backend.client_config_file() + " -- " + GVIRTUS_MANAGED_VARIABLES_PROGRAM);
  EXPECT_EQ(status, 0) << out << "\nbackend log:\n" << backend.log();
  // The host's values out of the counters, the tag and the large variable; a copy into the
  // counters read back at once.
  EXPECT_EQ(count_of(out, "check same                                   ok"), 3u) << out;
  EXPECT_NE(out.find("check tag_back == 0x1234ull                  ok"), std::string::npos) << out;
  EXPECT_NE(out.find("done"), std::string::npos) << out;
  // The variables were mirrored as managed memory: fetched and flushed by the mirror.
  EXPECT_NE(out.find("managed memory fetched"), std::string::npos) << out;
  EXPECT_NE(out.find("managed memory flushed"), std::string::npos) << out;
}

INSTANTIATE_TEST_SUITE_P(Transports, ManagedVariables,
                         ::testing::Values(TestTransport::tcp, TestTransport::shm),
                         [](const auto& info) { return std::string(to_string(info.param)); });

}  // namespace
}  // namespace gvirtus::testing
