// Functions the stub answers by itself (local_calls.txt) behave as NVIDIA's runtime does without a
// device: here, with a backend nobody listens on, they still answer and log nothing. Each case runs
// in a child process that loads the stub with dlopen.
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include "stub_child.h"

namespace {

using gvirtus::testing::run_with_stub;

TEST(StubLocalCalls, cudaCreateChannelDesc_builds_the_descriptor_without_a_backend_or_an_error) {
  const auto child = run_with_stub([](void* stub) {
    using Create = cudaChannelFormatDesc (*)(int, int, int, int, cudaChannelFormatKind);
    auto create = reinterpret_cast<Create>(dlsym(stub, "cudaCreateChannelDesc"));
    if (create == nullptr) return 101;
    const cudaChannelFormatDesc d = create(8, 16, 32, 0, cudaChannelFormatKindFloat);
    if (d.x != 8 || d.y != 16 || d.z != 32 || d.w != 0 || d.f != cudaChannelFormatKindFloat) {
      return 102;
    }
    // As natively: NVIDIA's runtime accepts any widths and kinds here and checks them where the
    // descriptor is used.
    const cudaChannelFormatDesc odd = create(-1, 3, 0, 7, cudaChannelFormatKindNV12);
    if (odd.x != -1 || odd.y != 3 || odd.w != 7 || odd.f != cudaChannelFormatKindNV12) return 103;
    return 0;
  });
  EXPECT_EQ(child.exit_code, 0) << child.err;
  EXPECT_EQ(child.err.find("not supported"), std::string::npos) << child.err;
}

// cudaLaunchKernelExC refuses what it can judge alone, without a backend, as natively: no
// configuration, or attributes it says it has but does not give.
TEST(StubLocalCalls, cudaLaunchKernelExC_refuses_a_configuration_it_cannot_read_locally) {
  const auto child = run_with_stub([](void* stub) {
    using Launch = cudaError_t (*)(const cudaLaunchConfig_t*, const void*, void**);
    auto launch = reinterpret_cast<Launch>(dlsym(stub, "cudaLaunchKernelExC"));
    if (launch == nullptr) return 101;
    if (launch(nullptr, nullptr, nullptr) != cudaErrorInvalidValue) return 102;
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(1, 1, 1);
    config.blockDim = dim3(1, 1, 1);
    config.numAttrs = 2;  // and no attributes
    if (launch(&config, nullptr, nullptr) != cudaErrorInvalidValue) return 104;
    return 0;
  });
  EXPECT_EQ(child.exit_code, 0) << child.err;
  EXPECT_EQ(child.err.find("not supported"), std::string::npos) << child.err;
}

}  // namespace
