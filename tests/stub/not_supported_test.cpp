// An application calling a function gvirtus does not implement gets cudaErrorNotSupported and one
// warning naming it, without any backend. Each case runs in a child process that loads the stub
// with dlopen (as an application's loader would) and has its stderr captured.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <regex>
#include <string>

namespace {

constexpr int kCudaErrorNotSupported = 801;

struct ChildResult {
  int exit_code = -1;
  std::string err;  // everything the child wrote to stderr
};

// Runs `body` in a child whose stderr is a pipe, with the stub loaded and configured for a backend
// nobody listens on; `body` returns the child's exit code.
ChildResult run_with_stub(const std::function<int(void* stub)>& body) {
  const std::string config = testing::TempDir() + "/gvirtus-unreachable.json";
  std::ofstream(config) << R"({ "communicator": [ { "endpoint": { "suite": "tcp/ip",
      "protocol": "tcp", "server_address": "127.0.0.1", "port": "1" }, "plugins": [] } ] })";
  int fds[2];
  if (pipe(fds) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    dup2(fds[1], STDERR_FILENO);
    setenv("GVIRTUS_CONFIG", config.c_str(), 1);
    setenv("GVIRTUS_LOGLEVEL", "warning", 1);
    void* stub = dlopen(GVIRTUS_STUB_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (stub == nullptr) {
      fprintf(stderr, "dlopen: %s\n", dlerror());
      _exit(100);
    }
    _exit(body(stub));
  }
  close(fds[1]);
  ChildResult result;
  char buffer[4096];
  for (ssize_t n; (n = read(fds[0], buffer, sizeof buffer)) > 0;) result.err.append(buffer, n);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(StubNotSupported, stub_returns_801_and_logs_its_name_once_without_a_backend) {
  // VDPAU interop can never be remoted, so this stays unsupported.
  const auto child = run_with_stub([](void* stub) {
    using Fn = int (*)(int*, unsigned long, void*);
    auto fn = reinterpret_cast<Fn>(dlsym(stub, "cudaVDPAUGetDevice"));
    if (fn == nullptr) return 101;
    int device = -1;
    const int first = fn(&device, 0, nullptr);
    const int second = fn(&device, 0, nullptr);
    return first == kCudaErrorNotSupported && second == kCudaErrorNotSupported ? 0 : 102;
  });
  EXPECT_EQ(child.exit_code, 0) << child.err;
  EXPECT_EQ(count(child.err, "cudaVDPAUGetDevice"), 1u) << child.err;
}

TEST(StubNotSupported, stub_pointer_returning_function_returns_null) {
  // Pointer-returning unsupported exports are generated as `void* NAME()`.
  std::ifstream source(GVIRTUS_NOT_SUPPORTED_SOURCE);
  const std::string text{std::istreambuf_iterator<char>(source), {}};
  ASSERT_FALSE(text.empty()) << GVIRTUS_NOT_SUPPORTED_SOURCE;
  std::smatch m;
  if (!std::regex_search(text, m, std::regex(R"(void\* (\w+)\(\))"))) {
    GTEST_SKIP() << "every pointer-returning export of NVIDIA's runtime is implemented";
  }
  const std::string name = m[1];
  const auto child = run_with_stub([&](void* stub) {
    auto fn = reinterpret_cast<void* (*)()>(dlsym(stub, name.c_str()));
    if (fn == nullptr) return 101;
    return fn() == nullptr ? 0 : 102;
  });
  EXPECT_EQ(child.exit_code, 0) << name << ": " << child.err;
  EXPECT_EQ(count(child.err, name), 1u) << child.err;
}

}  // namespace
