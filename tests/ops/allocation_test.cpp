// The cudart plugin's allocation ledger, fed the requests and replies the stub and the generated
// handlers exchange (encoded with the same marshal helpers), without a GPU.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <atomic>

#include "plugins/cudart/backend/allocation_ledger.h"
#include "plugins/cudart/common/marshal.h"

namespace gvirtus::cudart {
namespace {

struct Exchange {
  WireWriter request;
  WireWriter reply;
  MemoryEffect effect(Fn fn) const {
    return memory_effect(fn, WireReader(request.view(), "r"), reply.view());
  }
};

Exchange malloc_exchange(uint64_t address, size_t size, cudaError_t result = cudaSuccess) {
  Exchange x;
  void* none = nullptr;
  put_output(x.request, &none);
  put_value(x.request, size);
  x.reply.put<int32_t>(result);
  void* out = reinterpret_cast<void*>(address);
  put_output(x.reply, &out);
  return x;
}

Exchange free_exchange(uint64_t address, cudaError_t result = cudaSuccess) {
  Exchange x;
  put_value(x.request, reinterpret_cast<void*>(address));
  x.reply.put<int32_t>(result);
  return x;
}

TEST(AllocationLedger, counts_what_is_allocated_and_subtracts_what_is_freed) {
  std::atomic<uint64_t> published{0};
  AllocationLedger ledger(&published);
  ledger.apply(malloc_exchange(0x7000000, 1 << 20).effect(Fn::cudaMalloc));
  ledger.apply(malloc_exchange(0x8000000, 4096).effect(Fn::cudaMallocAsync));
  EXPECT_EQ(ledger.bytes(), (1u << 20) + 4096);
  EXPECT_EQ(published.load(), (1u << 20) + 4096);
  ledger.apply(free_exchange(0x7000000).effect(Fn::cudaFree));
  EXPECT_EQ(published.load(), 4096u);
  ledger.apply(free_exchange(0x7000000).effect(Fn::cudaFree));    // twice: no underflow
  ledger.apply(free_exchange(0x1234).effect(Fn::cudaFreeAsync));  // never allocated here
  EXPECT_EQ(published.load(), 4096u);
}

TEST(AllocationLedger, failed_calls_and_other_calls_change_nothing) {
  EXPECT_EQ(malloc_exchange(0x7000000, 64, cudaErrorMemoryAllocation).effect(Fn::cudaMalloc).kind,
            MemoryEffect::kNone);
  EXPECT_EQ(free_exchange(0x7000000, cudaErrorInvalidValue).effect(Fn::cudaFree).kind,
            MemoryEffect::kNone);
  EXPECT_EQ(free_exchange(0).effect(Fn::cudaFree).kind, MemoryEffect::kNone);  // cudaFree(NULL)
  EXPECT_FALSE(affects_device_memory(Fn::cudaMemset));
  EXPECT_EQ(malloc_exchange(0x7000000, 64).effect(Fn::cudaMemset).kind, MemoryEffect::kNone);
  // A truncated reply is not counted, and does not throw.
  Exchange x = malloc_exchange(0x7000000, 64);
  WireWriter cut;
  cut.put<int32_t>(cudaSuccess);
  x.reply = std::move(cut);
  EXPECT_EQ(x.effect(Fn::cudaMalloc).kind, MemoryEffect::kNone);
}

TEST(AllocationLedger, pitched_and_3d_allocations_count_pitch_times_rows) {
  Exchange pitched;
  void* none = nullptr;
  size_t no_pitch = 0;
  put_output(pitched.request, &none);
  put_output(pitched.request, &no_pitch);
  put_value(pitched.request, size_t{1000});  // width
  put_value(pitched.request, size_t{30});    // height
  pitched.reply.put<int32_t>(cudaSuccess);
  void* address = reinterpret_cast<void*>(0x9000000);
  size_t pitch = 1024;
  put_output(pitched.reply, &address);
  put_output(pitched.reply, &pitch);
  const MemoryEffect p = pitched.effect(Fn::cudaMallocPitch);
  EXPECT_EQ(p.kind, MemoryEffect::kAllocated);
  EXPECT_EQ(p.bytes, 1024u * 30);

  Exchange cube;
  cudaPitchedPtr empty{};
  put_output(cube.request, &empty);
  put_value(cube.request, make_cudaExtent(1000, 20, 5));
  cube.reply.put<int32_t>(cudaSuccess);
  cudaPitchedPtr result = make_cudaPitchedPtr(reinterpret_cast<void*>(0xa000000), 1024, 1000, 20);
  put_output(cube.reply, &result);
  const MemoryEffect c = cube.effect(Fn::cudaMalloc3D);
  EXPECT_EQ(c.kind, MemoryEffect::kAllocated);
  EXPECT_EQ(c.address, 0xa000000u);
  EXPECT_EQ(c.bytes, 1024u * 20 * 5);
}

}  // namespace
}  // namespace gvirtus::cudart
