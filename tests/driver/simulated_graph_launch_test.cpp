// The simulated device's graphs launched (src/plugins/cuda/simulated/graph_launch.cpp,
// graph_exec_updates.cpp): kernel nodes recorded in topological order, memsets and copies done on
// the device's memory; an executable's set parameters, updates and disabled nodes changing its
// next launch only; a capture as a chain of kernel nodes; child graphs run and event records
// marking events; memory nodes allocating when added and freeing with their graph.
// simulated_graph_fixture.h says how the suite reaches the device.
#include <string>
#include <vector>

#include "simulated_graph_fixture.h"

namespace gvirtus::testing {
namespace {

TEST_F(SimulatedGraph, a_launch_runs_nodes_in_topological_order_and_does_their_memory_work) {
  // Inserted as touch, scale, memset, memcpy; ordered memset -> scale -> memcpy -> touch.
  const CUDA_KERNEL_NODE_PARAMS touch = [&] {
    CUDA_KERNEL_NODE_PARAMS p = scale_params(1);
    p.func = touch_;
    return p;
  }();
  CUgraphNode touch_node = nullptr;
  ASSERT_EQ(cuGraphAddKernelNode(&touch_node, graph_, nullptr, 0, &touch), CUDA_SUCCESS);
  const CUgraphNode scale_node = add_scale();
  const CUDA_MEMSET_NODE_PARAMS memset = memset_params(0x01020304, 32);
  CUgraphNode memset_node = nullptr, memcpy_node = nullptr;
  ASSERT_EQ(cuGraphAddMemsetNode(&memset_node, graph_, nullptr, 0, &memset, context_),
            CUDA_SUCCESS);
  const CUDA_MEMCPY3D copy = copy_params(16 * 4);
  ASSERT_EQ(cuGraphAddMemcpyNode(&memcpy_node, graph_, &scale_node, 1, &copy, context_),
            CUDA_SUCCESS);
  const CUgraphNode from[] = {memset_node, memcpy_node};
  const CUgraphNode to[] = {scale_node, touch_node};
  ASSERT_EQ(cuGraphAddDependencies(graph_, from, to, nullptr, 2), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD32(other_, 0, kBytes / 4), CUDA_SUCCESS);

  CUgraphExec executable = nullptr;
  ASSERT_EQ(cuGraphInstantiate(&executable, graph_, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphLaunch(executable, nullptr), CUDA_SUCCESS);
  const std::vector<std::string> launched = records();
  ASSERT_EQ(launched.size(), 2u);
  EXPECT_NE(launched[0].find("\"kernel\":\"scale\""), std::string::npos) << launched[0];
  EXPECT_NE(launched[1].find("\"kernel\":\"touch\""), std::string::npos) << launched[1];
  for (const std::string& line : launched) {
    EXPECT_NE(line.find("\"simulated\":true"), std::string::npos) << line;
    EXPECT_NE(line.find("\"graph\":true"), std::string::npos) << line;
  }
  // scale's parameters as packed: the address, 2.5f, 7.
  EXPECT_NE(launched[0].find("\"params\":\"887766554433221100002040"
                             "07000000\""),
            std::string::npos)
      << launched[0];
  const std::vector<uint32_t> copied = read(other_, 17);
  for (size_t i = 0; i < 16; ++i) EXPECT_EQ(copied[i], 0x01020304u) << i;
  EXPECT_EQ(copied[16], 0u);  // beyond the copy
  EXPECT_EQ(read(memory_, 33)[31], 0x01020304u);
  EXPECT_EQ(cuGraphExecDestroy(executable), CUDA_SUCCESS);
  EXPECT_EQ(cuGraphLaunch(executable, nullptr), CUDA_ERROR_INVALID_HANDLE);
}

TEST_F(SimulatedGraph, set_parameters_of_an_executable_change_its_next_launch_only) {
  const CUgraphNode scale_node = add_scale();
  const CUDA_MEMSET_NODE_PARAMS memset = memset_params(5, 8);
  CUgraphNode memset_node = nullptr;
  ASSERT_EQ(cuGraphAddMemsetNode(&memset_node, graph_, &scale_node, 1, &memset, context_),
            CUDA_SUCCESS);
  CUgraphExec executable = nullptr;
  ASSERT_EQ(cuGraphInstantiate(&executable, graph_, 0), CUDA_SUCCESS);

  CUDA_KERNEL_NODE_PARAMS bigger = scale_params(9);
  ASSERT_EQ(cuGraphExecKernelNodeSetParams(executable, scale_node, &bigger), CUDA_SUCCESS);
  const CUDA_MEMSET_NODE_PARAMS sevens = memset_params(7, 8);
  ASSERT_EQ(cuGraphExecMemsetNodeSetParams(executable, memset_node, &sevens, context_),
            CUDA_SUCCESS);
  ASSERT_EQ(cuGraphLaunch(executable, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(records().size(), 1u);
  EXPECT_NE(records()[0].find("\"grid\":[9,1,1]"), std::string::npos) << records()[0];
  EXPECT_EQ(read(memory_, 8)[7], 7u);
  // The graph's own nodes are as they were.
  CUDA_KERNEL_NODE_PARAMS got{};
  ASSERT_EQ(cuGraphKernelNodeGetParams(scale_node, &got), CUDA_SUCCESS);
  EXPECT_EQ(got.gridDimX, 2u);
  CUDA_MEMSET_NODE_PARAMS memset_got{};
  ASSERT_EQ(cuGraphMemsetNodeGetParams(memset_node, &memset_got), CUDA_SUCCESS);
  EXPECT_EQ(memset_got.value, 5u);
  // A 1D memset may not become 2D; a node of another graph has no copy here.
  CUDA_MEMSET_NODE_PARAMS two_d = sevens;
  two_d.height = 2;
  two_d.pitch = 64;
  EXPECT_EQ(cuGraphExecMemsetNodeSetParams(executable, memset_node, &two_d, context_),
            CUDA_ERROR_INVALID_VALUE);
  CUgraph other = nullptr;
  ASSERT_EQ(cuGraphCreate(&other, 0), CUDA_SUCCESS);
  CUgraphNode stranger = nullptr;
  const CUDA_KERNEL_NODE_PARAMS p = scale_params();
  ASSERT_EQ(cuGraphAddKernelNode(&stranger, other, nullptr, 0, &p), CUDA_SUCCESS);
  EXPECT_EQ(cuGraphExecKernelNodeSetParams(executable, stranger, &p), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGraphDestroy(other), CUDA_SUCCESS);
  EXPECT_EQ(cuGraphExecDestroy(executable), CUDA_SUCCESS);
}

TEST_F(SimulatedGraph, a_disabled_node_does_nothing_until_enabled_again) {
  const CUgraphNode scale_node = add_scale();
  const CUDA_MEMSET_NODE_PARAMS memset = memset_params(3, 4);
  CUgraphNode memset_node = nullptr;
  ASSERT_EQ(cuGraphAddMemsetNode(&memset_node, graph_, nullptr, 0, &memset, context_),
            CUDA_SUCCESS);
  const CUgraphNode empty = add_empty();
  ASSERT_EQ(cuMemsetD32(memory_, 0, 4), CUDA_SUCCESS);
  CUgraphExec executable = nullptr;
  ASSERT_EQ(cuGraphInstantiate(&executable, graph_, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphNodeSetEnabled(executable, scale_node, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphNodeSetEnabled(executable, memset_node, 0), CUDA_SUCCESS);
  unsigned enabled = 1;
  ASSERT_EQ(cuGraphNodeGetEnabled(executable, scale_node, &enabled), CUDA_SUCCESS);
  EXPECT_EQ(enabled, 0u);
  EXPECT_EQ(cuGraphNodeSetEnabled(executable, empty, 0), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(cuGraphLaunch(executable, nullptr), CUDA_SUCCESS);
  EXPECT_TRUE(records().empty());
  EXPECT_EQ(read(memory_, 4)[0], 0u);
  ASSERT_EQ(cuGraphNodeSetEnabled(executable, scale_node, 1), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphNodeSetEnabled(executable, memset_node, 1), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphLaunch(executable, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(records().size(), 1u);
  EXPECT_EQ(read(memory_, 4)[0], 3u);
  EXPECT_EQ(cuGraphExecDestroy(executable), CUDA_SUCCESS);
}

// A linear memset and a linear copy between device memory on a capturing stream become a memset
// node and a copy node, in order, done at each launch and never at capture.
TEST_F(SimulatedGraph, a_capture_takes_linear_memsets_and_copies_as_nodes) {
  CUstream stream = nullptr;
  ASSERT_EQ(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD32_v2(memory_, 1, 4), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD32_v2(other_, 2, 4), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD32Async(memory_, 7, 4, stream), CUDA_SUCCESS);
  ASSERT_EQ(cuMemcpyDtoDAsync_v2(other_, memory_, 16, stream), CUDA_SUCCESS);
  ASSERT_EQ(cuMemcpyDtoDAsync_v2(other_, memory_, uint64_t{1} << 40, stream),
            CUDA_ERROR_INVALID_VALUE);  // outside the allocation: refused, nothing captured
  CUgraph captured = nullptr;
  ASSERT_EQ(cuStreamEndCapture(stream, &captured), CUDA_SUCCESS);
  EXPECT_EQ(read(other_, 4), (std::vector<uint32_t>{2, 2, 2, 2}));  // nothing done at capture
  CUgraphNode nodes[3] = {};
  size_t count = 3;
  ASSERT_EQ(cuGraphGetNodes(captured, nodes, &count), CUDA_SUCCESS);
  ASSERT_EQ(count, 2u);
  CUgraphNodeType first = CU_GRAPH_NODE_TYPE_EMPTY, second = CU_GRAPH_NODE_TYPE_EMPTY;
  ASSERT_EQ(cuGraphNodeGetType(nodes[0], &first), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphNodeGetType(nodes[1], &second), CUDA_SUCCESS);
  EXPECT_EQ(first, CU_GRAPH_NODE_TYPE_MEMSET);
  EXPECT_EQ(second, CU_GRAPH_NODE_TYPE_MEMCPY);
  CUgraphExec executable = nullptr;
  ASSERT_EQ(cuGraphInstantiate(&executable, captured, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphLaunch(executable, stream), CUDA_SUCCESS);
  EXPECT_EQ(read(other_, 4), (std::vector<uint32_t>{7, 7, 7, 7}));
  EXPECT_EQ(cuGraphExecDestroy(executable), CUDA_SUCCESS);
  EXPECT_EQ(cuGraphDestroy(captured), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamDestroy(stream), CUDA_SUCCESS);
}

TEST_F(SimulatedGraph, a_capture_is_a_chain_of_kernel_nodes_and_launches_as_one) {
  CUstream stream = nullptr;
  ASSERT_EQ(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
  ASSERT_EQ(cuLaunchKernel(scale_, 1, 1, 1, 32, 1, 1, 0, stream, args_, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(cuLaunchKernel(scale_, 4, 1, 1, 32, 1, 1, 0, stream, args_, nullptr), CUDA_SUCCESS);
  // 2D memsets are not captured here (linear ones are: below).
  ASSERT_EQ(cuMemsetD2D32Async(memory_, 64, 0, 4, 2, stream),
            CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  CUgraph captured = nullptr;
  ASSERT_EQ(cuStreamEndCapture(stream, &captured), CUDA_SUCCESS);
  EXPECT_TRUE(records().empty());  // kept by the capture, not recorded
  CUgraphNode nodes[2] = {};
  size_t count = 2;
  ASSERT_EQ(cuGraphGetNodes(captured, nodes, &count), CUDA_SUCCESS);
  ASSERT_EQ(count, 2u);
  CUgraphNode dependency = nullptr;
  count = 1;
  ASSERT_EQ(cuGraphNodeGetDependencies(nodes[1], &dependency, nullptr, &count), CUDA_SUCCESS);
  EXPECT_EQ(dependency, nodes[0]);
  CUDA_KERNEL_NODE_PARAMS got{};
  ASSERT_EQ(cuGraphKernelNodeGetParams(nodes[1], &got), CUDA_SUCCESS);
  EXPECT_EQ(got.func, scale_);
  EXPECT_EQ(got.gridDimX, 4u);
  CUgraphExec executable = nullptr;
  ASSERT_EQ(cuGraphInstantiate(&executable, captured, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphLaunch(executable, stream), CUDA_SUCCESS);
  const std::vector<std::string> launched = records();
  ASSERT_EQ(launched.size(), 2u);
  EXPECT_NE(launched[0].find("\"grid\":[1,1,1]"), std::string::npos) << launched[0];
  EXPECT_NE(launched[1].find("\"grid\":[4,1,1]"), std::string::npos) << launched[1];
  EXPECT_NE(launched[1].find("\"stream\":"), std::string::npos) << launched[1];
  EXPECT_EQ(count_of(launched[1], "\"graph\":true"), 1u) << launched[1];

  // An update from a graph of the same shape takes its parameters; one of another shape fails.
  CUgraph clone = nullptr;
  ASSERT_EQ(cuGraphClone(&clone, captured), CUDA_SUCCESS);
  CUgraphNode first = nullptr;
  ASSERT_EQ(cuGraphNodeFindInClone(&first, nodes[0], clone), CUDA_SUCCESS);
  const CUDA_KERNEL_NODE_PARAMS wider = scale_params(6);
  ASSERT_EQ(cuGraphKernelNodeSetParams(first, &wider), CUDA_SUCCESS);
  CUgraphExecUpdateResultInfo info{};
  ASSERT_EQ(cuGraphExecUpdate(executable, clone, &info), CUDA_SUCCESS);
  EXPECT_EQ(info.result, CU_GRAPH_EXEC_UPDATE_SUCCESS);
  ASSERT_EQ(cuGraphLaunch(executable, nullptr), CUDA_SUCCESS);
  EXPECT_NE(records()[2].find("\"grid\":[6,1,1]"), std::string::npos) << records()[2];
  CUgraphNode extra = nullptr;
  ASSERT_EQ(cuGraphAddEmptyNode(&extra, clone, nullptr, 0), CUDA_SUCCESS);
  EXPECT_EQ(cuGraphExecUpdate(executable, clone, &info), CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
  EXPECT_EQ(info.result, CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED);
  ASSERT_EQ(cuGraphDestroyNode(extra), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphDestroyNode(first), CUDA_SUCCESS);
  CUgraphNode last = nullptr;
  count = 1;
  ASSERT_EQ(cuGraphGetNodes(clone, &last, &count), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphAddEmptyNode(&extra, clone, &last, 1), CUDA_SUCCESS);
  EXPECT_EQ(cuGraphExecUpdate(executable, clone, &info), CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
  EXPECT_EQ(info.result, CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED);
  EXPECT_EQ(info.errorNode, extra);

  EXPECT_EQ(cuGraphExecDestroy(executable), CUDA_SUCCESS);
  EXPECT_EQ(cuGraphDestroy(clone), CUDA_SUCCESS);
  EXPECT_EQ(cuGraphDestroy(captured), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamDestroy(stream), CUDA_SUCCESS);
}

TEST_F(SimulatedGraph, a_child_graph_node_runs_its_graph_and_event_records_mark_events) {
  CUgraph child = nullptr;
  ASSERT_EQ(cuGraphCreate(&child, 0), CUDA_SUCCESS);
  const CUDA_KERNEL_NODE_PARAMS p = scale_params(5);
  CUgraphNode inner = nullptr;
  ASSERT_EQ(cuGraphAddKernelNode(&inner, child, nullptr, 0, &p), CUDA_SUCCESS);
  CUgraphNode child_node = nullptr;
  ASSERT_EQ(cuGraphAddChildGraphNode(&child_node, graph_, nullptr, 0, child), CUDA_SUCCESS);
  CUevent start = nullptr, end = nullptr;
  ASSERT_EQ(cuEventCreate(&start, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuEventCreate(&end, 0), CUDA_SUCCESS);
  CUgraphNode record_start = nullptr, record_end = nullptr;
  ASSERT_EQ(cuGraphAddEventRecordNode(&record_start, graph_, nullptr, 0, start), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphAddEventRecordNode(&record_end, graph_, &child_node, 1, start), CUDA_SUCCESS);
  CUgraphExec executable = nullptr;
  ASSERT_EQ(cuGraphInstantiate(&executable, graph_, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphExecEventRecordNodeSetEvent(executable, record_end, end), CUDA_SUCCESS);
  float ms = -1;
  EXPECT_EQ(cuEventElapsedTime(&ms, start, end), CUDA_ERROR_NOT_READY);
  ASSERT_EQ(cuGraphLaunch(executable, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(cuEventElapsedTime(&ms, start, end), CUDA_SUCCESS);
  ASSERT_EQ(records().size(), 1u);
  EXPECT_NE(records()[0].find("\"grid\":[5,1,1]"), std::string::npos) << records()[0];

  // The executable's child takes a graph of its shape.
  const CUDA_KERNEL_NODE_PARAMS q = scale_params(8);
  ASSERT_EQ(cuGraphKernelNodeSetParams(inner, &q), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphExecChildGraphNodeSetParams(executable, child_node, child), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphLaunch(executable, nullptr), CUDA_SUCCESS);
  EXPECT_NE(records()[1].find("\"grid\":[8,1,1]"), std::string::npos) << records()[1];
  CUgraphNode more = nullptr;
  ASSERT_EQ(cuGraphAddEmptyNode(&more, child, nullptr, 0), CUDA_SUCCESS);
  EXPECT_EQ(cuGraphExecChildGraphNodeSetParams(executable, child_node, child),
            CUDA_ERROR_INVALID_VALUE);

  EXPECT_EQ(cuGraphExecDestroy(executable), CUDA_SUCCESS);
  EXPECT_EQ(cuGraphDestroy(child), CUDA_SUCCESS);
  EXPECT_EQ(cuEventDestroy(start), CUDA_SUCCESS);
  EXPECT_EQ(cuEventDestroy(end), CUDA_SUCCESS);
}

TEST_F(SimulatedGraph, memory_nodes_allocate_when_added_and_free_with_their_graph) {
  size_t free_before = 0, total = 0;
  ASSERT_EQ(cuMemGetInfo(&free_before, &total), CUDA_SUCCESS);
  CUgraph graph = nullptr;
  ASSERT_EQ(cuGraphCreate(&graph, 0), CUDA_SUCCESS);
  CUDA_MEM_ALLOC_NODE_PARAMS alloc{};
  alloc.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  alloc.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  alloc.poolProps.location.id = 0;
  CUmemAccessDesc access{};
  access.location = alloc.poolProps.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  alloc.accessDescs = &access;
  alloc.accessDescCount = 1;
  alloc.bytesize = 4096;
  CUgraphNode alloc_node = nullptr;
  ASSERT_EQ(cuGraphAddMemAllocNode(&alloc_node, graph, nullptr, 0, &alloc), CUDA_SUCCESS);
  ASSERT_NE(alloc.dptr, 0u);
  size_t free_now = 0;
  ASSERT_EQ(cuMemGetInfo(&free_now, &total), CUDA_SUCCESS);
  EXPECT_EQ(free_before - free_now, 4096u);
  CUDA_MEM_ALLOC_NODE_PARAMS got{};
  ASSERT_EQ(cuGraphMemAllocNodeGetParams(alloc_node, &got), CUDA_SUCCESS);
  EXPECT_EQ(got.dptr, alloc.dptr);
  EXPECT_EQ(got.bytesize, 4096u);
  ASSERT_EQ(got.accessDescCount, 1u);
  EXPECT_EQ(got.accessDescs[0].flags, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);

  // The memory is the device's: a memset node after the allocation writes it.
  CUDA_MEMSET_NODE_PARAMS memset = memset_params(9, 4);
  memset.dst = alloc.dptr;
  CUgraphNode memset_node = nullptr, free_node = nullptr;
  ASSERT_EQ(cuGraphAddMemsetNode(&memset_node, graph, &alloc_node, 1, &memset, context_),
            CUDA_SUCCESS);
  ASSERT_EQ(cuGraphAddMemFreeNode(&free_node, graph, &memset_node, 1, alloc.dptr), CUDA_SUCCESS);
  CUdeviceptr freed = 0;
  ASSERT_EQ(cuGraphMemFreeNodeGetParams(free_node, &freed), CUDA_SUCCESS);
  EXPECT_EQ(freed, alloc.dptr);
  CUgraphNode refused = nullptr;
  EXPECT_EQ(cuGraphAddMemFreeNode(&refused, graph, nullptr, 0, alloc.dptr),
            CUDA_ERROR_INVALID_VALUE);  // freed twice
  EXPECT_EQ(cuGraphAddMemFreeNode(&refused, graph, nullptr, 0, memory_),
            CUDA_ERROR_INVALID_VALUE);  // no allocation node's
  CUgraph clone = nullptr;
  EXPECT_EQ(cuGraphClone(&clone, graph), CUDA_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(cuGraphDestroyNode(memset_node), CUDA_ERROR_INVALID_VALUE);
  CUgraphNode embedding = nullptr;
  EXPECT_EQ(cuGraphAddChildGraphNode(&embedding, graph_, nullptr, 0, graph),
            CUDA_ERROR_INVALID_VALUE);
  CUgraphExec executable = nullptr;
  ASSERT_EQ(cuGraphInstantiate(&executable, graph, 0), CUDA_SUCCESS);
  CUgraphExec second = nullptr;
  EXPECT_EQ(cuGraphInstantiate(&second, graph, 0), CUDA_ERROR_NOT_SUPPORTED);
  ASSERT_EQ(cuGraphLaunch(executable, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(read(alloc.dptr, 4)[3], 9u);
  EXPECT_EQ(cuGraphExecDestroy(executable), CUDA_SUCCESS);
  EXPECT_EQ(cuGraphDestroy(graph), CUDA_SUCCESS);
  ASSERT_EQ(cuMemGetInfo(&free_now, &total), CUDA_SUCCESS);
  EXPECT_EQ(free_now, free_before);
}

}  // namespace
}  // namespace gvirtus::testing
