// gvtest, a library of our own whose stub and backend plugin are generated whole from its header
// and descriptor (tests/genlib), remoted end to end:
//   - one application prints the same natively and remoted, over tcp and shm: its own status
//     type, three handle kinds, an array whose length is another argument, strings in and out,
//     memory of the library's, and an asynchronous call whose error comes later;
//   - the backend counts the session's allocations from the table's "alloc"/"free" annotations;
//   - hostile requests are refused as cudart's are: a handle or pointer the session does not hold
//     gets the library's own error without reaching it (the session goes on, and an
//     asynchronous call's refusal is the next last error), a malformed request ends only that
//     session.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "common/wire.h"
#include "frontend/client.h"
#include "gvtest.h"
#include "gvtest_calls.h"
#include "protocol/core_calls.h"
#include "protocol/status.h"
#include "support/backend_process.h"
#include "support/core_calls.h"
#include "support/run_command.h"

namespace gvirtus::testing {
namespace {

namespace gt = gvtest;

// A backend serving gvtest, whose plugin finds the real libgvtest.so.1 through LD_LIBRARY_PATH.
BackendOptions gvtest_backend(TestTransport transport = TestTransport::tcp) {
  BackendOptions options;
  options.plugins = R"(["gvtest"])";
  options.transport = transport;
  options.exec_prefix = {"env", loader_path_first(GVTEST_REAL_DIR)};
  return options;
}

class GeneratedLibrary : public ::testing::TestWithParam<TestTransport> {};

TEST_P(GeneratedLibrary, an_application_prints_the_same_natively_and_remoted) {
  BackendProcess backend(gvtest_backend(GetParam()));
  const RunResult native =
      run(std::string("LD_LIBRARY_PATH=") + GVTEST_REAL_DIR + " " + GVTEST_APP + " 2>&1");
  ASSERT_EQ(native.status, 0) << native.output;
  ASSERT_NE(native.output.find("all as expected"), std::string::npos) << native.output;
  const RunResult remoted = run("GVIRTUS_CONFIG=" + backend.client_config_file() +
                                " LD_LIBRARY_PATH=" + GVTEST_STUB_DIR + " " + GVTEST_APP);
  EXPECT_EQ(remoted.status, 0) << remoted.output << backend.log();
  EXPECT_EQ(remoted.output, native.output) << backend.log();
  // The figures themselves: not only equal, but right.
  EXPECT_NE(native.output.find("sum is 21\n"), std::string::npos);
  EXPECT_NE(native.output.find("3 sorted: 12 7 5 99 99 99 99 99\n"), std::string::npos);
  EXPECT_NE(native.output.find("sum is 324\n"), std::string::npos);  // 21 + 100 + 101 + 102
  EXPECT_NE(native.output.find("label is 'hello, gvirtus'\n"), std::string::npos);
  EXPECT_NE(native.output.find("truncated to 'hello'\n"), std::string::npos);
  EXPECT_NE(native.output.find("bytes 0 and 63 are 0x5a 0x5a\n"), std::string::npos);
  // The remoted run went through the backend's gvtest plugin.
  EXPECT_NE(backend.log().find("gvtest"), std::string::npos) << backend.log();
}

INSTANTIATE_TEST_SUITE_P(Transports, GeneratedLibrary,
                         ::testing::Values(TestTransport::tcp, TestTransport::shm),
                         [](const auto& info) { return std::string(to_string(info.param)); });

// The stub exports every function of gvtest.h, each remote, under its version node.
TEST(GeneratedLibraryExports, every_function_of_the_header_is_exported_remote_and_versioned) {
  std::ifstream coverage(GVTEST_COVERAGE);
  ASSERT_TRUE(coverage) << GVTEST_COVERAGE;
  std::stringstream text;
  text << coverage.rdbuf();
  EXPECT_NE(text.str().find("22 exports: 22 remote, 0 local, 0 not supported."), std::string::npos)
      << text.str();
  void* stub = ::dlopen(GVTEST_STUB, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(stub, nullptr) << ::dlerror();
  for (const char* name :
       {"gvtGetVersion",      "gvtBagCreate",    "gvtBagDestroy",    "gvtBagAdd",
        "gvtBagSum",          "gvtBagSorted",    "gvtBagPush",       "gvtGetLastError",
        "gvtPeekAtLastError", "gvtLabelCreate",  "gvtLabelDestroy",  "gvtLabelGet",
        "gvtLabelFind",       "gvtMalloc",       "gvtFree",          "gvtMemset",
        "gvtMemRead",         "gvtStreamCreate", "gvtStreamDestroy", "gvtStreamQuery"}) {
    EXPECT_NE(::dlvsym(stub, name, "GVTEST_1"), nullptr) << name;
  }
  ::dlclose(stub);
}

uint64_t allocated_by(const BackendProcess& backend, pid_t pid, std::string* plugins) {
  for (const SessionStatus& s : status_of(backend).sessions) {
    if (s.client_pid == static_cast<uint32_t>(pid)) {
      *plugins = s.plugins;
      return s.allocated_bytes;
    }
  }
  return UINT64_MAX;
}

TEST(GeneratedLibraryLedger, the_backend_counts_what_alloc_rows_allocate_and_free_rows_free) {
  BackendProcess backend(gvtest_backend());
  int to_test[2], to_app[2];
  ASSERT_EQ(::pipe(to_test), 0);
  ASSERT_EQ(::pipe(to_app), 0);
  const pid_t app = ::fork();
  if (app == 0) {
    ::setenv("GVIRTUS_CONFIG", backend.client_config_file().c_str(), 1);
    void* stub = ::dlopen(GVTEST_STUB, RTLD_NOW | RTLD_LOCAL);
    if (stub == nullptr) ::_exit(3);
    auto gvt_malloc = reinterpret_cast<decltype(&gvtMalloc)>(::dlsym(stub, "gvtMalloc"));
    auto gvt_free = reinterpret_cast<decltype(&gvtFree)>(::dlsym(stub, "gvtFree"));
    if (gvt_malloc == nullptr || gvt_free == nullptr) ::_exit(4);
    void* a = nullptr;
    void* b = nullptr;
    int rc[2] = {gvt_malloc(&a, 3, 1000), gvt_malloc(&b, 1, 4096)};
    (void)!::write(to_test[1], rc, sizeof rc);
    char go;
    (void)!::read(to_app[0], &go, 1);
    rc[0] = gvt_free(a);
    (void)!::write(to_test[1], rc, sizeof rc);
    (void)!::read(to_app[0], &go, 1);
    ::_exit(0);
  }
  int rc[2] = {-1, -1};
  ASSERT_EQ(::read(to_test[0], rc, sizeof rc), static_cast<ssize_t>(sizeof rc));
  EXPECT_EQ(rc[0], GVT_SUCCESS);
  EXPECT_EQ(rc[1], GVT_SUCCESS);
  std::string plugins;
  EXPECT_EQ(allocated_by(backend, app, &plugins), 3000u + 4096u) << backend.log();
  EXPECT_EQ(plugins, "gvtest");
  ASSERT_EQ(::write(to_app[1], "g", 1), 1);
  ASSERT_EQ(::read(to_test[0], rc, sizeof rc), static_cast<ssize_t>(sizeof rc));
  EXPECT_EQ(rc[0], GVT_SUCCESS);
  EXPECT_EQ(allocated_by(backend, app, &plugins), 4096u);
  ASSERT_EQ(::write(to_app[1], "g", 1), 1);
  int wait_status = 0;
  ::waitpid(app, &wait_status, 0);
  EXPECT_TRUE(WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0) << wait_status;
  for (int fd : {to_test[0], to_test[1], to_app[0], to_app[1]}) ::close(fd);
}

// A backend machine without the real library refuses the plugin, naming the library; the stub's
// calls answer the descriptor's "not supported" status (gvtest has none of its own: its invalid
// value), and the application's log says why.
TEST(GeneratedLibraryAbsent, the_plugin_is_refused_naming_the_library_it_runs_on) {
  BackendOptions options = gvtest_backend();
  options.exec_prefix = {"env", loader_path_first("/nonexistent")};
  BackendProcess backend(options);
  const std::string message = hello_refusal(backend, gt::kIdentity);
  EXPECT_NE(message.find("plugin \"gvtest\" cannot open a session"), std::string::npos) << message;
  EXPECT_NE(message.find("libgvtest.so.1"), std::string::npos) << message;

  const RunResult remoted = run("GVIRTUS_CONFIG=" + backend.client_config_file() +
                                " LD_LIBRARY_PATH=" + GVTEST_STUB_DIR + " " + GVTEST_APP + " 2>&1");
  EXPECT_NE(remoted.status, 0);
  EXPECT_NE(remoted.output.find("version: 1\n"), std::string::npos) << remoted.output;
  EXPECT_NE(remoted.output.find("libgvtest.so.1"), std::string::npos)
      << "the application's log names the missing library: " << remoted.output;
}

// A client that speaks the gvtest table but sends what no stub would.
class HostileGenerated : public ::testing::Test {
 protected:
  HostileGenerated() : backend_(gvtest_backend()) {}

  Client client() { return Client(backend_.client_config(), {to_ref(gt::kIdentity)}); }

  // One synchronous call; its status, or -1 with `error` set when it failed as a call.
  static int call(Client& client, gt::Fn fn, const WireWriter& request,
                  ErrorKind* error = nullptr) {
    const ByteView piece = request.view();
    int status = -1;
    try {
      client.call(gt::call_id(fn), std::span(&piece, 1), [&](WireReader& in) {
        status = in.get<int32_t>();
        (void)in.get_raw(in.remaining());
      });
    } catch (const Error& e) {
      if (error != nullptr) *error = e.kind();
    }
    return status;
  }

  // The session of `client` is over (malformed request), and a new client is served.
  void expect_session_ended_alone(Client& client) {
    EXPECT_NE(error_of([&] { ping(client); }), ErrorKind{0});
    Client fresh = this->client();
    EXPECT_TRUE(ping(fresh));
  }

  bool logged(const std::string& text) { return backend_.logged(text); }

  static WireWriter handle_request(uint64_t handle) {
    WireWriter w;
    w.put<uint64_t>(handle);
    return w;
  }

  static WireWriter sum_request(uint64_t bag) {
    WireWriter w = handle_request(bag);
    w.put<uint8_t>(1);  // sum: present, initial value 0
    w.put<int64_t>(0);
    return w;
  }

  uint64_t create_bag(Client& client) {
    WireWriter w;
    w.put<uint8_t>(1);
    w.put<uint64_t>(0);
    w.put<uint64_t>(4);  // capacity
    uint64_t bag = 0;
    const ByteView piece = w.view();
    client.call(gt::call_id(gt::Fn::gvtBagCreate), std::span(&piece, 1), [&](WireReader& in) {
      EXPECT_EQ(in.get<int32_t>(), GVT_SUCCESS);
      EXPECT_TRUE(in.get_bool());
      bag = in.get<uint64_t>();
    });
    return bag;
  }

  BackendProcess backend_;
};

TEST_F(HostileGenerated, a_made_up_handle_gets_the_librarys_error_and_the_session_goes_on) {
  Client c = client();
  // The real library would dereference it.
  EXPECT_EQ(call(c, gt::Fn::gvtBagSum, sum_request(0x5000)), GVT_ERROR_INVALID_HANDLE);
  EXPECT_EQ(call(c, gt::Fn::gvtLabelDestroy, handle_request(0x6000)), GVT_ERROR_INVALID_HANDLE);
  // A bag is not a label.
  const uint64_t bag = create_bag(c);
  EXPECT_EQ(call(c, gt::Fn::gvtLabelDestroy, handle_request(bag)), GVT_ERROR_INVALID_HANDLE);
  EXPECT_EQ(call(c, gt::Fn::gvtBagSum, sum_request(bag)), GVT_SUCCESS);
  // Destroyed once; a second destroy and a later use are refused.
  EXPECT_EQ(call(c, gt::Fn::gvtBagDestroy, handle_request(bag)), GVT_SUCCESS);
  EXPECT_EQ(call(c, gt::Fn::gvtBagDestroy, handle_request(bag)), GVT_ERROR_INVALID_HANDLE);
  EXPECT_EQ(call(c, gt::Fn::gvtBagSum, sum_request(bag)), GVT_ERROR_INVALID_HANDLE);
  EXPECT_TRUE(logged("gvtest: gvtBagSum rejected bag"));
}

TEST_F(HostileGenerated, an_async_calls_refusal_is_the_next_last_error) {
  Client c = client();
  WireWriter push = handle_request(0x5000);
  push.put<int32_t>(7);
  const ByteView piece = push.view();
  c.send_async(gt::call_id(gt::Fn::gvtBagPush), std::span(&piece, 1));
  const WireWriter none;
  EXPECT_EQ(call(c, gt::Fn::gvtPeekAtLastError, none), GVT_ERROR_INVALID_HANDLE);
  EXPECT_EQ(call(c, gt::Fn::gvtGetLastError, none), GVT_ERROR_INVALID_HANDLE);
  EXPECT_EQ(call(c, gt::Fn::gvtGetLastError, none), GVT_SUCCESS);
}

TEST_F(HostileGenerated, memory_the_session_never_allocated_is_refused_before_the_library) {
  Client c = client();
  EXPECT_EQ(call(c, gt::Fn::gvtFree, handle_request(0x7000)), GVT_ERROR_INVALID_VALUE);
  WireWriter memset_request = handle_request(0x7000);
  memset_request.put<int32_t>(0);
  memset_request.put<uint64_t>(16);
  EXPECT_EQ(call(c, gt::Fn::gvtMemset, memset_request), GVT_ERROR_INVALID_VALUE);
  EXPECT_TRUE(logged("gvtest: gvtFree rejected device pointer"));
}

TEST_F(HostileGenerated, an_array_whose_count_disagrees_with_its_length_ends_the_session) {
  Client c = client();
  const uint64_t bag = create_bag(c);
  WireWriter w = handle_request(bag);
  w.put<uint8_t>(1);
  w.put<uint64_t>(2);  // two elements...
  w.put<int32_t>(1);
  w.put<int32_t>(2);
  w.put<uint64_t>(3);  // ... but count says three
  ErrorKind error{};
  EXPECT_EQ(call(c, gt::Fn::gvtBagAdd, w, &error), -1);
  expect_session_ended_alone(c);
  EXPECT_TRUE(logged("disagrees with its count"));
}

TEST_F(HostileGenerated, an_output_array_over_the_limit_ends_the_session_unallocated) {
  Client c = client();
  const uint64_t bag = create_bag(c);
  WireWriter w = handle_request(bag);
  w.put<int32_t>(GVT_ORDER_ASCENDING);
  w.put<uint8_t>(1);
  w.put<uint64_t>(uint64_t{1} << 40);  // elements that are not there, over the limit
  EXPECT_EQ(call(c, gt::Fn::gvtBagSorted, w), -1);
  expect_session_ended_alone(c);
  EXPECT_TRUE(logged("over the limit"));
}

TEST_F(HostileGenerated, a_string_with_a_nul_inside_ends_the_session) {
  Client c = client();
  WireWriter w;
  w.put<uint8_t>(1);
  w.put<uint64_t>(0);
  w.put<uint8_t>(1);
  w.put_string(std::string("ab\0cd", 5));
  EXPECT_EQ(call(c, gt::Fn::gvtLabelCreate, w), -1);
  expect_session_ended_alone(c);
  EXPECT_TRUE(logged("holds a NUL byte"));
}

TEST_F(HostileGenerated, an_enum_value_outside_its_types_range_ends_the_session) {
  Client c = client();
  const uint64_t bag = create_bag(c);
  WireWriter w = handle_request(bag);
  w.put<uint32_t>(7);  // gvtOrder_t holds 0 and 1
  w.put<uint8_t>(0);
  w.put<uint64_t>(0);
  w.put<uint8_t>(0);
  EXPECT_EQ(call(c, gt::Fn::gvtBagSorted, w), -1);
  expect_session_ended_alone(c);
  EXPECT_TRUE(logged("outside the range of its type"));
}

}  // namespace
}  // namespace gvirtus::testing
