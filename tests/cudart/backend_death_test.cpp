// An application that loses its backend gets a CUDA error, within a bound, and never hangs:
// the real stub libcudart.so.13, loaded with dlopen in a child process as an application's loader
// would, calls the runtime while the test kills the backend under it.
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>

#include "support/backend_process.h"

namespace gvirtus::testing {
namespace {

using Clock = std::chrono::steady_clock;

struct Outcome {
  int before = -1;        // cudaMemGetInfo's result with the backend alive
  int after = -1;         // ...and once it was killed
  int64_t after_ms = -1;  // how long that second call took
};

TEST(BackendDeath, the_application_gets_cuda_error_devices_unavailable_within_a_bound) {
  BackendProcess backend("", R"(["cudart"])");
  int to_parent[2], to_child[2];
  ASSERT_EQ(::pipe(to_parent), 0);
  ASSERT_EQ(::pipe(to_child), 0);
  const std::string config = backend.client_config_file();
  const pid_t app = ::fork();
  if (app == 0) {
    ::setenv("GVIRTUS_CONFIG", config.c_str(), 1);
    Outcome out;
    void* stub = ::dlopen(GVIRTUS_STUB_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    // A call the stub always sends (nothing about it is cached locally).
    auto mem_get_info =
        stub ? reinterpret_cast<cudaError_t (*)(size_t*, size_t*)>(::dlsym(stub, "cudaMemGetInfo"))
             : nullptr;
    if (mem_get_info == nullptr) ::_exit(3);
    size_t free_bytes = 0, total_bytes = 0;
    out.before = mem_get_info(&free_bytes, &total_bytes);
    (void)!::write(to_parent[1], &out, sizeof out);
    char go;
    (void)!::read(to_child[0], &go, 1);  // the backend is dead now
    const auto start = Clock::now();
    out.after = mem_get_info(&free_bytes, &total_bytes);
    out.after_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
    (void)!::write(to_parent[1], &out, sizeof out);
    ::_exit(0);
  }
  Outcome out;
  ASSERT_EQ(::read(to_parent[0], &out, sizeof out), static_cast<ssize_t>(sizeof out));
  // The backend's answer: cudaSuccess on a GPU, the runtime's own error without one.
  EXPECT_NE(out.before, cudaErrorDevicesUnavailable);
  backend.stop(SIGKILL);
  ASSERT_EQ(::write(to_child[1], "g", 1), 1);
  ASSERT_EQ(::read(to_parent[0], &out, sizeof out), static_cast<ssize_t>(sizeof out));
  EXPECT_EQ(out.after, cudaErrorDevicesUnavailable);
  EXPECT_LT(out.after_ms, 5000);
  int status = 0;
  ::waitpid(app, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the application died";
  for (int fd : {to_parent[0], to_parent[1], to_child[0], to_child[1]}) ::close(fd);
}

}  // namespace
}  // namespace gvirtus::testing
