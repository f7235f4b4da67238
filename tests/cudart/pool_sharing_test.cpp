// Pools shared between two applications through the runtime stub, end to end on a machine without
// a GPU: the e2e program pool_sharing (two processes, the pool's descriptor passed over a unix
// socket) runs through gvirtus-run against a backend with the accepting device in "keep" mode
// (bench/copy/accepting_pools.cpp). The exporter's stub hands it the descriptor carrying its
// session's token, the importer's stub sends that token, and the importer's worker fetches the
// runtime's descriptor from the exporter's worker. Not GPU evidence: the accepting device's
// memory is each worker's own, so the two checks of values the other application wrote fail
// here, as they do on the simulated device; every call succeeds.
#include <gtest/gtest.h>

#include <string>

#include "device_doubles.h"
#include "support/backend_process.h"
#include "support/run_command.h"
#include "support/text.h"

namespace gvirtus::testing {
namespace {

class PoolSharing : public ::testing::TestWithParam<TestTransport> {};

TEST_P(PoolSharing, a_pool_and_its_pointer_pass_to_another_application) {
  BackendProcess backend(runtime_on_device_doubles(GetParam(), GVIRTUS_ACCEPTING_DEVICE_PRELOAD));
  const auto [out, status] =
      run_merged("env " GVIRTUS_STUB_PROGRAM_ENV " " + std::string(GVIRTUS_BUILD_BIN) +
                 "/gvirtus-run --config " + backend.client_config_file() + " -- " +
                 GVIRTUS_POOL_SHARING_PROGRAM);
  EXPECT_EQ(status, 0) << out << "\nbackend log:\n" << backend.log();
  for (const char* line :
       {"cudaMemPoolExportToShareableHandle(&fd, pool, kPosix, 0) -> 0 cudaSuccess",
        "cudaMemPoolExportPointer(&message.pointer, values) -> 0 cudaSuccess",
        "cudaMemPoolImportFromShareableHandle(&pool, handle, kPosix, 0) -> 0 cudaSuccess",
        "cudaMemPoolImportPointer(reinterpret_cast<void**>(&values), pool, &message.pointer) -> 0 "
        "cudaSuccess",
        "cudaFree(values)                             -> 0 cudaSuccess",
        "second application done: yes"}) {
    EXPECT_NE(out.find(line), std::string::npos) << line << "\n" << out;
  }
  EXPECT_EQ(count_of(out, "-> 0 cudaSuccess"), count_of(out, " -> ")) << "every call succeeded\n"
                                                                      << out;
  EXPECT_EQ(count_of(out, "FAILED"), 2u) << "only the checks of the other's values\n" << out;
}

INSTANTIATE_TEST_SUITE_P(Transports, PoolSharing,
                         ::testing::Values(TestTransport::tcp, TestTransport::shm),
                         [](const auto& info) { return std::string(to_string(info.param)); });

}  // namespace
}  // namespace gvirtus::testing
