// Configuration of the rdma and vsock endpoints, and what happens on a machine without the
// hardware or module: clear errors naming the file and field, never a crash. Their data paths run
// in the conformance suite inside the VM harness (tests/vm/).
#include <gtest/gtest.h>

#include <filesystem>

#include "common/config.h"
#include "common/error.h"
#include "communicators/factory.h"
#include "communicators/vsock/vsock_communicator.h"

namespace gvirtus::testing {
namespace {

using namespace std::chrono_literals;

std::unique_ptr<Communicator> from_config(const std::string& endpoint) {
  const Config config =
      parse_config(R"({"communicator":[{"endpoint":)" + endpoint + R"(,"plugins":[]}]})", "<test>");
  return make_communicator(config.endpoints.at(0), 1 << 20);
}

void expect_config_error(const std::string& endpoint, const std::string& mentions) {
  try {
    from_config(endpoint);
    FAIL() << endpoint;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput) << e.what();
    EXPECT_NE(std::string(e.what()).find(mentions), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("<test>: communicator[0].endpoint"), std::string::npos)
        << e.what();
  }
}

bool rdma_plugin_built() {
  return std::filesystem::exists(std::string(GVIRTUS_BUILD_BIN) +
                                 "/../lib/gvirtus/libgvirtus-comm-rdma.so");
}

const std::string kVsock = R"({"suite":"vsock","protocol":"vsock")";
const std::string kRdma = R"({"suite":"infiniband-rdma","protocol":"ib")";

TEST(VsockConfig, bad_fields_give_errors_that_name_the_field) {
  expect_config_error(kVsock + "}", "port: expected a vsock port");
  expect_config_error(kVsock + R"(,"port":"4294967295"})", "port: expected a vsock port below");
  expect_config_error(kVsock + R"(,"port":"1","cid":"nowhere"})", "cid");
  expect_config_error(kVsock + R"(,"port":"1","cid":4294967296})", "cid");
  expect_config_error(kVsock + R"(,"port":"1","listen_cid":true})", "listen_cid");
}

TEST(VsockConfig, names_and_numbers_are_accepted_and_shown_in_the_name) {
  EXPECT_EQ(from_config(kVsock + R"(,"port":"9999"})")->name(), "vsock://2:9999");
  EXPECT_EQ(from_config(kVsock + R"(,"port":9999,"cid":"local"})")->name(), "vsock://1:9999");
  EXPECT_EQ(from_config(kVsock + R"(,"port":"7","cid":42})")->name(), "vsock://42:7");
}

TEST(Vsock, without_a_listener_or_module_connect_fails_at_once_with_a_reason) {
  if (!vsock_available()) {
    try {
      from_config(kVsock + R"(,"port":"1","cid":"local"})")->connect(1s);
      FAIL();
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("vsock"), std::string::npos) << e.what();
    }
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  // Port 1 on the loopback CID: nobody listens there (or no loopback transport at all).
  EXPECT_THROW(from_config(kVsock + R"(,"port":"1","cid":"local"})")->connect(2s), Error);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
}

TEST(RdmaConfig, bad_fields_give_errors_that_name_the_field) {
  if (!rdma_plugin_built()) GTEST_SKIP() << "the rdma plugin was not built (no rdma-core headers)";
  expect_config_error(kRdma + "}", "port");
  expect_config_error(kRdma + R"(,"port":"1","slots":2})", "slots: expected 4 to 1024");
  expect_config_error(kRdma + R"(,"port":"1","slot_bytes":5000})", "slot_bytes: expected a power");
  expect_config_error(kRdma + R"(,"port":"1","completion":"spin"})", "completion");
  expect_config_error(kRdma + R"(,"port":"1","spin_us":100000000})", "spin_us");
  expect_config_error(kRdma + R"(,"port":"1","server_address":""})", "server_address");
  expect_config_error(kRdma + R"(,"port":"1","queue_depth":4})", "queue_depth: unknown rdma field");
}

TEST(RdmaConfig, the_plugin_loads_and_names_the_endpoint_with_gvirtus_suite_names) {
  if (!rdma_plugin_built()) GTEST_SKIP() << "the rdma plugin was not built (no rdma-core headers)";
  EXPECT_EQ(from_config(kRdma + R"(,"server_address":"10.1.2.3","port":"9998"})")->name(),
            "rdma://10.1.2.3:9998");
  EXPECT_EQ(from_config(R"({"suite":"rdma","protocol":"rdma","port":7})")->name(),
            "rdma://127.0.0.1:7");
}

// Without an RDMA device (this machine, CI), serving and connecting fail with a message that
// says what is missing; nothing crashes or hangs.
TEST(Rdma, without_a_device_serve_and_connect_fail_with_a_reason) {
  if (!rdma_plugin_built()) GTEST_SKIP() << "the rdma plugin was not built (no rdma-core headers)";
  if (std::filesystem::exists("/dev/infiniband/rdma_cm")) {
    GTEST_SKIP() << "this machine has RDMA devices; the VM harness covers the data path";
  }
  auto communicator = from_config(kRdma + R"(,"port":"0"})");
  const auto start = std::chrono::steady_clock::now();
  try {
    communicator->serve();
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rdma"), std::string::npos) << e.what();
  }
  try {
    communicator->connect(2s);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rdma"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
}

}  // namespace
}  // namespace gvirtus::testing
