// The simulated device's graphs built node by node (src/plugins/cuda/simulated/graph_*.cpp): each
// node kind added and read back; edges and dependencies queried with the driver's count
// conventions, changed, and refused where the driver refuses them; nodes destroyed with their
// edges; a clone finding its nodes; kernel node attributes; the DOT description; unknown handles
// and null pointers refused. simulated_graph_fixture.h says how the suite reaches the device.
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "simulated_graph_fixture.h"

namespace gvirtus::testing {
namespace {

TEST_F(SimulatedGraph, a_kernel_node_reads_back_its_parameters_from_its_own_copy) {
  const CUgraphNode node = add_scale();
  arg_factor_ = 9.0f;  // the node copied the arguments when it was added
  CUDA_KERNEL_NODE_PARAMS got{};
  ASSERT_EQ(cuGraphKernelNodeGetParams(node, &got), CUDA_SUCCESS);
  EXPECT_EQ(got.func, scale_);
  EXPECT_EQ(got.gridDimX, 2u);
  EXPECT_EQ(got.blockDimX, 64u);
  EXPECT_EQ(got.extra, nullptr);
  ASSERT_NE(got.kernelParams, nullptr);
  CUdeviceptr address = 0;
  float factor = 0;
  unsigned count = 0;
  std::memcpy(&address, got.kernelParams[0], sizeof address);
  std::memcpy(&factor, got.kernelParams[1], sizeof factor);
  std::memcpy(&count, got.kernelParams[2], sizeof count);
  EXPECT_EQ(address, arg_address_);
  EXPECT_EQ(factor, 2.5f);
  EXPECT_EQ(count, 7u);
  CUgraphNodeType type{};
  ASSERT_EQ(cuGraphNodeGetType(node, &type), CUDA_SUCCESS);
  EXPECT_EQ(type, CU_GRAPH_NODE_TYPE_KERNEL);

  // Set from the extra form: one packed buffer.
  unsigned char buffer[16] = {};
  buffer[12] = 42;
  size_t buffer_bytes = sizeof buffer;
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buffer, CU_LAUNCH_PARAM_BUFFER_SIZE,
                   &buffer_bytes, CU_LAUNCH_PARAM_END};
  CUDA_KERNEL_NODE_PARAMS packed = scale_params(3);
  packed.kernelParams = nullptr;
  packed.extra = extra;
  ASSERT_EQ(cuGraphKernelNodeSetParams(node, &packed), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphKernelNodeGetParams(node, &got), CUDA_SUCCESS);
  EXPECT_EQ(got.gridDimX, 3u);
  std::memcpy(&count, got.kernelParams[2], sizeof count);
  EXPECT_EQ(count, 42u);

  // Refused: both forms, no function, a dependency named twice, an unknown dependency.
  CUDA_KERNEL_NODE_PARAMS both = scale_params();
  both.extra = extra;
  CUgraphNode refused = nullptr;
  EXPECT_EQ(cuGraphAddKernelNode(&refused, graph_, nullptr, 0, &both), CUDA_ERROR_INVALID_VALUE);
  CUDA_KERNEL_NODE_PARAMS none = scale_params();
  none.func = nullptr;
  EXPECT_EQ(cuGraphAddKernelNode(&refused, graph_, nullptr, 0, &none), CUDA_ERROR_INVALID_VALUE);
  const CUDA_KERNEL_NODE_PARAMS good = scale_params();
  const CUgraphNode twice[] = {node, node};
  EXPECT_EQ(cuGraphAddKernelNode(&refused, graph_, twice, 2, &good), CUDA_ERROR_INVALID_VALUE);
  const CUgraphNode unknown[] = {reinterpret_cast<CUgraphNode>(uintptr_t{0x7e7e7e00})};
  EXPECT_EQ(cuGraphAddKernelNode(&refused, graph_, unknown, 1, &good), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGraphAddKernelNode(&refused, graph_, nullptr, 0, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGraphKernelNodeGetParams(node, nullptr), CUDA_ERROR_INVALID_VALUE);
  size_t nodes = 0;
  ASSERT_EQ(cuGraphGetNodes(graph_, nullptr, &nodes), CUDA_SUCCESS);
  EXPECT_EQ(nodes, 1u);
}

TEST_F(SimulatedGraph, a_kernel_node_takes_a_library_kernel_in_place_of_a_function) {
  CUlibrary library = nullptr;
  ASSERT_EQ(cuLibraryLoadData(&library, kPtx, nullptr, nullptr, 0, nullptr, nullptr, 0),
            CUDA_SUCCESS);
  CUkernel kernel = nullptr;
  ASSERT_EQ(cuLibraryGetKernel(&kernel, library, "touch"), CUDA_SUCCESS);
  CUDA_KERNEL_NODE_PARAMS p{};
  p.kern = kernel;
  p.ctx = context_;
  p.gridDimX = p.gridDimY = p.gridDimZ = 1;
  p.blockDimX = p.blockDimY = p.blockDimZ = 1;
  void* args[] = {&arg_address_};
  p.kernelParams = args;
  CUgraphNode node = nullptr;
  ASSERT_EQ(cuGraphAddKernelNode(&node, graph_, nullptr, 0, &p), CUDA_SUCCESS);
  CUDA_KERNEL_NODE_PARAMS got{};
  ASSERT_EQ(cuGraphKernelNodeGetParams(node, &got), CUDA_SUCCESS);
  EXPECT_EQ(got.func, nullptr);
  EXPECT_EQ(got.kern, kernel);
  EXPECT_EQ(got.ctx, context_);
  ASSERT_EQ(cuGraphDestroyNode(node), CUDA_SUCCESS);
  EXPECT_EQ(cuLibraryUnload(library), CUDA_SUCCESS);
}

TEST_F(SimulatedGraph, every_other_node_kind_reads_back_what_it_was_given) {
  const CUDA_MEMCPY3D copy = copy_params(64);
  CUgraphNode memcpy_node = nullptr;
  ASSERT_EQ(cuGraphAddMemcpyNode(&memcpy_node, graph_, nullptr, 0, &copy, context_), CUDA_SUCCESS);
  CUDA_MEMCPY3D copy_got{};
  ASSERT_EQ(cuGraphMemcpyNodeGetParams(memcpy_node, &copy_got), CUDA_SUCCESS);
  EXPECT_EQ(std::memcmp(&copy_got, &copy, sizeof copy), 0);

  const CUDA_MEMSET_NODE_PARAMS memset = memset_params(0xabcd, 16);
  CUgraphNode memset_node = nullptr;
  ASSERT_EQ(cuGraphAddMemsetNode(&memset_node, graph_, &memcpy_node, 1, &memset, context_),
            CUDA_SUCCESS);
  CUDA_MEMSET_NODE_PARAMS memset_got{};
  ASSERT_EQ(cuGraphMemsetNodeGetParams(memset_node, &memset_got), CUDA_SUCCESS);
  EXPECT_EQ(std::memcmp(&memset_got, &memset, sizeof memset), 0);

  CUevent event = nullptr, other_event = nullptr;
  ASSERT_EQ(cuEventCreate(&event, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuEventCreate(&other_event, 0), CUDA_SUCCESS);
  CUgraphNode record = nullptr, wait = nullptr;
  ASSERT_EQ(cuGraphAddEventRecordNode(&record, graph_, nullptr, 0, event), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphAddEventWaitNode(&wait, graph_, nullptr, 0, event), CUDA_SUCCESS);
  CUevent got = nullptr;
  ASSERT_EQ(cuGraphEventRecordNodeGetEvent(record, &got), CUDA_SUCCESS);
  EXPECT_EQ(got, event);
  ASSERT_EQ(cuGraphEventWaitNodeSetEvent(wait, other_event), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphEventWaitNodeGetEvent(wait, &got), CUDA_SUCCESS);
  EXPECT_EQ(got, other_event);

  // A child graph node owns a clone: the graph given stays the caller's, the embedded one is
  // the node's, and changes to it are the node's.
  CUgraph child = nullptr;
  ASSERT_EQ(cuGraphCreate(&child, 0), CUDA_SUCCESS);
  CUgraphNode child_empty = nullptr;
  ASSERT_EQ(cuGraphAddEmptyNode(&child_empty, child, nullptr, 0), CUDA_SUCCESS);
  CUgraphNode child_node = nullptr;
  ASSERT_EQ(cuGraphAddChildGraphNode(&child_node, graph_, nullptr, 0, child), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphDestroy(child), CUDA_SUCCESS);
  CUgraph embedded = nullptr;
  ASSERT_EQ(cuGraphChildGraphNodeGetGraph(child_node, &embedded), CUDA_SUCCESS);
  size_t embedded_nodes = 0;
  ASSERT_EQ(cuGraphGetNodes(embedded, nullptr, &embedded_nodes), CUDA_SUCCESS);
  EXPECT_EQ(embedded_nodes, 1u);
  EXPECT_EQ(cuGraphDestroy(embedded), CUDA_ERROR_INVALID_HANDLE);  // the node's, not ours

  const CUgraphNode empty = add_empty({memset_node, record});
  CUgraphNodeType type{};
  ASSERT_EQ(cuGraphNodeGetType(empty, &type), CUDA_SUCCESS);
  EXPECT_EQ(type, CU_GRAPH_NODE_TYPE_EMPTY);
  ASSERT_EQ(cuGraphNodeGetType(child_node, &type), CUDA_SUCCESS);
  EXPECT_EQ(type, CU_GRAPH_NODE_TYPE_GRAPH);

  // A call for another kind of node, or on what is no node, is refused.
  EXPECT_EQ(cuGraphMemcpyNodeGetParams(memset_node, &copy_got), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGraphMemsetNodeGetParams(memcpy_node, &memset_got), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGraphEventRecordNodeGetEvent(wait, &got), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGraphChildGraphNodeGetGraph(empty, &embedded), CUDA_ERROR_INVALID_VALUE);
  CUDA_KERNEL_NODE_PARAMS kernel{};
  EXPECT_EQ(cuGraphKernelNodeGetParams(empty, &kernel), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGraphNodeGetType(reinterpret_cast<CUgraphNode>(&kernel), &type),
            CUDA_ERROR_INVALID_VALUE);
  // Parameters the driver refuses: elements of 3 bytes, memory outside any allocation, an
  // unknown event.
  CUDA_MEMSET_NODE_PARAMS odd = memset;
  odd.elementSize = 3;
  CUgraphNode refused = nullptr;
  EXPECT_EQ(cuGraphAddMemsetNode(&refused, graph_, nullptr, 0, &odd, context_),
            CUDA_ERROR_INVALID_VALUE);
  CUDA_MEMCPY3D beyond = copy_params(kBytes + 1);
  EXPECT_EQ(cuGraphAddMemcpyNode(&refused, graph_, nullptr, 0, &beyond, context_),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGraphAddEventRecordNode(&refused, graph_, nullptr, 0,
                                      reinterpret_cast<CUevent>(uintptr_t{0x7e7e7e00})),
            CUDA_ERROR_INVALID_VALUE);
  size_t nodes = 0;
  ASSERT_EQ(cuGraphGetNodes(graph_, nullptr, &nodes), CUDA_SUCCESS);
  EXPECT_EQ(nodes, 6u);
  EXPECT_EQ(cuEventDestroy(event), CUDA_SUCCESS);
  EXPECT_EQ(cuEventDestroy(other_event), CUDA_SUCCESS);
}

TEST_F(SimulatedGraph, edges_and_dependencies_answer_with_the_drivers_count_conventions) {
  // A diamond: a -> b, a -> c, b -> d, c -> d.
  const CUgraphNode a = add_empty();
  const CUgraphNode b = add_empty({a});
  const CUgraphNode c = add_scale({a});
  const CUgraphNode d = add_empty({b, c});
  size_t edges = 0;
  ASSERT_EQ(cuGraphGetEdges(graph_, nullptr, nullptr, nullptr, &edges), CUDA_SUCCESS);
  EXPECT_EQ(edges, 4u);
  CUgraphNode from[6] = {}, to[6] = {};
  CUgraphEdgeData data[6] = {};
  edges = 6;
  ASSERT_EQ(cuGraphGetEdges(graph_, from, to, data, &edges), CUDA_SUCCESS);
  EXPECT_EQ(edges, 4u);
  EXPECT_EQ(from[0], a);
  EXPECT_EQ(to[0], b);
  EXPECT_EQ(from[3], c);
  EXPECT_EQ(to[3], d);
  EXPECT_EQ(from[4], nullptr);  // beyond the edges: nulled
  EXPECT_EQ(to[5], nullptr);
  edges = 2;  // fewer than there are: that many written
  ASSERT_EQ(cuGraphGetEdges(graph_, from, to, nullptr, &edges), CUDA_SUCCESS);
  EXPECT_EQ(edges, 2u);
  EXPECT_EQ(cuGraphGetEdges(graph_, from, nullptr, nullptr, &edges), CUDA_ERROR_INVALID_VALUE);

  size_t count = 0;
  ASSERT_EQ(cuGraphNodeGetDependencies(d, nullptr, nullptr, &count), CUDA_SUCCESS);
  EXPECT_EQ(count, 2u);
  CUgraphNode nodes[3] = {};
  count = 3;
  ASSERT_EQ(cuGraphNodeGetDependencies(d, nodes, nullptr, &count), CUDA_SUCCESS);
  EXPECT_EQ(count, 2u);
  EXPECT_EQ(nodes[0], b);
  EXPECT_EQ(nodes[1], c);
  EXPECT_EQ(nodes[2], nullptr);
  count = 3;
  ASSERT_EQ(cuGraphNodeGetDependentNodes(a, nodes, nullptr, &count), CUDA_SUCCESS);
  EXPECT_EQ(count, 2u);
  EXPECT_EQ(nodes[0], b);
  EXPECT_EQ(nodes[1], c);
  count = 1;
  ASSERT_EQ(cuGraphGetRootNodes(graph_, nodes, &count), CUDA_SUCCESS);
  EXPECT_EQ(nodes[0], a);

  // Added and removed: an edge that exists, one closing a cycle, one to itself are refused.
  const CUgraphNode existing[] = {a};
  const CUgraphNode existing_to[] = {b};
  EXPECT_EQ(cuGraphAddDependencies(graph_, existing, existing_to, nullptr, 1),
            CUDA_ERROR_INVALID_VALUE);
  const CUgraphNode back_from[] = {d};
  const CUgraphNode back_to[] = {a};
  EXPECT_EQ(cuGraphAddDependencies(graph_, back_from, back_to, nullptr, 1),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGraphAddDependencies(graph_, back_from, back_from, nullptr, 1),
            CUDA_ERROR_INVALID_VALUE);
  const CUgraphNode shortcut_from[] = {a};
  const CUgraphNode shortcut_to[] = {d};
  ASSERT_EQ(cuGraphAddDependencies(graph_, shortcut_from, shortcut_to, nullptr, 1), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphNodeGetDependencies(d, nullptr, nullptr, &count), CUDA_SUCCESS);
  EXPECT_EQ(count, 3u);
  ASSERT_EQ(cuGraphRemoveDependencies(graph_, shortcut_from, shortcut_to, nullptr, 1),
            CUDA_SUCCESS);
  EXPECT_EQ(cuGraphRemoveDependencies(graph_, shortcut_from, shortcut_to, nullptr, 1),
            CUDA_ERROR_INVALID_VALUE);  // gone already

  // Edge data: a programmatic edge between kernel nodes; queried without data it would be lost.
  const CUgraphNode e = add_scale();
  CUgraphEdgeData programmatic{};
  programmatic.type = CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC;
  programmatic.from_port = CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC;
  const CUgraphNode kernel_from[] = {c};
  const CUgraphNode kernel_to[] = {e};
  ASSERT_EQ(cuGraphAddDependencies(graph_, kernel_from, kernel_to, &programmatic, 1), CUDA_SUCCESS);
  count = 1;
  CUgraphEdgeData got{};
  EXPECT_EQ(cuGraphNodeGetDependencies(e, nodes, nullptr, &count), CUDA_ERROR_LOSSY_QUERY);
  ASSERT_EQ(cuGraphNodeGetDependencies(e, nodes, &got, &count), CUDA_SUCCESS);
  EXPECT_EQ(nodes[0], c);
  EXPECT_EQ(got.type, CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC);
  EXPECT_EQ(cuGraphRemoveDependencies(graph_, kernel_from, kernel_to, nullptr, 1),
            CUDA_ERROR_INVALID_VALUE);  // not with the default data
  const CUgraphNode empty_from[] = {a};
  EXPECT_EQ(cuGraphAddDependencies(graph_, empty_from, kernel_to, &programmatic, 1),
            CUDA_ERROR_INVALID_VALUE);  // a programmatic port out of an empty node

  // A node of another graph is no dependency here.
  CUgraph other = nullptr;
  ASSERT_EQ(cuGraphCreate(&other, 0), CUDA_SUCCESS);
  CUgraphNode stranger = nullptr;
  EXPECT_EQ(cuGraphAddEmptyNode(&stranger, other, &a, 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGraphDestroy(other), CUDA_SUCCESS);
}

TEST_F(SimulatedGraph, a_destroyed_node_takes_its_edges_with_it) {
  const CUgraphNode a = add_empty();
  const CUgraphNode b = add_empty({a});
  const CUgraphNode c = add_empty({b});
  ASSERT_EQ(cuGraphDestroyNode(b), CUDA_SUCCESS);
  size_t count = 0;
  ASSERT_EQ(cuGraphGetEdges(graph_, nullptr, nullptr, nullptr, &count), CUDA_SUCCESS);
  EXPECT_EQ(count, 0u);
  ASSERT_EQ(cuGraphGetRootNodes(graph_, nullptr, &count), CUDA_SUCCESS);
  EXPECT_EQ(count, 2u);
  CUgraphNodeType type{};
  EXPECT_EQ(cuGraphNodeGetType(b, &type), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGraphDestroyNode(b), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(cuGraphNodeGetDependencies(c, nullptr, nullptr, &count), CUDA_SUCCESS);
  EXPECT_EQ(count, 0u);
}

TEST_F(SimulatedGraph, a_clone_finds_the_copy_of_each_original_node) {
  const CUgraphNode a = add_scale();
  const CUgraphNode b = add_empty({a});
  CUgraph clone = nullptr;
  ASSERT_EQ(cuGraphClone(&clone, graph_), CUDA_SUCCESS);
  CUgraphNode copy_a = nullptr, copy_b = nullptr;
  ASSERT_EQ(cuGraphNodeFindInClone(&copy_a, a, clone), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphNodeFindInClone(&copy_b, b, clone), CUDA_SUCCESS);
  EXPECT_NE(copy_a, a);
  CUgraphNode dependency = nullptr;
  size_t count = 1;
  ASSERT_EQ(cuGraphNodeGetDependencies(copy_b, &dependency, nullptr, &count), CUDA_SUCCESS);
  EXPECT_EQ(dependency, copy_a);
  CUDA_KERNEL_NODE_PARAMS got{};
  ASSERT_EQ(cuGraphKernelNodeGetParams(copy_a, &got), CUDA_SUCCESS);
  EXPECT_EQ(got.func, scale_);
  CUgraphNode none = nullptr;
  EXPECT_EQ(cuGraphNodeFindInClone(&none, copy_a, graph_), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(cuGraphDestroyNode(copy_b), CUDA_SUCCESS);
  EXPECT_EQ(cuGraphNodeFindInClone(&none, b, clone), CUDA_ERROR_INVALID_VALUE);  // removed
  EXPECT_EQ(cuGraphDestroy(clone), CUDA_SUCCESS);
}

TEST_F(SimulatedGraph, kernel_node_attributes_are_kept_read_back_and_copied) {
  const CUgraphNode a = add_scale();
  const CUgraphNode b = add_scale();
  CUkernelNodeAttrValue value{};
  value.priority = 99;  // something to be overwritten
  ASSERT_EQ(cuGraphKernelNodeGetAttribute(a, CU_LAUNCH_ATTRIBUTE_PRIORITY, &value), CUDA_SUCCESS);
  EXPECT_EQ(value.priority, 0);  // never set: zeroed
  value.priority = 3;
  ASSERT_EQ(cuGraphKernelNodeSetAttribute(a, CU_LAUNCH_ATTRIBUTE_PRIORITY, &value), CUDA_SUCCESS);
  CUkernelNodeAttrValue got{};
  ASSERT_EQ(cuGraphKernelNodeGetAttribute(a, CU_LAUNCH_ATTRIBUTE_PRIORITY, &got), CUDA_SUCCESS);
  EXPECT_EQ(got.priority, 3);
  ASSERT_EQ(cuGraphKernelNodeCopyAttributes(b, a), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphKernelNodeGetAttribute(b, CU_LAUNCH_ATTRIBUTE_PRIORITY, &got), CUDA_SUCCESS);
  EXPECT_EQ(got.priority, 3);
  const CUgraphNode empty = add_empty();
  EXPECT_EQ(cuGraphKernelNodeGetAttribute(empty, CU_LAUNCH_ATTRIBUTE_PRIORITY, &got),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGraphKernelNodeSetAttribute(a, CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY, &value),
            CUDA_ERROR_INVALID_VALUE);  // a stream's attribute, not a node's
}

TEST_F(SimulatedGraph, the_dot_description_labels_every_node_with_its_type_and_draws_its_edges) {
  const CUgraphNode a = add_scale();
  const CUDA_MEMSET_NODE_PARAMS memset = memset_params(1, 1);
  CUgraphNode b = nullptr;
  ASSERT_EQ(cuGraphAddMemsetNode(&b, graph_, &a, 1, &memset, context_), CUDA_SUCCESS);
  add_empty({b});
  const std::string path = records_path_ + ".dot";
  ASSERT_EQ(cuGraphDebugDotPrint(graph_, path.c_str(), 0), CUDA_SUCCESS);
  std::ifstream in(path);
  const std::string dot((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::remove(path.c_str());
  EXPECT_EQ(dot.rfind("digraph", 0), 0u) << dot;
  EXPECT_NE(dot.find("label=\"kernel scale\""), std::string::npos) << dot;
  EXPECT_NE(dot.find("label=\"memset\""), std::string::npos) << dot;
  EXPECT_NE(dot.find("label=\"empty\""), std::string::npos) << dot;
  EXPECT_NE(dot.find("node0 -> node1;"), std::string::npos) << dot;
  EXPECT_NE(dot.find("node1 -> node2;"), std::string::npos) << dot;
}

TEST_F(SimulatedGraph, unknown_handles_and_null_pointers_are_refused) {
  const auto bogus_graph = reinterpret_cast<CUgraph>(uintptr_t{0x7e7e7e00});
  const auto bogus_node = reinterpret_cast<CUgraphNode>(uintptr_t{0x7e7e7e00});
  const auto bogus_exec = reinterpret_cast<CUgraphExec>(uintptr_t{0x7e7e7e00});
  CUgraphNode node = nullptr;
  EXPECT_EQ(cuGraphAddEmptyNode(&node, bogus_graph, nullptr, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGraphAddEmptyNode(nullptr, graph_, nullptr, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGraphAddEmptyNode(&node, graph_, nullptr, 1), CUDA_ERROR_INVALID_VALUE);
  size_t count = 0;
  EXPECT_EQ(cuGraphGetNodes(bogus_graph, nullptr, &count), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGraphGetNodes(graph_, nullptr, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGraphNodeGetDependencies(bogus_node, nullptr, nullptr, &count),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGraphGetEdges(graph_, nullptr, nullptr, nullptr, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGraphDestroyNode(bogus_node), CUDA_ERROR_INVALID_VALUE);
  const CUgraphNode empty = add_empty();
  unsigned enabled = 0;
  EXPECT_EQ(cuGraphNodeGetEnabled(bogus_exec, empty, &enabled), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGraphExecEventRecordNodeSetEvent(bogus_exec, empty, nullptr),
            CUDA_ERROR_INVALID_VALUE);
  CUDA_MEM_ALLOC_NODE_PARAMS alloc{};  // no location: refused
  alloc.bytesize = 64;
  EXPECT_EQ(cuGraphAddMemAllocNode(&node, graph_, nullptr, 0, &alloc), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGraphAddMemAllocNode(&node, graph_, nullptr, 0, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGraphMemFreeNodeGetParams(empty, nullptr), CUDA_ERROR_INVALID_VALUE);
}

}  // namespace
}  // namespace gvirtus::testing
