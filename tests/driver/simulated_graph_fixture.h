// The fixture of the simulated device's graph suites (simulated_graph_test.cpp: graphs built and
// shaped; simulated_graph_launch_test.cpp: graphs launched and executables changed). They link
// libgvirtus-simulated-cuda.so, so cu* here are the simulated driver's, called directly. Launch
// records are read back from the file GVIRTUS_SIMULATED_LAUNCHES names.
#pragma once

#include <cuda.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace gvirtus::testing {

// Two kernels as PTX (the simulated device reads their parameter layouts from it): scale's
// parameters lie at 0 (8 bytes), 8 and 12 (4 bytes each), 16 bytes in all.
inline constexpr char kPtx[] = R"(
.version 8.0
.target sm_90
.address_size 64

.visible .entry scale(
  .param .u64 scale_param_0,
  .param .f32 scale_param_1,
  .param .u32 scale_param_2
)
{
  ret;
}

.visible .entry touch(
  .param .u64 touch_param_0
)
{
  ret;
}
)";

// Each test: the primary context of device 0 current, the PTX loaded, two allocations of kBytes
// and an empty graph_, all given back after it; launch records go to a file of the test's own.
class SimulatedGraph : public ::testing::Test {
 protected:
  void SetUp() override {
    records_path_ = "/tmp/gvirtus-simulated-graph-" + std::to_string(getpid()) + ".jsonl";
    std::remove(records_path_.c_str());
    setenv("GVIRTUS_SIMULATED_LAUNCHES", records_path_.c_str(), 1);
    ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
    ASSERT_EQ(cuDevicePrimaryCtxRetain(&context_, 0), CUDA_SUCCESS);
    ASSERT_EQ(cuCtxSetCurrent(context_), CUDA_SUCCESS);
    ASSERT_EQ(cuModuleLoadData(&module_, kPtx), CUDA_SUCCESS);
    ASSERT_EQ(cuModuleGetFunction(&scale_, module_, "scale"), CUDA_SUCCESS);
    ASSERT_EQ(cuModuleGetFunction(&touch_, module_, "touch"), CUDA_SUCCESS);
    ASSERT_EQ(cuMemAlloc(&memory_, kBytes), CUDA_SUCCESS);
    ASSERT_EQ(cuMemAlloc(&other_, kBytes), CUDA_SUCCESS);
    ASSERT_EQ(cuGraphCreate(&graph_, 0), CUDA_SUCCESS);
  }

  void TearDown() override {
    EXPECT_EQ(cuGraphDestroy(graph_), CUDA_SUCCESS);
    EXPECT_EQ(cuMemFree(memory_), CUDA_SUCCESS);
    EXPECT_EQ(cuMemFree(other_), CUDA_SUCCESS);
    EXPECT_EQ(cuModuleUnload(module_), CUDA_SUCCESS);
    EXPECT_EQ(cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
    unsetenv("GVIRTUS_SIMULATED_LAUNCHES");
    std::remove(records_path_.c_str());
  }

  // The launch records written so far, one JSON line each.
  std::vector<std::string> records() const {
    std::vector<std::string> lines;
    std::ifstream in(records_path_);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }

  // A scale kernel node: scale(address, factor, count) on a grid of `blocks`.
  CUDA_KERNEL_NODE_PARAMS scale_params(unsigned blocks = 2) {
    CUDA_KERNEL_NODE_PARAMS p{};
    p.func = scale_;
    p.gridDimX = blocks;
    p.gridDimY = p.gridDimZ = 1;
    p.blockDimX = 64;
    p.blockDimY = p.blockDimZ = 1;
    p.kernelParams = args_;
    return p;
  }

  CUgraphNode add_scale(const std::vector<CUgraphNode>& dependencies = {}, unsigned blocks = 2) {
    const CUDA_KERNEL_NODE_PARAMS p = scale_params(blocks);
    CUgraphNode node = nullptr;
    EXPECT_EQ(cuGraphAddKernelNode(&node, graph_, dependencies.data(), dependencies.size(), &p),
              CUDA_SUCCESS);
    return node;
  }

  CUgraphNode add_empty(const std::vector<CUgraphNode>& dependencies = {}) {
    CUgraphNode node = nullptr;
    EXPECT_EQ(cuGraphAddEmptyNode(&node, graph_, dependencies.data(), dependencies.size()),
              CUDA_SUCCESS);
    return node;
  }

  CUDA_MEMSET_NODE_PARAMS memset_params(unsigned value, size_t words) const {
    CUDA_MEMSET_NODE_PARAMS m{};
    m.dst = memory_;
    m.value = value;
    m.elementSize = 4;
    m.width = words;
    m.height = 1;
    return m;
  }

  // A device-to-device copy of `bytes` from memory_ to other_.
  CUDA_MEMCPY3D copy_params(size_t bytes) const {
    CUDA_MEMCPY3D c{};
    c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    c.srcDevice = memory_;
    c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    c.dstDevice = other_;
    c.WidthInBytes = bytes;
    c.Height = 1;
    c.Depth = 1;
    return c;
  }

  std::vector<uint32_t> read(CUdeviceptr address, size_t words) const {
    std::vector<uint32_t> out(words);
    EXPECT_EQ(cuMemcpyDtoH(out.data(), address, words * 4), CUDA_SUCCESS);
    return out;
  }

  static constexpr size_t kBytes = 1024;
  std::string records_path_;
  CUcontext context_ = nullptr;
  CUmodule module_ = nullptr;
  CUfunction scale_ = nullptr, touch_ = nullptr;
  CUdeviceptr memory_ = 0, other_ = 0;
  CUgraph graph_ = nullptr;
  // scale's arguments.
  CUdeviceptr arg_address_ = 0x1122334455667788;
  float arg_factor_ = 2.5f;
  unsigned arg_count_ = 7;
  void* args_[3] = {&arg_address_, &arg_factor_, &arg_count_};
};

inline size_t count_of(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

}  // namespace gvirtus::testing
