// Every stub library of a process shares the one session of libgvirtus-frontend.so.1: the real
// stub libcudart.so.13 makes calls first, then the probe stub (a second stub library, probe_*.cpp)
// is loaded with dlopen, joins the live session through a core OpenPlugin call, and reaches the
// same worker. The backend lists one session for the process with both plugins. Refusals of a
// plugin on a live session (before the probe joins) name the plugin and the reason, and the
// session goes on.
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "frontend/client.h"
#include "frontend/frontend_abi.h"
#include "protocol/core_calls.h"
#include "protocol/status.h"
#include "session/probe_calls.h"
#include "support/backend_process.h"
#include "support/core_calls.h"

namespace gvirtus::testing {
namespace {

// What the application (a forked child) saw, sent to the test through a pipe.
struct Seen {
  int first_call = -1;     // cudaMemGetInfo through libcudart.so.13, before the probe loads
  int worker_status = -1;  // probe_worker_pid through the probe stub
  uint32_t worker_pid = 0;
  int unknown_status = -1;  // opening a plugin the backend does not serve
  char unknown_message[256] = {};
  int version_status = -1;  // opening the probe plugin at an interface version it lacks
  char version_message[256] = {};
  int hash_status = -1;  // ... and with another call table
  char hash_message[256] = {};
  int again_status = -1;     // opening the open probe plugin again: nothing to do
  int conflict_status = -1;  // another table under the open probe plugin's id
  char conflict_message[256] = {};
  int after_status = -1;  // a cudart call after it all
};

using WorkerPidFn = int (*)(uint32_t*, char*, size_t);
using OpenPluginFn = int (*)(const gvirtus_plugin*);
using MessageFn = const char* (*)();

// Opens a plugin identity through the frontend's C ABI, as a stub library would.
int open_plugin(void* library, const char* name, uint16_t id, uint64_t hash, uint32_t version,
                char (&message)[256]) {
  auto open = reinterpret_cast<OpenPluginFn>(::dlsym(library, "gvirtus_open_plugin"));
  auto error = reinterpret_cast<MessageFn>(::dlsym(library, "gvirtus_error_message"));
  if (open == nullptr || error == nullptr) return -1;
  const gvirtus_plugin plugin{sizeof(gvirtus_plugin), id, name, hash, version};
  const int status = open(&plugin);
  if (status != 0) std::snprintf(message, sizeof message, "%s", error());
  return status;
}

// The application: never returns.
[[noreturn]] void run_application(const std::string& config, int report, int wait_for) {
  ::setenv("GVIRTUS_CONFIG", config.c_str(), 1);
  Seen seen;
  void* cudart = ::dlopen(GVIRTUS_STUB_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  auto mem_get_info =
      cudart
          ? reinterpret_cast<cudaError_t (*)(size_t*, size_t*)>(::dlsym(cudart, "cudaMemGetInfo"))
          : nullptr;
  if (mem_get_info == nullptr) ::_exit(3);
  size_t free_bytes = 0, total_bytes = 0;
  seen.first_call = mem_get_info(&free_bytes, &total_bytes);  // the session starts here

  // Refused on the live session: a plugin the backend lacks, the probe plugin at an interface
  // version it does not speak, and with another call table. (gvirtus_open_plugin comes from
  // libgvirtus-frontend.so.1, which the stub loaded.)
  const uint64_t hash = probe::kIdentity.table_hash;
  seen.unknown_status = open_plugin(cudart, "nosuch", 101, 42, 0, seen.unknown_message);
  seen.version_status = open_plugin(cudart, "probe", probe::kPluginId, hash, probe::kVersion + 1,
                                    seen.version_message);
  seen.hash_status = open_plugin(cudart, "probe", probe::kPluginId, hash + 1, 0, seen.hash_message);

  // The second stub library joins the session the first one started.
  void* probe = ::dlopen(GVIRTUS_PROBE_STUB, RTLD_NOW | RTLD_LOCAL);
  if (probe == nullptr) ::_exit(4);
  auto worker_pid = reinterpret_cast<WorkerPidFn>(::dlsym(probe, "probe_worker_pid"));
  if (worker_pid == nullptr) ::_exit(5);
  char message[256];
  seen.worker_status = worker_pid(&seen.worker_pid, message, sizeof message);
  seen.again_status = open_plugin(cudart, "probe", probe::kPluginId, hash, 0, message);
  seen.conflict_status =
      open_plugin(cudart, "probe", probe::kPluginId, hash + 1, 0, seen.conflict_message);
  seen.after_status = mem_get_info(&free_bytes, &total_bytes);
  (void)!::write(report, &seen, sizeof seen);
  char go;
  (void)!::read(wait_for, &go, 1);  // the test has looked at the backend
  ::_exit(0);
}

TEST(SessionSharing, a_stub_loaded_after_the_first_calls_joins_the_same_session_and_worker) {
  BackendProcess backend("", R"(["cudart", "probe"])");
  int to_test[2], to_app[2];
  ASSERT_EQ(::pipe(to_test), 0);
  ASSERT_EQ(::pipe(to_app), 0);
  const pid_t app = ::fork();
  if (app == 0) run_application(backend.client_config_file(), to_test[1], to_app[0]);
  Seen seen;
  ASSERT_EQ(::read(to_test[0], &seen, sizeof seen), static_cast<ssize_t>(sizeof seen))
      << backend.log();
  // The first call reached the backend (its runtime's answer, whatever the machine has).
  EXPECT_NE(seen.first_call, cudaErrorDevicesUnavailable) << backend.log();
  ASSERT_EQ(seen.worker_status, 0) << backend.log();

  const BackendStatus status = status_of(backend);
  std::vector<SessionStatus> mine;
  for (const SessionStatus& s : status.sessions) {
    if (s.client_pid == static_cast<uint32_t>(app)) mine.push_back(s);
  }
  ASSERT_EQ(mine.size(), 1u) << "one session for the process, whatever its stubs";
  EXPECT_EQ(mine[0].plugins, "cudart,probe");
  EXPECT_EQ(mine[0].worker_pid, seen.worker_pid) << "both stubs reach the same worker";
  EXPECT_NE(backend.log().find("plugin probe joined"), std::string::npos) << backend.log();

  // Refusals name the plugin and why; the session goes on.
  EXPECT_EQ(seen.unknown_status, static_cast<int>(ErrorKind::kUnimplemented));
  EXPECT_NE(std::string(seen.unknown_message).find("\"nosuch\""), std::string::npos)
      << seen.unknown_message;
  EXPECT_NE(std::string(seen.unknown_message).find("it serves: core, cudart, probe"),
            std::string::npos)
      << seen.unknown_message;
  EXPECT_EQ(seen.version_status, static_cast<int>(ErrorKind::kUnimplemented));
  EXPECT_NE(std::string(seen.version_message).find("\"probe\""), std::string::npos);
  EXPECT_NE(std::string(seen.version_message).find("interface version 2"), std::string::npos)
      << seen.version_message;
  EXPECT_EQ(seen.hash_status, static_cast<int>(ErrorKind::kFailed));
  EXPECT_NE(std::string(seen.hash_message).find("call table hash mismatch"), std::string::npos)
      << seen.hash_message;
  EXPECT_EQ(seen.again_status, 0);
  EXPECT_EQ(seen.conflict_status, static_cast<int>(ErrorKind::kFailed));
  EXPECT_NE(std::string(seen.conflict_message).find("is open as \"probe\" with another call table"),
            std::string::npos)
      << seen.conflict_message;
  EXPECT_EQ(seen.after_status, seen.first_call) << "the session went on";

  ASSERT_EQ(::write(to_app[1], "g", 1), 1);
  int wait_status = 0;
  ::waitpid(app, &wait_status, 0);
  EXPECT_TRUE(WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0) << wait_status;
  for (int fd : {to_test[0], to_test[1], to_app[0], to_app[1]}) ::close(fd);
}

// A stub loaded before the session starts joins it in the handshake, and a forked child gets a
// session of its own with every plugin its parent had opened.
TEST(SessionSharing, a_forked_child_opens_its_parents_plugins_in_a_session_of_its_own) {
  BackendProcess backend("", R"(["cudart", "probe"])");
  ::setenv("GVIRTUS_CONFIG", backend.client_config_file().c_str(), 1);
  void* probe = ::dlopen(GVIRTUS_PROBE_STUB, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(probe, nullptr) << ::dlerror();
  auto worker_pid = reinterpret_cast<WorkerPidFn>(::dlsym(probe, "probe_worker_pid"));
  ASSERT_NE(worker_pid, nullptr);
  uint32_t parent_worker = 0;
  char message[256] = {};
  ASSERT_EQ(worker_pid(&parent_worker, message, sizeof message), 0) << message;
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const pid_t child = ::fork();
  if (child == 0) {
    uint32_t child_worker = 0;
    char child_message[256] = {};
    const int rc = worker_pid(&child_worker, child_message, sizeof child_message);
    (void)!::write(pipe_fds[1], &rc, sizeof rc);
    (void)!::write(pipe_fds[1], &child_worker, sizeof child_worker);
    ::_exit(0);
  }
  int rc = -1;
  uint32_t child_worker = 0;
  ASSERT_EQ(::read(pipe_fds[0], &rc, sizeof rc), static_cast<ssize_t>(sizeof rc));
  ASSERT_EQ(::read(pipe_fds[0], &child_worker, sizeof child_worker),
            static_cast<ssize_t>(sizeof child_worker));
  EXPECT_EQ(rc, 0);
  EXPECT_NE(child_worker, 0u);
  EXPECT_NE(child_worker, parent_worker) << "the child has a session (and worker) of its own";
  int wait_status = 0;
  ::waitpid(child, &wait_status, 0);
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
}

// In a pool of several backends the runtime stub serves the first backend only (docs/cluster.md):
// its calls go there even while the thread's route names another, which the probe stub's calls
// follow. The first backend is gone, so a runtime call that reached the second would be answered.
TEST(SessionSharing, in_a_pool_the_runtime_stub_keeps_to_the_first_backend) {
  BackendProcess first("", R"(["cudart", "probe"])");
  BackendProcess second("", R"(["cudart", "probe"])");
  const std::string config = ::testing::TempDir() + "/sharing-pool.json";
  std::ofstream(config) << pool_config_json({&first, &second});
  first.stop(SIGKILL);
  struct PoolSeen {
    int routed = -1;
    cudaError_t cudart = cudaErrorUnknown;
    int worker_status = -1;
    uint32_t worker_pid = 0;
  };
  int to_test[2], to_app[2];
  ASSERT_EQ(::pipe(to_test), 0);
  ASSERT_EQ(::pipe(to_app), 0);
  const pid_t app = ::fork();
  if (app == 0) {
    ::setenv("GVIRTUS_CONFIG", config.c_str(), 1);
    PoolSeen seen;
    void* cudart = ::dlopen(GVIRTUS_STUB_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    void* probe = ::dlopen(GVIRTUS_PROBE_STUB, RTLD_NOW | RTLD_LOCAL);
    if (cudart == nullptr || probe == nullptr) ::_exit(3);
    auto route_set = reinterpret_cast<int (*)(uint32_t)>(::dlsym(cudart, "gvirtus_route_set"));
    auto mem_get_info =
        reinterpret_cast<cudaError_t (*)(size_t*, size_t*)>(::dlsym(cudart, "cudaMemGetInfo"));
    auto worker_pid = reinterpret_cast<WorkerPidFn>(::dlsym(probe, "probe_worker_pid"));
    if (route_set == nullptr || mem_get_info == nullptr || worker_pid == nullptr) ::_exit(4);
    seen.routed = route_set(1);  // the thread's calls go to the second backend...
    size_t free_bytes = 0, total_bytes = 0;
    seen.cudart = mem_get_info(&free_bytes, &total_bytes);  // ...but the runtime's to the first
    char message[256];
    seen.worker_status = worker_pid(&seen.worker_pid, message, sizeof message);
    (void)!::write(to_test[1], &seen, sizeof seen);
    char go;
    (void)!::read(to_app[0], &go, 1);  // the session stays while the test looks at its worker
    ::_exit(0);
  }
  PoolSeen seen;
  ASSERT_EQ(::read(to_test[0], &seen, sizeof seen), static_cast<ssize_t>(sizeof seen));
  EXPECT_EQ(seen.routed, 0);
  EXPECT_EQ(seen.cudart, cudaErrorDevicesUnavailable) << "sent to the first backend, which is gone";
  EXPECT_EQ(seen.worker_status, 0);
  const auto second_workers = second.workers();
  EXPECT_NE(
      std::find(second_workers.begin(), second_workers.end(), static_cast<pid_t>(seen.worker_pid)),
      second_workers.end())
      << "the probe's call followed the route";
  EXPECT_EQ(::write(to_app[1], "g", 1), 1);
  int wait_status = 0;
  ::waitpid(app, &wait_status, 0);
  for (int fd : {to_test[0], to_test[1], to_app[0], to_app[1]}) ::close(fd);
}

}  // namespace
}  // namespace gvirtus::testing
