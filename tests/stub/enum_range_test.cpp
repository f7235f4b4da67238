// A C caller may pass any int where the runtime takes an enum. The stub answers a value outside
// the enum's range itself, as the runtime answers an unknown value, before any round trip (these
// children have no backend: a call that travelled would fail with a connection error instead), and
// never sends it: the backend takes such a value as a malformed request.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstddef>

#include "stub_child.h"

namespace {

using gvirtus::testing::run_with_stub;

constexpr int kInvalidValue = 1;             // cudaErrorInvalidValue
constexpr int kInvalidMemcpyDirection = 21;  // cudaErrorInvalidMemcpyDirection

TEST(StubEnums, values_outside_an_enums_range_are_answered_without_a_round_trip) {
  const auto child = run_with_stub([](void* stub) {
    using SetLimit = int (*)(int limit, size_t value);
    using GetAttribute = int (*)(int* value, int attribute, int device);
    using Memcpy = int (*)(void* dst, const void* src, size_t count, int kind);
    auto set_limit = reinterpret_cast<SetLimit>(dlsym(stub, "cudaDeviceSetLimit"));
    auto get_attribute = reinterpret_cast<GetAttribute>(dlsym(stub, "cudaDeviceGetAttribute"));
    auto memcpy = reinterpret_cast<Memcpy>(dlsym(stub, "cudaMemcpy"));
    if (set_limit == nullptr || get_attribute == nullptr || memcpy == nullptr) return 101;
    if (set_limit(1 << 20, 0) != kInvalidValue || set_limit(-1, 0) != kInvalidValue) return 102;
    int value = 7;
    if (get_attribute(&value, 100000, 0) != kInvalidValue || value != 7) return 103;
    char a[8] = {}, b[8] = {};
    if (memcpy(a, b, sizeof a, 1000) != kInvalidMemcpyDirection) return 104;
    // In range, the same calls travel, and fail for want of a backend.
    if (set_limit(0, 0) == kInvalidValue || set_limit(0, 0) == 0) return 105;
    return 0;
  });
  EXPECT_EQ(child.exit_code, 0) << child.err;
}

}  // namespace
