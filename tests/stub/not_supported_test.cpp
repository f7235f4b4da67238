// An application calling a function gvirtus does not implement gets cudaErrorNotSupported and one
// warning naming it, without any backend. Each case runs in a child process that loads the stub
// with dlopen (as an application's loader would) and has its stderr captured.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <string>

#include "stub_child.h"
#include "support/text.h"

namespace {

using gvirtus::testing::count_of;
using gvirtus::testing::run_with_stub;

constexpr int kCudaErrorNotSupported = 801;

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
  EXPECT_EQ(count_of(child.err, "cudaVDPAUGetDevice"), 1u) << child.err;
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
  EXPECT_EQ(count_of(child.err, name), 1u) << child.err;
}

}  // namespace
