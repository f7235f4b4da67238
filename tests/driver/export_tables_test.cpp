// The private export tables of the client libcuda.so.1 (frontend/export_tables.h) called the way
// no runtime would: bad arguments are refused with the driver's errors, never crash the program;
// unknown tables are refused; and HMAC-MD2, on which the integrity check rests, gives RFC 1319's
// digests. No backend is needed: every case here is answered by the stub before any remote call.
#include <cuda.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "plugins/cuda/frontend/integrity_check.h"

namespace gvirtus::cuda {
namespace {

CUuuid uuid(const char* hex) {
  CUuuid id{};
  for (int i = 0; i < 16; ++i) {
    unsigned byte = 0;
    std::sscanf(hex + 2 * i, "%2x", &byte);
    id.bytes[i] = static_cast<char>(byte);
  }
  return id;
}

std::string hex(const uint8_t* bytes, size_t n) {
  std::string out;
  char two[3];
  for (size_t i = 0; i < n; ++i) {
    std::snprintf(two, sizeof two, "%02x", bytes[i]);
    out += two;
  }
  return out;
}

class ExportTables : public ::testing::Test {
 protected:
  void SetUp() override {
    stub_ = ::dlopen(GVIRTUS_CUDA_STUB, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(stub_, nullptr) << ::dlerror();
    get_ = reinterpret_cast<Get>(::dlsym(stub_, "cuGetExportTable"));
    ASSERT_NE(get_, nullptr);
  }
  // The stub stays loaded: its state outlives every call (exit handlers use it).

  const void* const* table(const char* id) {
    const void* t = nullptr;
    const CUuuid u = uuid(id);
    EXPECT_EQ(get_(&t, &u), CUDA_SUCCESS) << id;
    return static_cast<const void* const*>(t);
  }

  using Get = CUresult (*)(const void**, const CUuuid*);
  void* stub_ = nullptr;
  Get get_ = nullptr;
};

constexpr const char* kCudartInterface = "6bd5fb6c5bf4e74a8987d93912fd9df9";
constexpr const char* kContextStorage = "c693336e1121df11a8c368f355d89593";
constexpr const char* kIntegrity = "d4082055bde6704b8d34ba123c66e1f2";
constexpr const char* kToolsTls = "42d85a8123f6cb478298f6e78a3aecdc";
constexpr const char* kToolsContext = "21318c60971432488ca641ff7324c8f2";
constexpr const char* kToolsModule = "6e163fbeb958444d835ce182aff1991e";

TEST_F(ExportTables, bad_arguments_and_unknown_tables_are_refused) {
  const void* t = reinterpret_cast<const void*>(1);
  const CUuuid known = uuid(kCudartInterface);
  EXPECT_EQ(get_(nullptr, &known), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(get_(&t, nullptr), CUDA_ERROR_INVALID_VALUE);
  const CUuuid unknown = uuid("00112233445566778899aabbccddeeff");
  EXPECT_EQ(get_(&t, &unknown), CUDA_ERROR_NOT_FOUND);
  EXPECT_EQ(t, nullptr);
}

TEST_F(ExportTables, cudart_interface_refuses_what_is_no_fatbinary) {
  const void* const* t = table(kCudartInterface);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t[0]), 13 * sizeof(void*)) << "its size comes first";
  using FromCubin = CUresult (*)(CUmodule*, const void*);
  using FromCubinExt = CUresult (*)(CUmodule*, const void*, void*, void*, unsigned);
  auto from_cubin = reinterpret_cast<FromCubin>(t[1]);
  auto from_cubin_ext1 = reinterpret_cast<FromCubinExt>(t[6]);
  CUmodule module = nullptr;
  const uint32_t not_a_wrapper[8] = {0x12345678, 1, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(from_cubin(nullptr, not_a_wrapper), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(from_cubin(&module, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(from_cubin(&module, not_a_wrapper), CUDA_ERROR_INVALID_IMAGE);
  EXPECT_EQ(module, nullptr);
  int unknown_meaning = 0;
  EXPECT_EQ(from_cubin_ext1(&module, not_a_wrapper, &unknown_meaning, nullptr, 0),
            CUDA_ERROR_NOT_SUPPORTED)
      << "arguments whose meaning is unknown are refused, not ignored";
  // A slot whose meaning is unknown says so instead of doing something.
  using Unknown = CUresult (*)();
  EXPECT_EQ(reinterpret_cast<Unknown>(t[3])(), CUDA_ERROR_NOT_SUPPORTED);
}

TEST_F(ExportTables, context_local_storage_refuses_bad_arguments) {
  const void* const* t = table(kContextStorage);
  ASSERT_NE(t, nullptr);
  using Put = CUresult (*)(CUcontext, void*, void*, void (*)(CUcontext, void*, void*));
  using GetValue = CUresult (*)(void**, CUcontext, void*);
  auto put = reinterpret_cast<Put>(t[0]);
  auto get = reinterpret_cast<GetValue>(t[2]);
  int key = 0;
  void* value = nullptr;
  // No current context on this thread, and none named.
  EXPECT_EQ(put(nullptr, &key, &key, nullptr), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(get(nullptr, nullptr, &key), CUDA_ERROR_INVALID_VALUE);
  const auto context = reinterpret_cast<CUcontext>(uintptr_t{0x1000});
  EXPECT_EQ(get(&value, context, &key), CUDA_ERROR_INVALID_HANDLE) << "nothing stored yet";
  EXPECT_EQ(put(context, &key, &value, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(get(&value, context, &key), CUDA_SUCCESS);
  EXPECT_EQ(value, &value);
}

TEST_F(ExportTables, tools_tables_answer_as_observed_and_refuse_bad_arguments) {
  const void* const* tls = table(kToolsTls);
  ASSERT_NE(tls, nullptr);
  using Current = CUresult (*)(CUcontext*);
  CUcontext current = reinterpret_cast<CUcontext>(uintptr_t{1});
  EXPECT_EQ(reinterpret_cast<Current>(tls[2])(nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(reinterpret_cast<Current>(tls[2])(&current), CUDA_SUCCESS);
  EXPECT_EQ(current, nullptr) << "no context is current on this thread: as cuCtxGetCurrent";
  const void* const* t = table(kToolsContext);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t[0]), 95 * sizeof(void*));
  using Number = CUresult (*)(CUcontext, unsigned long long*);
  using Object = CUresult (*)(CUcontext, uint64_t, void**);
  using Value = CUresult (*)(CUcontext, const void*, uint64_t*);
  EXPECT_EQ(reinterpret_cast<Number>(t[4])(nullptr, nullptr), CUDA_ERROR_INVALID_VALUE);
  auto object = reinterpret_cast<Object>(t[51]);
  auto value = reinterpret_cast<Value>(t[39]);
  const auto one = reinterpret_cast<CUcontext>(uintptr_t{0x1000});
  const auto other = reinterpret_cast<CUcontext>(uintptr_t{0x2000});
  void* first = nullptr;
  void* again = nullptr;
  void* second = nullptr;
  EXPECT_EQ(object(one, 0, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(object(one, UINT64_MAX, &first), CUDA_ERROR_INVALID_HANDLE);
  ASSERT_EQ(object(one, 0, &first), CUDA_SUCCESS);
  ASSERT_EQ(object(one, 0, &again), CUDA_SUCCESS);
  ASSERT_EQ(object(other, 0, &second), CUDA_SUCCESS);
  EXPECT_NE(first, nullptr);
  EXPECT_EQ(first, again) << "one object per context";
  EXPECT_NE(first, second);
  uint64_t read = 1;
  EXPECT_EQ(value(one, nullptr, &read), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(value(one, first, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(value(one, first, &read), CUDA_SUCCESS);
  EXPECT_EQ(read, 0u);
  // TOOLS_MODULE: slot 7 enumerates a module's functions through the caller's callback and
  // returns how many (cuFFT's route; the simulated device's SimulatedLibrary runs it whole); no
  // callback, nothing enumerated.
  const void* const* module_table = table(kToolsModule);
  ASSERT_NE(module_table, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(module_table[0]), 64 * sizeof(void*));
  using Enumerate = unsigned (*)(CUcontext, CUmodule, void (*)(void*, CUfunction), void*);
  EXPECT_EQ(reinterpret_cast<Enumerate>(module_table[7])(nullptr, nullptr, nullptr, nullptr), 0u);
}

TEST_F(ExportTables, the_integrity_check_refuses_a_null_result_and_answers_fixed_versions) {
  const void* const* t = table(kIntegrity);
  ASSERT_NE(t, nullptr);
  using Check = CUresult (*)(uint32_t, uint64_t, uint64_t*);
  auto check = reinterpret_cast<Check>(t[1]);
  EXPECT_EQ(check(13000, 0, nullptr), CUDA_ERROR_INVALID_VALUE);
}

TEST(IntegrityCheck, md2_gives_rfc_1319s_digests) {
  const struct {
    const char* message;
    const char* digest;
  } vectors[] = {
      {"", "8350e5a3e24c153df2275c9f80692773"},
      {"a", "32ec01ec4a6dac72c0ab96fb34c0b5d1"},
      {"abc", "da853b0d3f88d99b30283a69e6ded6bb"},
      {"message digest", "ab4f496bfb2a530b219ff33031fe06b0"},
      {"12345678901234567890123456789012345678901234567890123456789012345678901234567890",
       "d5976f79d83d3a0dc9806c3c66f3efd8"},
  };
  for (const auto& v : vectors) {
    uint8_t digest[16];
    md2({reinterpret_cast<const std::byte*>(v.message), std::strlen(v.message)}, digest);
    EXPECT_EQ(hex(digest, 16), v.digest) << v.message;
  }
}

TEST(IntegrityCheck, fixed_answers_for_versions_ending_in_0_and_1) {
  uint64_t result[2] = {};
  integrity_answer(IntegrityInputs{13000}, {}, result);
  EXPECT_EQ(result[0], 0x3341181C03CB675Cu);
  EXPECT_EQ(result[1], 0x8ED383AA1F4CD1E8u);
  integrity_answer(IntegrityInputs{12091}, {}, result);
  EXPECT_EQ(result[0], 0x1841181C03CB675Cu);
}

}  // namespace
}  // namespace gvirtus::cuda
