// Driver mode on the simulated device (issue 19): programs built as nvcc builds them by default
// (NVIDIA's runtime linked in, loading only libcuda.so.1) run on gvirtus's libcuda.so.1 against a
// backend configured with the cuda-simulated plugin, and reach their kernel launches, which the
// simulated device records (GVIRTUS_SIMULATED_LAUNCHES) instead of executing. The tests assert what
// reached the backend - kernel, grid, block, shared memory, parameter bytes - never a computed
// result: nothing here is GPU evidence. Every e2e parity program and sample is run
// (data/simulated_launches.txt says what each must reach, and which driver functions it calls
// that the stub does not implement yet: any other is a regression). And against a backend without
// a GPU or simulation, each reports the same CUDA errors, output and exit status as it does
// natively without a driver.
#include <gtest/gtest.h>

#include <dlfcn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "support/backend_process.h"
#include "support/run_command.h"
#include "support/text.h"

namespace gvirtus::testing {
namespace {

struct Launch {
  std::string kernel;
  std::string grid, block;  // "[x,y,z]"
  long shared = -1;
  std::string params;  // lowercase hex
};

std::vector<Launch> recorded(const std::string& file) {
  std::vector<Launch> launches;
  std::ifstream in(file);
  const std::regex line(
      R"re(\{"simulated":true,"kernel":"([^"]*)","grid":(\[[0-9,]*\]),"block":(\[[0-9,]*\]),"shared":([0-9]+),"stream":[0-9]+,"params":"([0-9a-f]*)".*\})re");
  std::string text;
  while (std::getline(in, text)) {
    std::smatch m;
    if (std::regex_match(text, m, line)) {
      launches.push_back({m[1], m[2], m[3], std::stol(m[4]), m[5]});
    } else {
      ADD_FAILURE() << "not a launch record: " << text;
    }
  }
  return launches;
}

// The little-endian hex of a 4-byte value, as the record writes parameter bytes.
std::string hex32(uint32_t value) {
  char text[9];
  std::snprintf(text, sizeof text, "%02x%02x%02x%02x", value & 0xff, (value >> 8) & 0xff,
                (value >> 16) & 0xff, value >> 24);
  return text;
}

// What GVIRTUS_STATS counted for `call` (its table row: name, sync calls, async calls, failures,
// request bytes, ...); both -1 when the row is missing.
struct CallCount {
  long long sync = -1, async = -1, request_bytes = -1;
};
CallCount call_count(const std::string& stats, const std::string& call) {
  const size_t at = stats.find("." + call + " ");
  if (at == std::string::npos) return {};
  std::istringstream row(stats.substr(at, stats.find('\n', at) - at));
  std::string name;
  CallCount count;
  long long failures = 0;
  row >> name >> count.sync >> count.async >> failures >> count.request_bytes;
  return count;
}
long long request_bytes(const std::string& stats, const std::string& call) {
  return call_count(stats, call).request_bytes;
}

class SimulatedDriverMode : public ::testing::Test {
 protected:
  void SetUp() override {
    // One file per test process: ctest runs tests side by side.
    launches_ = dir_ + "/gvirtus-launches-" + std::to_string(::getpid()) + ".jsonl";
    ::setenv("GVIRTUS_SIMULATED_LAUNCHES", launches_.c_str(), 1);  // the backend inherits it
    // Device memory apart from the client's heap, as a GPU's is: under ASan both processes'
    // heaps lie at the same addresses, and a copy between unified addresses (cuMemcpyAsync)
    // would take a host buffer of the program's for the device memory at its address.
    ::setenv("GVIRTUS_SIMULATED_ADDRESSES", "fixed", 1);
    backend_ = std::make_unique<BackendProcess>("", R"(["cuda-simulated"])");
    ::unsetenv("GVIRTUS_SIMULATED_LAUNCHES");
    ::unsetenv("GVIRTUS_SIMULATED_ADDRESSES");
  }
  void TearDown() override { std::remove(launches_.c_str()); }

  RunResult run_program(const std::string& program) {
    return run("env " GVIRTUS_STUB_PROGRAM_ENV " GVIRTUS_CONFIG=" + backend_->client_config_file() +
               " LD_LIBRARY_PATH=" + GVIRTUS_DRIVER_STUB_DIR + " " + program + " 2>&1");
  }

  std::string dir_ = ::testing::TempDir();
  std::string launches_;
  std::unique_ptr<BackendProcess> backend_;
};

TEST_F(SimulatedDriverMode, static_saxpy_reaches_its_launch_with_its_grid_and_arguments) {
  const RunResult result = run_program(std::string(GVIRTUS_SAXPY_STATIC) + " 1024");
  const std::vector<Launch> launches = recorded(launches_);
  ASSERT_EQ(launches.size(), 1u) << result.output << backend_->log();
  const Launch& saxpy = launches[0];
  EXPECT_EQ(saxpy.kernel, "_Z5saxpyifPKfPf");
  EXPECT_EQ(saxpy.grid, "[4,1,1]") << "1024 elements in blocks of 256";
  EXPECT_EQ(saxpy.block, "[256,1,1]");
  EXPECT_EQ(saxpy.shared, 0);
  // saxpy(int n, float a, const float* x, float* y): n, a, then two device pointers.
  ASSERT_EQ(saxpy.params.size(), 2u * 24) << saxpy.params;
  EXPECT_EQ(saxpy.params.substr(0, 8), hex32(1024));
  EXPECT_EQ(saxpy.params.substr(8, 8), hex32(0x40200000)) << "2.5f";
  EXPECT_NE(saxpy.params.substr(16, 16), saxpy.params.substr(32, 16)) << "x and y differ";
  EXPECT_NE(saxpy.params.substr(16, 16), std::string(16, '0'));
  // The kernel did not run, so the program finds y unchanged: the simulated device computes
  // nothing, which the program reports as a failed check, not as a CUDA error.
  EXPECT_NE(result.output.find("FAILED"), std::string::npos) << result.output;
  EXPECT_EQ(result.output.find("cudaError"), std::string::npos) << result.output;
  EXPECT_TRUE(backend_->logged("simulated")) << backend_->log();
}

// Linear copies move data too: memory's copies every way, a 40 MiB one in three chunks each way
// (two in flight from the device: the stub reads one chunk's reply while the next is copied),
// come back as they went.
TEST_F(SimulatedDriverMode, linear_copies_in_chunks_round_trip_their_bytes) {
  const RunResult result = run_program(std::string(GVIRTUS_STATIC_DIR) + "/memory");
  for (const char* line : {"check std::memcmp(host.data(), back.data(), n) == 0 ok",
                           "check large == large_back                    ok",
                           "check std::memcmp(host.data(), async_back.data(), n) == 0 ok"}) {
    EXPECT_NE(result.output.find(line), std::string::npos) << line << "\n" << result.output;
  }
}

// The 2D copies move data, not kernels, so the simulated device shows them whole: host_memory's
// 2D section (pitched rows up, across, back down, sync and async, offsets, host to host) checks
// every row it gets back, through the stub's packing, the backend's handler and device memory.
TEST_F(SimulatedDriverMode, two_dimensional_copies_round_trip_their_rows) {
  const RunResult result = run_program(std::string(GVIRTUS_STATIC_DIR) + "/host_memory");
  const size_t begin = result.output.find("== 2D copies");
  ASSERT_NE(begin, std::string::npos) << result.output;
  const size_t end = result.output.find("\n==", begin + 1);
  const std::string section = result.output.substr(begin, end - begin);
  EXPECT_EQ(section.find("FAILED"), std::string::npos) << section;
  size_t checks = 0;
  for (size_t at = section.find("rows_match"); at != std::string::npos;
       at = section.find("rows_match", at + 1)) {
    ++checks;
  }
  EXPECT_GE(checks, 4u) << section;
  EXPECT_EQ(section.find("not supported"), std::string::npos) << section;
}

// Pointer attributes come from what the stub knows of addresses: host_memory asks them of device
// memory (and inside it), pinned and mapped host memory, and memory CUDA never saw.
TEST_F(SimulatedDriverMode, pointer_attributes_tell_device_host_and_unknown_memory_apart) {
  const RunResult result = run_program(std::string(GVIRTUS_STATIC_DIR) + "/host_memory");
  const size_t begin = result.output.find("== pointer attributes");
  ASSERT_NE(begin, std::string::npos) << result.output;
  const std::string section =
      result.output.substr(begin, result.output.find("\n==", begin + 1) - begin);
  const auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = section.find(what); at != std::string::npos; at = section.find(what, at + 1))
      ++n;
    return n;
  };
  EXPECT_EQ(count("type 2 device 0 devicePointer input hostPointer null"), 2u) << section;
  EXPECT_EQ(count("type 1 device 0 devicePointer - hostPointer input"), 2u) << section;
  // Memory the driver never saw (malloc'd, the stack) has itself as its host pointer, as on a
  // GPU (H200, driver 580); a null pointer has none.
  EXPECT_EQ(count("type 0 device -2 devicePointer - hostPointer input"), 2u) << section;
  EXPECT_EQ(count("type 0 device -2 devicePointer - hostPointer null"), 1u) << section;
  EXPECT_EQ(section.find("cudaError"), std::string::npos) << section;
}

// Virtual memory management moves data through the simulated device whole: the driver_vmm
// program's copy across the seam of two mapped allocations comes back as it went.
TEST_F(SimulatedDriverMode, virtual_memory_copies_cross_the_seam_of_two_mappings) {
  const RunResult result = run_program(std::string(GVIRTUS_STATIC_DIR) + "/library_driver_vmm");
  EXPECT_NE(result.output.find("calls: ok"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("seam: ok"), std::string::npos) << result.output;
}

// Arrays through NVIDIA's runtime on the simulated device: 2D copies to and from arrays (with
// offsets, array to array, array to device memory), 3D copies up and back (the asynchronous one
// too), a mipmapped array's level filled; the data comes back as it went, and a texture's
// resource names the array it was made over. Each texture and surface object reaches its kernel
// as the integer the driver gave: the first texture object and the first surface object are
// both 1 on the simulated device, as the driver's two spaces may make them.
TEST_F(SimulatedDriverMode, arrays_round_trip_and_texture_objects_reach_their_kernels) {
  const RunResult result =
      run_program(std::string(GVIRTUS_STATIC_DIR) + "/library_driver_textures");
  EXPECT_NE(result.output.find("calls: ok"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("round trips: ok"), std::string::npos) << result.output;
  std::vector<std::string> first_params;
  for (const Launch& l : recorded(launches_)) first_params.push_back(l.params.substr(0, 16));
  const std::vector<std::string> objects = {"0100000000000000", "0100000000000000",
                                            "0200000000000000", "0300000000000000",
                                            "0400000000000000", "0500000000000000"};
  EXPECT_EQ(first_params, objects) << result.output;
}

// A module file lies on the client's machine: the stub reads it and sends it (cuModuleLoad,
// cuLibraryLoadFromFile); a missing one is the driver's CUDA_ERROR_FILE_NOT_FOUND, and a file
// cannot be "preserved" (CUDA_ERROR_INVALID_VALUE, as cuda.h says).
TEST_F(SimulatedDriverMode, modules_load_from_the_clients_files) {
  const RunResult result =
      run_program(std::string(GVIRTUS_STATIC_DIR) + "/driver_api " + GVIRTUS_SAXPY_FATBIN);
  for (const char* shown : {
           "cuModuleLoad(&module, \"/nonexistent/saxpy.fatbin\") -> 301",
           "cuModuleLoad(&module, argv[1]) -> 0",
           "cuModuleGetFunction(&function, module, \"_Z5saxpyifPKfPf\") -> 0",
           "&preserve, nullptr, 1) -> 1",
           "nullptr, nullptr, 0) -> 0",
           "cuLibraryGetKernel(&kernel, library, \"_Z5saxpyifPKfPf\") -> 0",
           "cuKernelGetLibrary(&of_kernel, kernel) -> 0\nthe kernel's library: its own",
           "cuLibraryUnload(library) -> 0\ncuKernelGetLibrary(&of_kernel, kernel) -> 400",
           // Libraries load when first used (frontend/lazy_libraries.h): an unused one, unloaded
           // twice; a damaged one, reported when first used.
           "cuLibraryUnload(unused) -> 0\ncuLibraryUnload(unused) -> 400",
           "nullptr, nullptr, 0, nullptr, nullptr, 0) -> 0\n"
           "cuLibraryGetKernel(&kernel, damaged, \"_Z5saxpyifPKfPf\") -> 200",
           // The module's functions, enumerated (cuFFT's route to the kernels it builds).
           "enumerated: 1, same handle yes, name _Z5saxpyifPKfPf, module yes, loaded yes",
       }) {
    EXPECT_NE(result.output.find(shown), std::string::npos) << shown << "\n" << result.output;
  }
}

// A 3D copy goes up and back down as its slices' 2D copies, rows intact, and a box at a position
// of a wider host buffer into a 3D array and back lands where it came from, as it does through a
// batch of 3D copies (whose malformed operations are refused, CUDA 12.8's form saying which);
// CUDA arrays take and
// give bytes by offset (to and from host and device memory and each other); stream writes reach
// device memory; pool attributes of either width round-trip. A context of one's own
// is pushed on the thread's stack when created and popped when destroyed;
// affinity parameters (the client's memory) are refused. The occupancy search runs the caller's
// callback here and asks the backend per block size: on the simulated device's model (2048
// threads a multiprocessor, 132 of them), 1024-thread blocks fill it twice, so the grid is 264.
TEST_F(SimulatedDriverMode, contexts_of_ones_own_3d_copies_and_the_occupancy_search) {
  const RunResult result =
      run_program(std::string(GVIRTUS_STATIC_DIR) + "/driver_api " + GVIRTUS_SAXPY_FATBIN);
  for (const char* line :
       {"cuCtxCreate(&own, nullptr, 0, device) -> 0",
        "own context current: yes",
        "cuMemAlloc(&memory, 4096) -> 0",
        "cuCtxDestroy(own) -> 0",
        "primary current again: yes",
        "cuCtxCreate(&own, &params, 0, device) -> 801",
        "cuOccupancyMaxPotentialBlockSize(&grid, &block, function, shared_for, 0, 0) -> 0",
        "occupancy: grid 264 block 1024",
        "limited: grid 2112 block 128",
        "cuMemcpy3D(&copy) -> 0",
        "cuMemcpy3D(&back) -> 0",
        "3d round trip: ok",
        "2d memset of 16 bits: ok",
        "cuMemPoolCreate(&own_pool, &props) -> 0",
        "cuMemAllocFromPoolAsync(&pooled, 4096, own_pool, nullptr) -> 0",
        "own pool: read-write yes, current yes",
        "stream attribute copied: yes",
        "array round trips: ok",
        "array described: 16 x 4, format 32",
        "cuMemcpyHtoA(one, 200, texels, sizeof texels) -> 1",
        "3d array described: depth 8, channels 4",
        "3d array box: 0 wrong inside, 0 touched outside",
        "cuStreamBatchMemOp(nullptr, 4, memops, 0) -> 0",
        "batch written: 300000004",
        "cuStreamBatchMemOp(nullptr, 4, memops, 0) -> 1",
        "cuMemcpy3DBatchAsync(1, &ops[0], 0, batch3d_stream) -> 0",
        "cuMemcpy3DBatchAsync(1, &ops[1], 0, batch3d_stream) -> 0",
        "3d batch: 0 wrong",
        "(2, ops, &refused_at, 0, batch3d_stream) -> 1",
        "3d batch refused at operation 1",
        "cuMemcpy3DBatchAsync(2, ops, 1, batch3d_stream) -> 1",
        "cuArrayDestroy(cube) -> 400",
        "cuStreamSetAttribute(first, CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT, &value) -> 1",
        "cuMemPoolDestroy(own_pool) -> 0",
        "cuMemPoolDestroy(own_pool) -> 400",
        "cuMemPoolCreate(&own_pool, &props) -> 801",
        "cuCtxGetSharedMemConfig(&bank) -> 0\nbank size config 1\n"
        "cuCtxSetSharedMemConfig(CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE) -> 0\n"
        "cuFuncSetSharedMemConfig(function, CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE) -> 0",
        "CU_MULTICAST_GRANULARITY_MINIMUM) -> 801\n"
        "cuMulticastCreate(&multicast_object, &multicast) -> 801",
        "cuCtxRecordEvent(context, context_event) -> 0\ncuCtxWaitEvent(context, context_event) -> "
        "0",
        "cuCtxSetFlags(CU_CTX_SCHED_BLOCKING_SYNC) -> 0\ncuCtxGetFlags(&context_flags) -> 0\n"
        "context flags now 4",
        "the location's default pool is the device's: yes",
        "cuMemSetMemPool(&pool_location, CU_MEM_ALLOCATION_TYPE_PINNED, by_location) -> 0\n"
        "cuMemGetMemPool(&by_location, &pool_location, CU_MEM_ALLOCATION_TYPE_PINNED) -> 0\n"
        "cuMemGetMemPool(&by_location, &pool_location, CU_MEM_ALLOCATION_TYPE_PINNED) -> 801"}) {
    EXPECT_NE(result.output.find(line), std::string::npos) << line << "\n" << result.output;
  }
}

// Batches of copies (cuMemcpyBatchAsync, CUDA 13's form and 12.8's) run as the copies they are:
// both batches' bytes come back; 12.8's form says which copy failed, and none when none did; the
// batches the driver refuses are refused (CUDA_ERROR_INVALID_VALUE) before any copy is made.
TEST_F(SimulatedDriverMode, batches_of_copies_round_trip_and_malformed_ones_are_refused) {
  const RunResult result =
      run_program(std::string(GVIRTUS_STATIC_DIR) + "/driver_api " + GVIRTUS_SAXPY_FATBIN);
  for (const char* line :
       {"cuMemcpyBatchAsync(up_dsts, up_srcs, sizes, 2, attributes, attribute_starts, 1, "
        "batch_stream) -> 0",
        "cuMemcpyBatchAsync(across_dsts, across_srcs, sizes, 2, attributes, attribute_starts, 2, "
        "batch_stream) -> 0",
        "batch round trips: ok", "CU_GET_PROC_ADDRESS_DEFAULT, &found) -> 0",
        "legacy batch: fail index none", "&fail_index, batch_stream) -> 1",
        "legacy batch failed at copy 1", "late_start, 1, batch_stream) -> 1",
        "cuMemcpyBatchAsync(up_dsts, up_srcs, sizes, 2, &odd, attribute_starts, 1, batch_stream) "
        "-> 1\ncuMemcpyBatchAsync(up_dsts, up_srcs, sizes, 2, &odd, attribute_starts, 1, "
        "batch_stream) -> 1",
        "attribute_starts, 1, nullptr) -> 1",
        "sizes, 0, attributes, attribute_starts, 1, batch_stream) -> 1",
        "cuStreamDestroy(batch_stream) -> 0"}) {
    EXPECT_NE(result.output.find(line), std::string::npos) << line << "\n" << result.output;
  }
}

// A captured graph's root (one: a capture on one stream is a chain), a clone with both of its
// nodes, an executable graph's flags as instantiated; graphs the session does not hold refused.
// Instantiation with parameters (an upload stream not the session's refused before the driver),
// an update from the clone, and the DOT description written at the client's path (a path that
// cannot be written: CUDA_ERROR_OPERATING_SYSTEM).
// Tensor maps encoded by the backend over the session's device memory and their address replaced;
// one over host memory, of rank 0 or of an unknown data type refused before the driver. Device
// queries of CUDA 12 and 13 answered, execution affinity too, and a flush of GPUDirect RDMA
// writes done.
TEST_F(SimulatedDriverMode, graph_queries_tensor_maps_and_device_queries_reach_the_driver) {
  const RunResult result =
      run_program(std::string(GVIRTUS_STATIC_DIR) + "/driver_api " + GVIRTUS_SAXPY_FATBIN);
  for (const char* line :
       {"cuStreamEndCapture(capture_stream, &captured) -> 0",
        "cuGraphGetRootNodes(captured, nullptr, &roots) -> 0",
        "cuGraphGetRootNodes(captured, root, &root_capacity) -> 0",
        "cuGraphClone(&cloned, captured) -> 0",
        "graph: 1 root, 1 written, second slot null; clone of 2 nodes",
        "instantiated with flags 1",
        "cuStreamBeginCapture(legacy_stream) -> 0",
        "cuStreamEndCapture(legacy_stream, &legacy_graph) -> 0",
        "cuStreamGetCtx_v2(legacy_stream, &stream_context, &green) -> 0",
        "stream context: the primary, green context: none",
        "cuEventElapsedTime(&elapsed, start, end) -> 0",
        "cuEventDestroy(end) -> 0",
        "cuCtxPushCurrent(context) -> 0",
        "popped the pushed context: yes",
        "cuStreamDestroy(legacy_stream) -> 0",
        "cuGraphInstantiateWithParams(&from_params, captured, &with_params) -> 0",
        "instantiated with parameters: result 0",
        "cuGraphExecUpdate(from_params, cloned, &update) -> 0",
        "update result 0",
        "cuGraphDebugDotPrint(captured, dot_path, CU_GRAPH_DEBUG_DOT_FLAGS_VERBOSE) -> 0",
        "dot file: digraph",
        "cuGraphDebugDotPrint(captured, \"/nonexistent/graph.dot\", 0) -> 304",
        "cuGraphExecDestroy(from_params) -> 0",
        "cuGraphDestroy(captured) -> 0",
        "cuTensorMapReplaceAddress(&tile, reinterpret_cast<void*>(ys)) -> 0",
        "tensor map: encoded yes, replaced address changed it",
        "CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, host_tile, dims, row_stride, tile_box, unit, "
        "CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, "
        "CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) -> 1",
        "CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 0, reinterpret_cast<void*>(xs), dims, row_stride, "
        "tile_box, "
        "unit, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, "
        "CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) -> 1",
        "static_cast<CUtensorMapDataType>(99), 2, reinterpret_cast<void*>(xs), dims, row_stride, "
        "tile_box, unit, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, "
        "CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) -> 1",
        "lower, upper, 8, 64, ones, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, "
        "CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) -> 0",
        "CU_TENSOR_MAP_IM2COL_WIDE_MODE_W, CU_TENSOR_MAP_SWIZZLE_128B, "
        "CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) -> 0",
        "cuDeviceGetTexture1DLinearMaxWidth(&linear_width, CU_AD_FORMAT_FLOAT, 4, device) -> 0",
        "1d linear texture: wide",
        "cuDeviceGetHostAtomicCapabilities(capabilities, operations, 2, device) -> 0",
        "host atomics answered: yes",
        "cuDeviceGetP2PAtomicCapabilities(capabilities, operations, 2, device, device) -> 101",
        "cuDeviceGraphMemTrim(device) -> 0",
        "cuDeviceGetExecAffinitySupport(&affinity_supported, CU_EXEC_AFFINITY_TYPE_SM_COUNT, "
        "device) -> 0",
        "cuCtxGetExecAffinity(&sm_affinity, CU_EXEC_AFFINITY_TYPE_SM_COUNT) -> 0",
        "sm count answered: yes",
        "cuFlushGPUDirectRDMAWrites(CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX, "
        "CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER) -> 0"}) {
    EXPECT_NE(result.output.find(line), std::string::npos) << line << "\n" << result.output;
  }
}

// Graphs built node by node through the driver's own forms (driver_graph_nodes.cu): the generic
// add with edge data, the legacy forms found by version as a runtime finds them, a kernel node's
// grid changed in the executable graph only (and brought back by an update from the graph), a
// copy node from the program's pageable memory (a copy node to the program, staged through the
// backend), a host node without a function refused (no node made), a child node's graph that
// cannot be destroyed by itself, and batch memory operation nodes (a write and a wait done at each
// launch, read back, changed in the executable graph), and a copy node named by unified addresses
// (read back so, and new parameters changing its memory types refused as the driver refuses
// them), copies between arrays and the program's memory captured (one node each, copying at each
// launch), and a copy node between the program's memory. What gvirtus refuses where a driver does
// not look (a word outside the program's memory, a destroyed graph's node) is
// hostile_graph_nodes_test.cpp's, so that the program's output stays the native one. Each launch
// of the graph records its kernels.
TEST_F(SimulatedDriverMode, graphs_built_node_by_node_through_the_driver_api) {
  const RunResult result =
      run_program(std::string(GVIRTUS_STATIC_DIR) + "/driver_graph_nodes " + GVIRTUS_SAXPY_FATBIN);
  for (const char* line :
       {"cuGraphAddNode(&memset_node, graph, nullptr, nullptr, 0, &memset_params) -> 0",
        "cuGraphAddNode(&kernel_node, graph, &memset_node, &edge, 1, &kernel_params) -> 0",
        "edges after the generic adds: 1",
        "add_kernel_v1(&second, graph, &kernel_node, 1, &v1) -> 0",
        "legacy read back: grid 8, block 128, n 1024, a 0.5, same function yes",
        "legacy edges: 2, 1 into the second kernel",
        "cuGraphAddMemcpyNode(&staged, graph, nullptr, 0, &copy, nullptr) -> 0",
        "staged node: type 1, from the vector yes",
        "cuGraphDestroyNode(staged) -> 0",
        "cuGraphAddHostNode(&refused, graph, nullptr, 0, &host) -> 1",
        "refused node: none",
        "instantiate_v1(&exec, graph, &error_node, log, sizeof log) -> 0",
        "instantiated: error node none, log \"\"",
        "cuGraphExecKernelNodeSetParams(exec, kernel_node, &wider) -> 0",
        "update_v1(exec, graph, &update_error, &update_result) -> 0",
        "updated: result 0, error node none",
        "cuGraphChildGraphNodeGetGraph(child_node, &owned) -> 0",
        "cuGraphDestroy(owned) -> 1",
        "cuGraphDestroy(child) -> 0",
        "cuGraphDestroy(graph) -> 0",
        "cuGraphAddBatchMemOpNode(&ops_node, ops_graph, nullptr, 0, &batch) -> 0",
        "batch read back: 2 operations, write 0x77, wait 0x77",
        "word after the batch: 0x77",
        "cuGraphExecBatchMemOpNodeSetParams(ops_exec, ops_node, &batch) -> 0",
        "word after the executable's batch: 0x99",
        "cuGraphAddMemcpyNode(&unified_node, unified_graph, nullptr, 0, &unified, context) -> 0",
        "unified node read back: unified both",
        "cuGraphExecMemcpyNodeSetParams(unified_exec, unified_node, &typed, context) -> 1",
        "cuMemcpyHtoAAsync(line, 0, line_in.data(), 1024, stream) -> 0",
        "cuMemcpy3DAsync(&plane_down, stream) -> 0",
        "captured array copies: 4 nodes, nothing copied at capture yes",
        "captured array copies at each launch: right",
        "host copy node: type 1, copied before launch no",
        "host copy node after launch: copied",
        "cuGraphExecMemcpyNodeSetParams(unified_exec, unified_node, &unified, context) -> 0"}) {
    EXPECT_NE(result.output.find(line), std::string::npos) << line << "\n" << result.output;
  }
  EXPECT_EQ(result.status, 0) << result.output;
  // Two launches: the first kernel at its grid, then at the executable graph's wider one; the
  // legacy kernel node in both.
  std::vector<std::string> shapes;
  for (const Launch& l : recorded(launches_)) shapes.push_back(l.grid + " " + l.block);
  EXPECT_EQ(shapes, (std::vector<std::string>{"[4,1,1] [256,1,1]", "[8,1,1] [128,1,1]",
                                              "[16,1,1] [64,1,1]", "[8,1,1] [128,1,1]"}));
}

// Mapped page-locked host memory: over shm the block lies in the memory the backend maps too, so
// its device pointer reaches the very pages the program writes, both ways; over tcp there is none.
TEST(SimulatedHostMemory, a_mapped_block_over_shm_is_the_same_pages_on_both_sides) {
  BackendOptions options;
  options.plugins = R"(["cuda-simulated"])";
  options.transport = TestTransport::shm;
  BackendProcess backend(options);
  const RunResult result =
      run("env " GVIRTUS_STUB_PROGRAM_ENV " GVIRTUS_CONFIG=" + backend.client_config_file() +
          " LD_LIBRARY_PATH=" + GVIRTUS_DRIVER_STUB_DIR + " " + GVIRTUS_STATIC_DIR +
          "/host_mapped 2>&1");
  for (const char* line :
       {"cuMemHostAlloc(&host, bytes, CU_MEMHOSTALLOC_DEVICEMAP) -> 0",
        "cuMemHostGetDevicePointer -> 0", "the attribute is the device pointer: yes",
        "the device reads what the host wrote: yes", "the host sees what the device wrote: yes",
        "a synchronous round trip through page-locked memory: intact",
        "an asynchronous round trip at offsets: intact", "cuMemFreeHost(host) -> 0"}) {
    EXPECT_NE(result.output.find(line), std::string::npos) << line << "\n" << result.output;
  }
  EXPECT_EQ(result.status, 0) << result.output;
}

// `program` (a program of static/ and its arguments) run through gvirtus's libcuda.so.1, with
// GVIRTUS_STATS on, against a backend of its own on the simulated device over `transport`.
RunResult run_with_stats(TestTransport transport, const std::string& program) {
  BackendOptions options;
  options.plugins = R"(["cuda-simulated"])";
  options.transport = transport;
  BackendProcess backend(options);
  return run("env " GVIRTUS_STUB_PROGRAM_ENV " GVIRTUS_STATS=1 GVIRTUS_CONFIG=" +
             backend.client_config_file() + " LD_LIBRARY_PATH=" + GVIRTUS_DRIVER_STUB_DIR + " " +
             GVIRTUS_STATIC_DIR + "/" + program + " 2>&1");
}

// The bytes GVIRTUS_STATS's work table says were moved for `what` ("managed memory fetched");
// -1 when the row is missing.
long long work_bytes(const std::string& stats, const std::string& what) {
  const size_t at = stats.find(what + " ");
  if (at == std::string::npos) return -1;
  std::istringstream row(stats.substr(at + what.size(), stats.find('\n', at) - at));
  long long count = 0, bytes = -1;
  row >> count >> bytes;
  return bytes;
}

// Managed memory (driver_managed_memory.cu), over tcp and shm: 64 MiB that the host writes whole
// and the device (the backend's copies and memsets) reads and writes whole, four rounds, every word
// right on either side; and exactly what was touched travels, in 64 KiB chunks: each round flushes
// the 64 MiB the host wrote and fetches the 64 MiB it read back, the first round's writes fetch the
// region once more (a write to a chunk never read fetches it first), and the partial read of 1 MiB
// fetches 1 MiB and at most one readahead run more.
TEST(SimulatedManagedMemory,
     host_and_device_writes_reach_each_other_and_only_what_is_touched_moves) {
  constexpr long long kMiB = 1 << 20;
  for (const TestTransport transport : {TestTransport::tcp, TestTransport::shm}) {
    const RunResult result = run_with_stats(transport, "driver_managed_memory 4");
    for (const char* line :
         {"cuMemAllocManaged(&managed, kBytes, CU_MEM_ATTACH_GLOBAL) -> 0", "managed: yes",
          "cuMemAdvise(managed, kBytes, CU_MEM_ADVISE_SET_READ_MOSTLY, on_device) -> 0",
          "cuMemPrefetchAsync(managed, kBytes, on_device, 0, stream) -> 0",
          // Beyond the allocation: refused at once, as a GPU's driver does (seen on an H200).
          "cuMemPrefetchAsync(managed + kBytes, 4096, on_device, 0, stream) -> 1\n"
          "cuStreamSynchronize(stream) -> 0",
          "read mostly 1, last prefetched to device 0",
          // Beyond the allocation: the driver's refusal, from the backend.
          "CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, managed + kBytes, 4096) -> 1",
          "cuStreamAttachMemAsync(stream, managed, 0, CU_MEM_ATTACH_GLOBAL) -> 0\n"
          "cuStreamSynchronize(stream) -> 0",
          "rounds: 4, host writes wrong on the device: 0, device writes wrong on the host: 0",
          "partial read wrong: 0", "cuMemFree(managed) -> 0"}) {
      EXPECT_NE(result.output.find(line), std::string::npos) << line << "\n" << result.output;
    }
    EXPECT_EQ(result.status, 0) << result.output;
    EXPECT_EQ(work_bytes(result.output, "managed memory flushed"), 4 * 64 * kMiB) << result.output;
    // Reading in order fetches ever larger runs: the partial read may fetch one run (at most
    // 2 MiB) past its last byte; every whole scan fetches exactly the region.
    const long long fetched = work_bytes(result.output, "managed memory fetched");
    EXPECT_GE(fetched, (1 + 4) * 64 * kMiB + kMiB) << result.output;
    EXPECT_LE(fetched, (1 + 4) * 64 * kMiB + kMiB + 2 * kMiB) << result.output;
  }
}

// What the stub answers without the backend once it knows (frontend/context_answers.h): each
// answer once while it holds, asked again after what changes it, and right
// (driver_context_answers.cu).
TEST(SimulatedContextAnswers, are_asked_once_and_again_after_what_changes_them) {
  const RunResult result =
      run_with_stats(TestTransport::shm, "driver_context_answers " GVIRTUS_SAXPY_FATBIN);
  ASSERT_EQ(result.status, 0) << result.output;
  for (const char* line :
       {"context id the same each time: yes", "kernel's function the same each time: yes",
        "occupancy the same each time: yes",
        // Before and after the new flags (CU_CTX_SCHED_BLOCKING_SYNC is 4), then reset.
        "primary state -> 0: flags 0 active 1\nprimary state -> 0: flags 0 active 1\n",
        "primary state -> 0: flags 4 active 1\nprimary state -> 0: flags 4 active 1\n",
        // The simulated device's reset clears the flags too: the answer is not the kept one.
        "cuDevicePrimaryCtxReset(device) -> 0\nprimary state -> 0: flags 0 active 0\n"
        "primary state -> 0: flags 0 active 0"}) {
    EXPECT_NE(result.output.find(line), std::string::npos) << line << "\n" << result.output;
  }
  // The first state, once after another stub's reported change, once after the new flags, twice
  // after the reset (inactive: never kept).
  EXPECT_EQ(call_count(result.output, "cuDevicePrimaryCtxGetState").sync, 5) << result.output;
  EXPECT_EQ(call_count(result.output, "cuCtxGetId").sync, 1) << result.output;
  EXPECT_EQ(call_count(result.output, "cuKernelGetFunction").sync, 1) << result.output;
  // The context made current once; set again as it is, never sent.
  EXPECT_EQ(count_of(result.output, "cuCtxSetCurrent(context) -> 0"), 4u) << result.output;
  EXPECT_EQ(call_count(result.output, "cuCtxSetCurrent").sync, 1) << result.output;
  // The attribute asked once (then known from the set); of three sets, the one of a new value.
  EXPECT_NE(result.output.find("attribute the same each time: yes"), std::string::npos);
  EXPECT_NE(result.output.find("attribute after the set: 1024"), std::string::npos);
  EXPECT_EQ(call_count(result.output, "cuKernelGetAttribute").sync, 1) << result.output;
  EXPECT_EQ(call_count(result.output, "cuKernelSetAttribute").sync, 1) << result.output;
  // Once, then again after the new attribute (the form without flags asks as the one with).
  EXPECT_EQ(call_count(result.output, "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags").sync,
            2)
      << result.output;
}

// The driver across fork() (driver_fork.cu), as a native driver behaves: a child forked before
// cuInit starts afresh in a session of its own; in a child forked after it, cuInit and every call
// answer CUDA_ERROR_NOT_INITIALIZED (3), NVIDIA's runtime there fails too, and nothing is sent;
// the parent's memory and session outlive both children.
TEST(SimulatedForkedChild, is_refused_after_init_and_starts_afresh_before_it) {
  for (const TestTransport transport : {TestTransport::tcp, TestTransport::shm}) {
    const RunResult result = run_with_stats(transport, "driver_fork");
    ASSERT_EQ(result.status, 0) << result.output;
    for (const char* line :
         {"child before init: its memory right: yes", "child before init exited 0",
          "cuInit(0) -> 3\ncuDeviceGetCount(&count) -> 3\ncuDeviceGet(&device, 0) -> 3\n"
          "cuCtxGetCurrent(&context) -> 3\ncuMemAlloc(&memory, 4096) -> 3\n"
          "cuMemsetD32(parents, 0, kWords) -> 3\ncuCtxSynchronize() -> 3\n"
          "cuDriverGetVersion(&version) -> 0\n",
          "the runtime's cudaMalloc -> 3 (refused: yes)", "child after init exited 0",
          "parent's memory untouched by the children: yes", "parent's session goes on: yes"}) {
      EXPECT_NE(result.output.find(line), std::string::npos) << line << "\n" << result.output;
    }
    // The child after init printed its statistics as it exited, before the parent's line: it
    // sent nothing at all.
    const size_t refused = result.output.find("the runtime's cudaMalloc");
    const size_t exited = result.output.find("child after init exited");
    ASSERT_NE(refused, std::string::npos);
    ASSERT_NE(exited, std::string::npos);
    const std::string child_stats = result.output.substr(refused, exited - refused);
    EXPECT_NE(child_stats.find("gvirtus call stats"), std::string::npos) << child_stats;
    const size_t total = child_stats.find("\ntotal ");
    ASSERT_NE(total, std::string::npos) << child_stats;
    std::istringstream row(child_stats.substr(total + 7));
    long long sync = -1, async = -1;
    row >> sync >> async;
    EXPECT_EQ(sync, 0) << child_stats;
    EXPECT_EQ(async, 0) << child_stats;
  }
}

// Batches of managed prefetches and discards through the driver's own forms
// (driver_managed_batches.cu): prefetched ranges report their locations, malformed batches are
// refused at once, and after a discard the host reads the device's bytes, not its own copy.
TEST(SimulatedManagedBatches, prefetch_refuse_and_discard_as_the_driver) {
  const RunResult result = run_with_stats(TestTransport::shm, "driver_managed_batches");
  ASSERT_EQ(result.status, 0) << result.output;
  for (const char* line :
       {"cuMemPrefetchBatchAsync(ranges, sizes, 3, locations, firsts, 2, 0, stream) -> 0",
        // The regions' last prefetches: a's to the device, b's last range to the host (-1).
        "last prefetch: a 0, b -1, b's second half -1", "host bytes kept through the prefetch: yes",
        "cuMemPrefetchBatchAsync(not_managed, sizes, 1, locations, firsts, 1, 0, stream) -> 1",
        "cuMemDiscardBatchAsync(past, past_sizes, 1, 0, stream) -> 1",
        "cuMemDiscardBatchAsync(ranges, sizes, 1, 1, stream) -> 1",
        "cuMemPrefetchBatchAsync(ranges, sizes, 3, locations, from_one, 2, 0, stream) -> 1",
        // Indexes that do not rise are taken (as a GPU takes them: H200, driver 580).
        "cuMemPrefetchBatchAsync(ranges, sizes, 3, locations, not_rising, 2, 0, stream) -> 0",
        "cuMemPrefetchBatchAsync(ranges, sizes, 3, locations, firsts, 0, 0, stream) -> 1",
        "host bytes kept through the refusals: yes",
        "after the discard the host reads the device's bytes: yes",
        "discard and prefetch: discarded half read as the device's yes, other half kept yes, "
        "last prefetch 0"}) {
    EXPECT_NE(result.output.find(line), std::string::npos) << line << "\n" << result.output;
  }
  // The refusals were the stub's: only the four good batches reached the backend, sent ahead.
  for (const auto& [call, sent] :
       {std::pair{"cuMemPrefetchBatchAsync", 2}, std::pair{"cuMemDiscardBatchAsync", 1},
        std::pair{"cuMemDiscardAndPrefetchBatchAsync", 1}}) {
    EXPECT_EQ(call_count(result.output, call).sync, 0) << call << "\n" << result.output;
    EXPECT_EQ(call_count(result.output, call).async, sent) << call << "\n" << result.output;
  }
}

// Green contexts (driver_green.cu), over tcp and shm: device 0's 132 SMs split into groups of
// 16 (12 asked for, rounded up to the granularity of 8), one group provisioned as a green context
// whose context is current with its device and its 16 SMs, memory set on its own stream, its
// events; a resource of no type, a split larger than the device, unknown flags, a green context
// without its default stream and a blocking stream of it refused as the driver refuses them; and
// destroyed, it is refused.
TEST(SimulatedGreenContexts, split_provision_and_use_a_devices_sms) {
  for (const TestTransport transport : {TestTransport::tcp, TestTransport::shm}) {
    const RunResult result = run_with_stats(transport, "driver_green");
    ASSERT_EQ(result.status, 0) << result.output;
    for (const char* line :
         {"device SMs: 132, smallest group 8, alignment 8",
          "cuDeviceGetDevResource(device, &bad_type, CU_DEV_RESOURCE_TYPE_INVALID) -> 914",
          "groups of 16 possible: 8", "made 2 groups of 16 and 16 SMs, 100 left",
          "cuDevSmResourceSplitByCount(split, &too_many, &whole, nullptr, 0, 1000) -> 915",
          "cuDevSmResourceSplitByCount(split, &too_many, &whole, nullptr, 0x80, 8) -> 1",
          "cuGreenCtxCreate(&green, desc, device, 0) -> 1",
          "cuGreenCtxCreate(&green, desc, device, CU_GREEN_CTX_DEFAULT_STREAM) -> 0",
          "green context id: given", "green context SMs: 16", "cuCtxSetCurrent(context) -> 0",
          "its device: 0", "its context's SMs: 16", "cuMemAlloc(&memory, 1 << 20) -> 0",
          "cuGreenCtxStreamCreate(&stream, green, 0, 0) -> 1",
          "cuGreenCtxStreamCreate(&stream, green, CU_STREAM_NON_BLOCKING, 0) -> 0",
          "the stream's green context: it", "the stream's context: its",
          "both of the stream's contexts: the primary context, the green context",
          "cuGreenCtxRecordEvent(green, event) -> 0", "cuGreenCtxWaitEvent(green, event) -> 0",
          "set on its stream: 7", "cuGreenCtxDestroy(green) -> 0",
          // Gone from the session: refused before the driver.
          "cuGreenCtxGetId(green, &id) -> 400", "cuGreenCtxDestroy(green) -> 400"}) {
      EXPECT_NE(result.output.find(line), std::string::npos)
          << to_string(transport) << ": " << line << "\n"
          << result.output;
    }
  }
}

// A client thread's context goes along when its calls move from the backend's reading thread to
// an executor (the first host function) and stays its own beside another thread's, and what one
// thread sent ahead runs before what another thread does after it
// (driver_thread_moves.cu; the simulated device refuses allocations, memory queries and new
// streams on a thread with no current context, as a driver does).
TEST(SimulatedThreadMoves, a_threads_context_follows_its_calls_to_another_backend_thread) {
  for (const TestTransport transport : {TestTransport::tcp, TestTransport::shm}) {
    const RunResult result = run_with_stats(transport, "driver_thread_moves");
    ASSERT_EQ(result.status, 0) << result.output;
    EXPECT_EQ(count_of(result.output, "cuMemAlloc(&after, 4096) -> 0"), 1u) << result.output;
    EXPECT_EQ(count_of(result.output, "cuMemGetInfo(&free_bytes, &total_bytes) -> 0"), 1u);
    EXPECT_EQ(count_of(result.output, "cuStreamCreate(&second, 0) -> 0"), 1u);
    EXPECT_EQ(count_of(result.output, "cuMemAlloc(&last, 4096) -> 0"), 1u);
    // The new thread: none current, then its own.
    EXPECT_EQ(count_of(result.output, "cuMemAlloc(&memory, 4096) -> 201"), 1u) << result.output;
    EXPECT_EQ(count_of(result.output, "cuMemAlloc(&memory, 4096) -> 0"), 2u) << result.output;
    for (const char* line : {"host function ran: 1", "still current: yes",
                             "2000 sets sent ahead -> 0", "the other thread read: 2000",
                             "cuMemFree(before) -> 0", "cuStreamDestroy(stream) -> 0"}) {
      EXPECT_NE(result.output.find(line), std::string::npos)
          << to_string(transport) << ": " << line << "\n"
          << result.output;
    }
    EXPECT_EQ(count_of(result.output, "-> 201"), 1u)
        << "the only refusal is the new thread's first allocation:\n"
        << result.output;
  }
}

// Shareable handles between two processes, each its own session (driver_shareable.cu), over tcp
// and shm: a physical allocation exported as a POSIX descriptor, passed over a unix socket and
// mapped by the importer, each side reading the other's bytes (the simulated device shares the
// pages between its sessions, as a GPU does between processes); a pool and a pointer of it
// imported, the pointer device memory of the importer's session to its last byte and no further;
// a Windows type, a pool without handle types and a descriptor gvirtus did not make refused.
TEST(SimulatedShareableHandles, pass_between_sessions_as_descriptors_of_the_clients_machine) {
  for (const TestTransport transport : {TestTransport::tcp, TestTransport::shm}) {
    const RunResult result = run_with_stats(transport, "driver_shareable");
    ASSERT_EQ(result.status, 0) << result.output;
    for (const char* line :
         {"cuMemExportToShareableHandle(&physical_fd, handle, "
          "CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) -> 0",
          "cuMemPoolExportToShareableHandle(&pool_fd, pool, "
          "CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) -> 0",
          "cuMemPoolExportPointer(&message.pointer, pointer) -> 0",
          // The driver's answers on a GPU (H200, driver 580).
          "cuMemPoolExportToShareableHandle(&refused, pool, CU_MEM_HANDLE_TYPE_WIN32, 0) -> 1",
          "cuMemPoolExportToShareableHandle(&refused, private_pool, "
          "CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) -> 1",
          "CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) -> 0\ncuMemAddressReserve",
          "importer reads the exporter's bytes: yes",
          "CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) -> 0\n"
          "cuMemPoolImportPointer(&pointer, pool, &message.pointer) -> 0",
          "imported pointer: its allocation's start yes, 1048576 bytes",
          "cuMemsetD8(pointer, 7, kPoolBytes) -> 0\ncuMemsetD8(pointer, 7, kPoolBytes + 1) -> 1",
          "cuMemFree(pointer) -> 0\ncuMemPoolDestroy(pool) -> 0",
          "reinterpret_cast<void*>(intptr_t{unrelated}), CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) "
          "-> 999",
          "importer done: yes", "exporter reads the importer's bytes: yes"}) {
      EXPECT_NE(result.output.find(line), std::string::npos) << line << "\n" << result.output;
    }
  }
}

// The driver's error log (driver_logs.cu), over tcp and shm: the simulated device logs each
// failed call; a registered callback receives the message on the client, a dump from an iterator
// holds the message after it and advances it, a dump to a file holds all, a callback unregistered
// receives no more, and what the driver refuses is refused; a device's notification over the
// memory budget the simulated device is given reaches its registration's callback.
TEST(SimulatedLogs, reach_the_applications_callback_and_dumps) {
  const std::string file = ::testing::TempDir() + "/gvirtus-logs-" + std::to_string(::getpid());
  ::setenv("GVIRTUS_SIMULATED_MEMORY_BUDGET", "1048576", 1);  // the backends inherit it
  for (const TestTransport transport : {TestTransport::tcp, TestTransport::shm}) {
    const RunResult result = run_with_stats(transport, "driver_logs " + file);
    ASSERT_EQ(result.status, 0) << result.output;
    for (const char* line :
         {"cuLogsRegisterCallback(on_message, &received, &handle) -> 0",
          "callback received the failure: yes, level 0, \"simulated device: CUDA error 1\"",
          "dump since the iterator: 31 bytes, one line yes, iterator advanced yes",
          "nothing new: 0 bytes", "cuLogsDumpToMemory(nullptr, buffer, &tiny, 0) -> 1",
          "file holds both failures: yes, the callback received both: yes",
          "cuLogsDumpToFile(nullptr, \"/nonexistent/dir/log.txt\", 0) -> 1",
          "no message after unregistering: yes", "cuLogsUnregisterCallback(handle) -> 1",
          "cuLogsRegisterCallback(nullptr, nullptr, nullptr) -> 1",
          "cuDeviceRegisterAsyncNotification(device, on_notification, &notified, &registration) "
          "-> 0",
          "notified: yes, type 1, over by at least 1 MiB yes, its own handle yes",
          "cuDeviceUnregisterAsyncNotification(device, registration) -> 0\n"
          "cuDeviceUnregisterAsyncNotification(device, registration) -> 1",
          "cuDeviceRegisterAsyncNotification(device, nullptr, nullptr, &registration) -> 1"}) {
      EXPECT_NE(result.output.find(line), std::string::npos) << line << "\n" << result.output;
    }
  }
  ::unsetenv("GVIRTUS_SIMULATED_MEMORY_BUDGET");
  std::remove(file.c_str());
}

// Copies between page-locked memory and the device over shm carry no bytes: the request names the
// block's place in the shared memory and the backend copies those pages (GVIRTUS_STATS counts the
// payload). Over tcp the same copies carry their 8192 and 3000 bytes.
TEST(SimulatedHostMemory, copies_of_page_locked_memory_over_shm_carry_no_bytes) {
  for (const TestTransport transport : {TestTransport::shm, TestTransport::tcp}) {
    const RunResult result = run_with_stats(transport, "host_mapped");
    const bool shm = transport == TestTransport::shm;
    EXPECT_NE(result.output.find("a synchronous round trip through page-locked memory: intact"),
              std::string::npos)
        << result.output;
    const long long up = request_bytes(result.output, "cuMemcpyHtoD_v2");
    const long long up_async = request_bytes(result.output, "cuMemcpyHtoDAsync_v2");
    ASSERT_GE(up, 0) << result.output;
    ASSERT_GE(up_async, 0) << result.output;
    if (shm) {
      EXPECT_LT(up, 100) << "the record alone\n" << result.output;
      EXPECT_LT(up_async, 100) << result.output;
    } else {
      EXPECT_GT(up, 8192) << result.output;
      EXPECT_GT(up_async, 3000) << result.output;
    }
  }
}

// Synchronous copies of pageable memory over shm go through pinned staging blocks of the shared
// memory (common/pinned_staging.h): the e2e memory program's 40 MiB round trip (and its others)
// comes back intact while the copies' requests carry their records alone; over tcp the bytes
// travel in the requests.
TEST(SimulatedHostMemory, synchronous_pageable_copies_over_shm_go_through_pinned_staging) {
  for (const TestTransport transport : {TestTransport::shm, TestTransport::tcp}) {
    const RunResult result = run_with_stats(transport, "memory");
    EXPECT_NE(result.output.find("check large == large_back                    ok"),
              std::string::npos)
        << result.output;
    const long long up = request_bytes(result.output, "cuMemcpyHtoD_v2");
    ASSERT_GE(up, 0) << result.output;
    if (transport == TestTransport::shm) {
      EXPECT_LT(up, 64 << 10) << "records and the small copies' bytes\n" << result.output;
    } else {
      EXPECT_GT(up, 40 << 20) << result.output;
    }
  }
}

// The module cache (issue 20): a program's second run sends the backend no module bytes - every
// image goes by its hash, and the backend's cache supplies it. Each run has a backend of its own
// on the same cache directory: the cache is kept on disk. The kernels launched stay the same.
// cuRAND's library sends 6.8 MB of images on its first run (89 MB before they were cut down to
// the simulated device's sm_90).
TEST(SimulatedModuleCache,
     a_second_run_on_a_new_backend_with_the_same_cache_sends_no_module_bytes) {
  char tmpl[] = "/tmp/gvirtus-module-cache-XXXXXX";
  const std::string cache = ::mkdtemp(tmpl);
  struct Run {
    long long loads = 0, bytes = 0;
    std::vector<std::string> kernels;
    std::string output;
  };
  const auto run_once = [&]() {
    const std::string launches = cache + "/launches.jsonl";
    ::setenv("GVIRTUS_SIMULATED_LAUNCHES", launches.c_str(), 1);
    BackendProcess backend(R"("module_cache":{"path":")" + cache + R"(/modules"})",
                           R"(["cuda-simulated"])");
    ::unsetenv("GVIRTUS_SIMULATED_LAUNCHES");
    Run r;
    r.output = run("env " GVIRTUS_STUB_PROGRAM_ENV " GVIRTUS_STATS=1 GVIRTUS_CONFIG=" +
                   backend.client_config_file() + " LD_LIBRARY_PATH=" + GVIRTUS_DRIVER_STUB_DIR +
                   " " + GVIRTUS_STATIC_DIR + "/library_curand_uniform 2>&1")
                   .output;
    for (const char* load : {"cuLibraryLoadData", "cuModuleLoadData", "cuModuleLoadDataEx"}) {
      const CallCount count = call_count(r.output, load);
      r.loads += std::max(count.sync, 0LL);
      r.bytes += std::max(count.request_bytes, 0LL);
    }
    for (const Launch& l : recorded(launches)) r.kernels.push_back(l.kernel);
    std::remove(launches.c_str());
    return r;
  };
  const Run first = run_once();
  ASSERT_FALSE(first.kernels.empty()) << first.output;
  EXPECT_GT(first.bytes, 1'000'000) << first.output;
  const Run second = run_once();
  EXPECT_EQ(second.kernels, first.kernels) << second.output;
  ASSERT_GT(second.loads, 0) << second.output;
  // A load by hash is its record (form, hash, size) and its options: no image.
  EXPECT_LT(second.bytes, 100 * second.loads) << second.output;
  EXPECT_LT(second.loads, first.loads) << "the first run sent each missing image again";
  std::filesystem::remove_all(cache);
}

// Libraries load when first used (frontend/lazy_libraries.h): NVIDIA's runtime in cuBLAS loads
// 2,980 fatbinaries as libraries when it starts and asks for kernels of a few; only those reach
// the backend, and the rest are unloaded at exit without it. The sgemm still launches.
TEST(SimulatedLazyLibraries, only_the_libraries_a_program_uses_reach_the_backend) {
  BackendProcess backend("", R"(["cuda-simulated"])");
  const std::string output =
      run("env " GVIRTUS_STUB_PROGRAM_ENV " GVIRTUS_STATS=1 GVIRTUS_CONFIG=" +
          backend.client_config_file() + " LD_LIBRARY_PATH=" + GVIRTUS_DRIVER_STUB_DIR + " " +
          GVIRTUS_STATIC_DIR + "/library_cublas_sgemm 2>&1")
          .output;
  EXPECT_NE(output.find("calls: ok"), std::string::npos) << output;
  const CallCount loads = call_count(output, "cuLibraryLoadData");
  const CallCount kernels = call_count(output, "cuLibraryGetKernel");
  ASSERT_GT(kernels.sync, 0) << output;
  ASSERT_GT(loads.sync, 0) << output;
  // Each library a kernel was asked of, once (a first run also sends each image after its hash).
  EXPECT_LE(loads.sync, 2 * kernels.sync + 4) << output;
  EXPECT_LE(call_count(output, "cuLibraryUnload").sync, loads.sync) << output;
}

TEST(SimulatedHostMemory, over_tcp_host_memory_has_no_device_pointer) {
  BackendProcess backend("", R"(["cuda-simulated"])");
  const RunResult result =
      run("env " GVIRTUS_STUB_PROGRAM_ENV " GVIRTUS_CONFIG=" + backend.client_config_file() +
          " LD_LIBRARY_PATH=" + GVIRTUS_DRIVER_STUB_DIR + " " + GVIRTUS_STATIC_DIR +
          "/host_mapped 2>&1");
  for (const char* line : {"cuMemHostAlloc(&host, bytes, CU_MEMHOSTALLOC_DEVICEMAP) -> 0",
                           "cuMemHostGetDevicePointer -> 801", "cuMemFreeHost(host) -> 0"}) {
    EXPECT_NE(result.output.find(line), std::string::npos) << line << "\n" << result.output;
  }
}

// data/simulated_launches.txt, for one program: its launches as "COUNT KERNEL GRID BLOCK SHARED"
// lines, and the functions it may find unsupported.
struct Expected {
  std::multiset<std::string> launches;
  std::set<std::string> unsupported;
  std::vector<std::pair<std::string, int>> library;  // a kernel name pattern, how many launches
  std::string stops_at;                              // the library call a known gap stops at
  int checks_ok = -1, checks_failed = -1;            // the program's own checks; -1: none listed
};

Expected expected_for(const std::string& program) {
  Expected e;
  std::ifstream in(GVIRTUS_SIMULATED_EXPECTED);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string what, name;
    words >> what >> name;
    if (name != program) continue;
    if (what == "launch") {
      int count = 0;
      std::string kernel, grid, block, shared;
      words >> count >> kernel >> grid >> block >> shared;
      for (int i = 0; i < count; ++i)
        e.launches.insert(kernel + " " + grid + " " + block + " " + shared);
    } else if (what == "checks") {
      words >> e.checks_ok >> e.checks_failed;
    } else if (what == "unsupported") {
      std::string function;
      words >> function;
      e.unsupported.insert(function);
    } else if (what == "library") {
      int count = 0;
      std::string pattern;
      words >> count >> pattern;
      e.library.emplace_back(pattern, count);
    } else if (what == "stops") {
      words >> e.stops_at;
    }
  }
  return e;
}

// "[4,1,1]" -> "4,1,1", as the data file writes dimensions.
std::string dims(const std::string& json) {
  return json.substr(1, json.size() - 2);
}

std::vector<std::string> program_list(const std::string& text) {
  std::vector<std::string> names;
  std::istringstream list(text);
  for (std::string name; std::getline(list, name, ',');) names.push_back(name);
  return names;
}

std::vector<std::string> static_programs() {
  return program_list(GVIRTUS_STATIC_PROGRAMS);
}

std::vector<std::string> library_programs() {
  return program_list(GVIRTUS_LIBRARY_PROGRAMS);
}

// The driver functions the run's output says are not supported yet.
// How many of the program's own checks (check.h's "check EXPRESSION ok|FAILED" lines, also those
// a prefix names: "second: ", "slice 2: ") passed and failed.
std::pair<int, int> checks_in(const std::string& output) {
  const std::regex check(R"((^|\n)([^\n]*: )?check [^\n]*?(ok|FAILED)(?=\n|$))");
  int ok = 0, failed = 0;
  for (auto it = std::sregex_iterator(output.begin(), output.end(), check);
       it != std::sregex_iterator(); ++it) {
    ((*it)[3] == "ok" ? ok : failed) += 1;
  }
  return {ok, failed};
}

std::set<std::string> unsupported_in(const std::string& output) {
  const std::regex unsupported("warning: (\\w+) is not supported");
  std::set<std::string> found;
  for (auto it = std::sregex_iterator(output.begin(), output.end(), unsupported);
       it != std::sregex_iterator(); ++it) {
    found.insert((*it)[1]);
  }
  return found;
}

class SimulatedProgram : public SimulatedDriverMode,
                         public ::testing::WithParamInterface<std::string> {};

TEST_P(SimulatedProgram, reaches_its_launches_and_only_known_gaps) {
  const std::string program = GetParam();
  const Expected expected = expected_for(program);
  const RunResult result = run_program(std::string(GVIRTUS_STATIC_DIR) + "/" + program);
  ASSERT_TRUE(WIFEXITED(result.status)) << program << " did not exit normally\n" << result.output;
  std::multiset<std::string> reached;
  for (const Launch& l : recorded(launches_)) {
    reached.insert(l.kernel + " " + dims(l.grid) + " " + dims(l.block) + " " +
                   std::to_string(l.shared));
  }
  EXPECT_EQ(reached, expected.launches) << result.output;
  EXPECT_EQ(unsupported_in(result.output), expected.unsupported)
      << "a driver function the program needs changed status";
  // Checks of what kernels compute fail (the simulated device runs none); every other check - of
  // copies, queries, handles - must pass. The counts say which is which, so a copy or a query
  // that goes wrong fails here even though the program's own output is not GPU evidence.
  if (expected.checks_ok >= 0) {
    EXPECT_EQ(checks_in(result.output), std::make_pair(expected.checks_ok, expected.checks_failed))
        << "the program's own checks (ok, FAILED) changed\n"
        << result.output;
  }
}

INSTANTIATE_TEST_SUITE_P(Programs, SimulatedProgram, ::testing::ValuesIn(static_programs()),
                         [](const auto& info) { return info.param; });

// NVIDIA's libraries (libraries/*.cu) run their host code to completion on gvirtus's
// libcuda.so.1: every library call succeeds ("calls: ok"; the result check that follows fails on
// the simulated device, which computes nothing), and the library's own kernels reach the device,
// as many as data/simulated_launches.txt's "library" lines say, by name pattern (the names are
// NVIDIA's internal ones), besides the program's own exact "launch" lines. A library with a known
// gap ("stops") must stop exactly at its named call: anything else is a change to record.
class SimulatedLibrary : public SimulatedDriverMode,
                         public ::testing::WithParamInterface<std::string> {};

TEST_P(SimulatedLibrary, runs_its_host_code_to_completion_and_launches_its_kernels) {
  const std::string program = GetParam();
  Expected expected = expected_for(program);
  const RunResult result = run_program(std::string(GVIRTUS_STATIC_DIR) + "/" + program);
  ASSERT_TRUE(WIFEXITED(result.status)) << program << " did not exit normally\n" << result.output;
  if (!expected.stops_at.empty()) {  // a known gap: it must fail there, and nowhere else
    EXPECT_NE(result.output.find(" in " + expected.stops_at + "("), std::string::npos)
        << result.output;
  } else {
    EXPECT_NE(result.output.find("calls: ok"), std::string::npos) << result.output;
    EXPECT_NE(result.output.find("result: "), std::string::npos) << result.output;
  }
  std::vector<std::string> unexpected;
  for (const Launch& l : recorded(launches_)) {
    const std::string exact =
        l.kernel + " " + dims(l.grid) + " " + dims(l.block) + " " + std::to_string(l.shared);
    if (const auto it = expected.launches.find(exact); it != expected.launches.end()) {
      expected.launches.erase(it);
      continue;
    }
    const auto pattern =
        std::find_if(expected.library.begin(), expected.library.end(), [&](const auto& p) {
          return p.second > 0 && std::regex_search(l.kernel, std::regex(p.first));
        });
    if (pattern == expected.library.end()) {
      unexpected.push_back(exact);
    } else {
      --pattern->second;
    }
  }
  EXPECT_TRUE(unexpected.empty()) << "launches no line expects: "
                                  << ::testing::PrintToString(unexpected);
  EXPECT_TRUE(expected.launches.empty())
      << "expected launches not reached: " << ::testing::PrintToString(expected.launches);
  for (const auto& [pattern, left] : expected.library) {
    EXPECT_EQ(left, 0) << left << " launches matching " << pattern << " not reached\n"
                       << result.output;
  }
  EXPECT_EQ(unsupported_in(result.output), expected.unsupported)
      << "a driver function the library needs changed status";
}

INSTANTIATE_TEST_SUITE_P(Libraries, SimulatedLibrary, ::testing::ValuesIn(library_programs()),
                         [](const auto& info) { return info.param; });

// Against a backend whose machine has no driver (the cuda plugin, refused there), every program
// prints and exits exactly as it does natively without a driver.
class WithoutADriver : public ::testing::TestWithParam<std::string> {};

TEST_P(WithoutADriver, a_program_fails_as_it_does_natively) {
  if (void* driver = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
    ::dlclose(driver);
    GTEST_SKIP() << "this machine has NVIDIA's libcuda.so.1: the comparison needs one without";
  }
  const std::string program = std::string(GVIRTUS_STATIC_DIR) + "/" + GetParam();
  BackendProcess backend("", R"(["cuda"])");
  const RunResult native = run("env -u LD_LIBRARY_PATH " + program + " 2>/dev/null");
  const RunResult remoted =
      run("env " GVIRTUS_STUB_PROGRAM_ENV " GVIRTUS_CONFIG=" + backend.client_config_file() +
          " LD_LIBRARY_PATH=" + GVIRTUS_DRIVER_STUB_DIR + " " + program + " 2>/dev/null");
  EXPECT_EQ(remoted.output, native.output);
  EXPECT_EQ(remoted.status, native.status);
}

INSTANTIATE_TEST_SUITE_P(Programs, WithoutADriver, ::testing::ValuesIn(static_programs()),
                         [](const auto& info) { return info.param; });

// The library programs too, but for those linking libcuda.so.1 themselves (NVRTC's and the
// driver's own): natively, without a driver, they do not start at all.
std::vector<std::string> library_programs_on_the_runtime() {
  std::vector<std::string> names = library_programs();
  std::erase(names, "library_nvrtc_ptx");
  std::erase(names, "library_nvrtc_link");
  std::erase(names, "library_driver_vmm");
  return names;
}

INSTANTIATE_TEST_SUITE_P(Libraries, WithoutADriver,
                         ::testing::ValuesIn(library_programs_on_the_runtime()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace gvirtus::testing
