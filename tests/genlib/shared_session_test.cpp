// One session, two plugins: the cuda plugin on the simulated device and gvtest, whose descriptor
// names a "stream" kind as the driver's does. Through the session's registry each plugin accepts
// what the other holds, as a process using NVIDIA's runtime and driver through two gvirtus
// plugins must see the same pointers and streams on both paths:
//   - device memory the cuda plugin allocated is gvtest's to write, and the bytes gvtest wrote are
//     what the cuda plugin reads back; a range running past it, or freed, is refused by both;
//   - a stream the cuda plugin created passes gvtest's vetting; gvtest destroying it makes the
//     cuda plugin forget it; a made-up one is refused by both.
#include <cuda.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "common/call_marshal.h"
#include "common/wire.h"
#include "common/wire_record.h"
#include "cuda_calls.h"
#include "frontend/client.h"
#include "gvtest.h"
#include "gvtest_calls.h"
#include "plugins/cuda/common/driver_wire.h"
#include "support/backend_process.h"
#include "support/core_calls.h"

namespace gvirtus::testing {
namespace {

namespace cu = cuda;
namespace gt = gvtest;
namespace mr = marshal;

BackendOptions shared_backend() {
  BackendOptions options;
  options.plugins = R"(["gvtest", "cuda-simulated"])";
  options.exec_prefix = {"env", loader_path_first(GVTEST_REAL_DIR)};
  return options;
}

// A reply: its status and what follows it.
struct Reply {
  int32_t status = -1;
  std::vector<std::byte> rest;
};

class SharedSession : public ::testing::Test {
 protected:
  SharedSession()
      : backend_(shared_backend()),
        client_(backend_.client_config(), {to_ref(gt::kIdentity), to_ref(cu::kIdentity)}) {
    EXPECT_EQ(call(cu::call_id(cu::Fn::cuInit), [](WireWriter& w) { w.put<uint32_t>(0); }).status,
              CUDA_SUCCESS);
    // Device 0's primary context current, as NVIDIA's runtime leaves it before it allocates.
    CUcontext primary = nullptr;
    const Reply retained = call(cu::call_id(cu::Fn::cuDevicePrimaryCtxRetain), [&](WireWriter& w) {
      mr::put_output(w, &primary);
      mr::put_value(w, CUdevice{0});
    });
    EXPECT_EQ(retained.status, CUDA_SUCCESS);
    primary = output<CUcontext>(retained);
    EXPECT_EQ(call(cu::call_id(cu::Fn::cuCtxSetCurrent),
                   [&](WireWriter& w) { mr::put_value(w, primary); })
                  .status,
              CUDA_SUCCESS);
  }

  template <typename Encode>
  Reply call(uint32_t call_id, Encode encode) {
    WireWriter w;
    encode(w);
    const ByteView piece = w.view();
    Reply reply;
    client_.call(call_id, std::span(&piece, 1), [&](WireReader& in) {
      reply.status = in.get<int32_t>();
      const auto rest = in.get_raw(in.remaining());
      reply.rest.assign(rest.begin(), rest.end());
    });
    return reply;
  }

  // An output value after its presence byte (how generated rows return one).
  template <typename T>
  static T output(const Reply& r) {
    T value{};
    if (r.rest.size() >= 1 + sizeof value) std::memcpy(&value, r.rest.data() + 1, sizeof value);
    return value;
  }

  int32_t gvt_memset(CUdeviceptr address, int value, uint64_t bytes) {
    return call(gt::call_id(gt::Fn::gvtMemset),
                [&](WireWriter& w) {
                  w.put<uint64_t>(address);
                  w.put<int32_t>(value);
                  w.put<uint64_t>(bytes);
                })
        .status;
  }

  int32_t gvt_stream(gt::Fn fn, CUstream stream) {
    return call(gt::call_id(fn),
                [&](WireWriter& w) { w.put<uint64_t>(reinterpret_cast<uintptr_t>(stream)); })
        .status;
  }

  int32_t cu_synchronize(CUstream stream) {
    return call(cu::call_id(cu::Fn::cuStreamSynchronize),
                [&](WireWriter& w) { mr::put_value(w, stream); })
        .status;
  }

  BackendProcess backend_;
  Client client_;
};

TEST_F(SharedSession, device_memory_one_plugin_allocated_is_the_others_too) {
  CUdeviceptr dptr = 0;
  const Reply allocated = call(cu::call_id(cu::Fn::cuMemAlloc_v2), [&](WireWriter& w) {
    mr::put_output(w, &dptr);
    mr::put_value(w, size_t{256});
  });
  ASSERT_EQ(allocated.status, CUDA_SUCCESS);
  dptr = output<CUdeviceptr>(allocated);
  ASSERT_NE(dptr, 0u);
  // gvtest writes the cuda plugin's memory; the cuda plugin reads back what it wrote.
  EXPECT_EQ(gvt_memset(dptr, 0x5a, 256), GVT_SUCCESS);
  const Reply read = call(cu::call_id(cu::Fn::cuMemcpyDtoH_v2), [&](WireWriter& w) {
    put_record(w, cu::CopyRequest{dptr, 256, nullptr});
  });
  ASSERT_EQ(read.status, CUDA_SUCCESS);
  WireReader blob(read.rest, "copy");
  const auto bytes = blob.get_blob(256);
  ASSERT_EQ(bytes.size(), 256u);
  for (std::byte b : bytes) ASSERT_EQ(b, std::byte{0x5a});
  // A range running past the allocation is neither plugin's.
  EXPECT_EQ(gvt_memset(dptr + 128, 1, 256), GVT_ERROR_INVALID_VALUE);
  // Freed by its owner, it is refused by the other.
  ASSERT_EQ(call(cu::call_id(cu::Fn::cuMemFree_v2), [&](WireWriter& w) { mr::put_value(w, dptr); })
                .status,
            CUDA_SUCCESS);
  EXPECT_EQ(gvt_memset(dptr, 0, 16), GVT_ERROR_INVALID_VALUE);
  EXPECT_TRUE(backend_.logged("gvtest: gvtMemset rejected device pointer")) << backend_.log();
}

TEST_F(SharedSession, a_stream_one_plugin_created_is_the_others_to_use_and_destroy) {
  CUstream stream = nullptr;
  const Reply created = call(cu::call_id(cu::Fn::cuStreamCreate), [&](WireWriter& w) {
    mr::put_output(w, &stream);
    mr::put_value(w, 0u);
  });
  ASSERT_EQ(created.status, CUDA_SUCCESS);
  stream = output<CUstream>(created);
  ASSERT_NE(stream, nullptr);
  EXPECT_EQ(gvt_stream(gt::Fn::gvtStreamQuery, stream), GVT_SUCCESS);
  EXPECT_EQ(cu_synchronize(stream), CUDA_SUCCESS);
  // A made-up stream is neither plugin's.
  const auto made_up = reinterpret_cast<CUstream>(uintptr_t{0x9000});
  EXPECT_EQ(gvt_stream(gt::Fn::gvtStreamQuery, made_up), GVT_ERROR_INVALID_HANDLE);
  // Destroyed through gvtest: the cuda plugin forgets it, and refuses it from then on.
  EXPECT_EQ(gvt_stream(gt::Fn::gvtStreamDestroy, stream), GVT_SUCCESS);
  EXPECT_EQ(cu_synchronize(stream), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(gvt_stream(gt::Fn::gvtStreamQuery, stream), GVT_ERROR_INVALID_HANDLE);
  EXPECT_TRUE(backend_.logged("cuda: cuStreamSynchronize rejected stream")) << backend_.log();
}

}  // namespace
}  // namespace gvirtus::testing
