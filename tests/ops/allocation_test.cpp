// The cudart plugin's allocation ledger (gvirtus-smi's "Allocated" column), without a GPU: the
// generated handlers of the allocating and freeing rows ("alloc devPtr[size]", "free devPtr")
// run against a stand-in for the runtime's allocators defined below (this executable's
// definitions take the place of libcudart's), and the session's ledger must count what the
// table's byte expressions say.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <atomic>

#include "backend/services/session_services.h"
#include "plugins/cudart/backend/handlers.h"
#include "plugins/cudart/common/marshal.h"

namespace {

// What the stand-in allocators answer next.
void* g_next_address = nullptr;
size_t g_next_pitch = 0;
cudaError_t g_next_result = cudaSuccess;

}  // namespace

// The stand-in: allocations return the address and pitch the test chose; every pointer is
// device memory (the vetting of a freed pointer asks).
extern "C" {
cudaError_t cudaMalloc(void** ptr, size_t) {
  *ptr = g_next_address;
  return g_next_result;
}
cudaError_t cudaMallocAsync(void** ptr, size_t, cudaStream_t) {
  *ptr = g_next_address;
  return g_next_result;
}
cudaError_t cudaMallocPitch(void** ptr, size_t* pitch, size_t, size_t) {
  *ptr = g_next_address;
  *pitch = g_next_pitch;
  return g_next_result;
}
cudaError_t cudaMalloc3D(cudaPitchedPtr* pitched, cudaExtent extent) {
  *pitched = make_cudaPitchedPtr(g_next_address, g_next_pitch, extent.width, extent.height);
  return g_next_result;
}
cudaError_t cudaFree(void*) {
  return g_next_result;
}
cudaError_t cudaFreeAsync(void*, cudaStream_t) {
  return g_next_result;
}
cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attributes, const void*) {
  *attributes = {};
  attributes->type = cudaMemoryTypeDevice;
  return cudaSuccess;
}
}

namespace gvirtus::cudart {
namespace {

class AllocationLedger : public ::testing::Test {
 protected:
  void SetUp() override { services::session_services().reset(&published_); }
  void TearDown() override { services::session_services().reset(nullptr); }

  // Runs one generated handler with the request `encode` writes, as the stub encodes it.
  template <typename Encode>
  cudaError_t run(Fn fn, uint64_t address, cudaError_t result, Encode encode) {
    g_next_address = reinterpret_cast<void*>(address);
    g_next_result = result;
    WireWriter request, reply;
    encode(request);
    WireReader in(request.view(), "request");
    cudaError_t returned = cudaErrorUnknown;
    EXPECT_TRUE(run_generated(fn, in, reply, returned));
    return returned;
  }
  cudaError_t malloc_call(Fn fn, uint64_t address, size_t size, cudaError_t result = cudaSuccess) {
    return run(fn, address, result, [&](WireWriter& w) {
      void* none = nullptr;
      put_output(w, &none);
      put_value(w, size);
      if (fn == Fn::cudaMallocAsync) put_value(w, cudaStream_t{nullptr});
    });
  }
  cudaError_t free_call(Fn fn, uint64_t address, cudaError_t result = cudaSuccess) {
    return run(fn, 0, result, [&](WireWriter& w) {
      put_value(w, reinterpret_cast<void*>(address));
      if (fn == Fn::cudaFreeAsync) put_value(w, cudaStream_t{nullptr});
    });
  }
  uint64_t ledger_bytes() const { return services::session_services().allocations.bytes(); }

  std::atomic<uint64_t> published_{0};
};

TEST_F(AllocationLedger, counts_what_is_allocated_and_subtracts_what_is_freed) {
  malloc_call(Fn::cudaMalloc, 0x7000000, 1 << 20);
  malloc_call(Fn::cudaMallocAsync, 0x8000000, 4096);
  EXPECT_EQ(ledger_bytes(), (1u << 20) + 4096);
  EXPECT_EQ(published_.load(), (1u << 20) + 4096);
  free_call(Fn::cudaFree, 0x7000000);
  EXPECT_EQ(published_.load(), 4096u);
  free_call(Fn::cudaFree, 0x7000000);    // twice: no underflow
  free_call(Fn::cudaFreeAsync, 0x1234);  // never allocated here
  EXPECT_EQ(published_.load(), 4096u);
}

TEST_F(AllocationLedger, failed_calls_and_other_calls_change_nothing) {
  EXPECT_EQ(malloc_call(Fn::cudaMalloc, 0x7000000, 64, cudaErrorMemoryAllocation),
            cudaErrorMemoryAllocation);
  EXPECT_EQ(ledger_bytes(), 0u);
  malloc_call(Fn::cudaMalloc, 0x7000000, 64);
  EXPECT_EQ(free_call(Fn::cudaFree, 0x7000000, cudaErrorInvalidValue), cudaErrorInvalidValue);
  EXPECT_EQ(ledger_bytes(), 64u);
  free_call(Fn::cudaFree, 0);  // cudaFree(NULL)
  EXPECT_EQ(ledger_bytes(), 64u);
  // A memset of the allocation is no allocation.
  run(Fn::cudaMemset, 0, cudaSuccess, [](WireWriter& w) {
    put_value(w, reinterpret_cast<void*>(0x7000000));
    put_value(w, 0);
    put_value(w, size_t{64});
  });
  EXPECT_EQ(ledger_bytes(), 64u);
  EXPECT_EQ(published_.load(), 64u);
}

TEST_F(AllocationLedger, pitched_and_3d_allocations_count_pitch_times_rows) {
  g_next_pitch = 1024;
  run(Fn::cudaMallocPitch, 0x9000000, cudaSuccess, [](WireWriter& w) {
    void* none = nullptr;
    size_t no_pitch = 0;
    put_output(w, &none);
    put_output(w, &no_pitch);
    put_value(w, size_t{1000});  // width
    put_value(w, size_t{30});    // height
  });
  EXPECT_EQ(ledger_bytes(), 1024u * 30);

  run(Fn::cudaMalloc3D, 0xa000000, cudaSuccess, [](WireWriter& w) {
    cudaPitchedPtr empty{};
    put_output(w, &empty);
    put_value(w, make_cudaExtent(1000, 20, 5));
  });
  EXPECT_EQ(ledger_bytes(), 1024u * 30 + 1024u * 20 * 5);
  free_call(Fn::cudaFree, 0xa000000);
  EXPECT_EQ(ledger_bytes(), 1024u * 30);
}

}  // namespace
}  // namespace gvirtus::cudart
