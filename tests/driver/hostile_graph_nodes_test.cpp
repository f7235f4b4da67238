// Graphs built node by node, as a hostile client sends them (wire: plugins/cuda/common/
// graph_node_wire.h), against a backend on the simulated device: nodes, graphs, events and
// functions the session never got, parameter buffers unlike the kernel's layout, memset and copy
// nodes over memory that is not the session's, and malformed requests (a copy node naming the
// client's memory, lists and descriptor counts over their limits, an attribute or a shape query
// no driver defines). A bad argument is answered with the driver's own error and the session goes
// on; a malformed request ends only its own session.
#include <cuda.h>
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "common/call_marshal.h"
#include "common/wire.h"
#include "common/wire_record.h"
#include "cuda_calls.h"
#include "hostile_driver.h"
#include "plugins/cuda/common/graph_node_wire.h"

namespace gvirtus::testing {
namespace {

class HostileGraphNodes : public HostileDriver {
 protected:
  // A handle from a create call's reply (its presence byte, then the handle).
  template <typename T>
  static T created(const Reply& r) {
    T handle{};
    if (r.rest.size() >= 1 + sizeof handle) std::memcpy(&handle, r.rest.data() + 1, sizeof handle);
    return handle;
  }

  static CUgraph graph(Client& c) {
    CUgraph g = nullptr;
    const Reply r = call(c, cu::Fn::cuGraphCreate, [&](WireWriter& w) {
      mr::put_output(w, &g);
      mr::put_value(w, 0u);
    });
    EXPECT_EQ(r.status, CUDA_SUCCESS);
    return created<CUgraph>(r);
  }

  static CUdeviceptr allocation(Client& c, size_t bytes) {
    CUdeviceptr d = 0;
    const Reply r = call(c, cu::Fn::cuMemAlloc_v2, [&](WireWriter& w) {
      mr::put_output(w, &d);
      mr::put_value(w, bytes);
    });
    EXPECT_EQ(r.status, CUDA_SUCCESS);
    return created<CUdeviceptr>(r);
  }

  // An add request's head: the graph and its dependencies.
  static void head(WireWriter& w, CUgraph g, const std::vector<CUgraphNode>& dependencies = {}) {
    mr::put_value(w, g);
    w.put<uint32_t>(static_cast<uint32_t>(dependencies.size()));
    for (CUgraphNode node : dependencies) mr::put_value(w, node);
  }

  static Reply add_memset(Client& c, CUgraph g, CUdeviceptr dst, uint64_t width,
                          uint32_t element_size = 4) {
    return call(c, cu::Fn::cuGraphAddMemsetNode, [&](WireWriter& w) {
      head(w, g);
      put_record(w, cu::MemsetNodeRecord{dst, 0, 0, element_size, width, 1, nullptr});
    });
  }

  // A device-to-device copy node of `bytes` from `src` to `dst`, with the sides' kinds given.
  static Reply add_copy(Client& c, CUgraph g, CUdeviceptr dst, CUdeviceptr src, uint64_t bytes,
                        cu::BoxSide src_kind = cu::BoxSide::kDevice) {
    cu::ArrayBoxRequest box{};
    box.src_side = static_cast<uint32_t>(src_kind), box.src_device = src;
    box.dst_side = static_cast<uint32_t>(cu::BoxSide::kDevice), box.dst_device = dst;
    box.src_pitch = box.dst_pitch = bytes;
    box.src_height = box.dst_height = 1;
    box.width = bytes, box.height = 1, box.depth = 1;
    return call(c, cu::Fn::cuGraphAddMemcpyNode, [&](WireWriter& w) {
      head(w, g);
      put_record(w, box);
      mr::put_value(w, CUcontext{nullptr});
    });
  }

  static Reply add_empty(Client& c, CUgraph g, const std::vector<CUgraphNode>& dependencies) {
    return call(c, cu::Fn::cuGraphAddEmptyNode, [&](WireWriter& w) { head(w, g, dependencies); });
  }

  // A node from an add's reply (the node follows the status).
  static CUgraphNode node_of(const Reply& r) {
    CUgraphNode node = nullptr;
    if (r.rest.size() >= sizeof node) std::memcpy(&node, r.rest.data(), sizeof node);
    return node;
  }
};

const auto kForeignGraph = reinterpret_cast<CUgraph>(uintptr_t{0x5000});
const auto kForeignNode = reinterpret_cast<CUgraphNode>(uintptr_t{0x6000});

TEST_F(HostileGraphNodes, graphs_and_dependencies_the_session_never_got_are_refused) {
  const auto owned = client();
  Client& c = *owned;
  Reply r = add_empty(c, kForeignGraph, {});
  EXPECT_EQ(r.status, CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(node_of(r), nullptr) << "no node after a failure";
  const CUgraph g = graph(c);
  EXPECT_EQ(add_empty(c, g, {kForeignNode}).status, CUDA_ERROR_INVALID_VALUE);
  // Queries and edits naming a node the session never got: refused before the driver sees it.
  r = call(c, cu::Fn::cuGraphNodeGetType, [&](WireWriter& w) { mr::put_value(w, kForeignNode); });
  EXPECT_EQ(r.status, CUDA_ERROR_INVALID_VALUE);
  r = call(c, cu::Fn::cuGraphKernelNodeGetParams_v2,
           [&](WireWriter& w) { mr::put_value(w, kForeignNode); });
  EXPECT_EQ(r.status, CUDA_ERROR_INVALID_VALUE);
  EXPECT_TRUE(r.rest.empty()) << "no parameters after a failure";
  r = call(c, cu::Fn::cuGraphDestroyNode, [&](WireWriter& w) { mr::put_value(w, kForeignNode); });
  EXPECT_EQ(r.status, CUDA_ERROR_INVALID_VALUE);
  r = call(c, cu::Fn::cuGraphAddDependencies_v2, [&](WireWriter& w) {
    mr::put_value(w, g);
    w.put<uint32_t>(1);
    mr::put_value(w, kForeignNode);
    mr::put_value(w, kForeignNode);
    w.put_bool(false);
  });
  EXPECT_EQ(r.status, CUDA_ERROR_INVALID_VALUE);
  r = call(c, cu::Fn::cuGraphNodeGetDependencies_v2, [&](WireWriter& w) {
    mr::put_value(w, kForeignNode);
    w.put<uint8_t>(cu::kShapeNodes | cu::kShapeCount);
    w.put<uint64_t>(4);
  });
  EXPECT_EQ(r.status, CUDA_ERROR_INVALID_VALUE);
  EXPECT_TRUE(r.rest.empty());
  r = call(c, cu::Fn::cuGraphGetEdges_v2, [&](WireWriter& w) {
    mr::put_value(w, kForeignGraph);
    w.put<uint8_t>(cu::kShapeCount);
    w.put<uint64_t>(0);
  });
  EXPECT_EQ(r.status, CUDA_ERROR_INVALID_HANDLE);
  // An event node's event must be the session's.
  r = call(c, cu::Fn::cuGraphAddEventRecordNode, [&](WireWriter& w) {
    head(w, g);
    mr::put_value(w, reinterpret_cast<CUevent>(uintptr_t{0x7000}));
  });
  EXPECT_EQ(r.status, CUDA_ERROR_INVALID_HANDLE);
  // A child graph the session never got.
  r = call(c, cu::Fn::cuGraphAddChildGraphNode, [&](WireWriter& w) {
    head(w, g);
    mr::put_value(w, kForeignGraph);
    w.put<uint32_t>(CU_GRAPH_CHILD_GRAPH_OWNERSHIP_CLONE);
  });
  EXPECT_EQ(r.status, CUDA_ERROR_INVALID_HANDLE);
  expect_session_goes_on(c);
}

TEST_F(HostileGraphNodes, memset_and_copy_nodes_name_only_the_sessions_memory_all_of_it) {
  const auto owned = client();
  Client& c = *owned;
  const CUgraph g = graph(c);
  const CUdeviceptr a = allocation(c, 1024), b = allocation(c, 1024);
  const CUdeviceptr foreign = 0x10000;
  EXPECT_EQ(add_memset(c, g, foreign, 16).status, CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(add_memset(c, g, a, 257).status, CUDA_ERROR_INVALID_VALUE) << "one word past the end";
  EXPECT_EQ(add_memset(c, g, a, 16, 3).status, CUDA_ERROR_INVALID_VALUE) << "no 3-byte elements";
  EXPECT_EQ(add_copy(c, g, a, foreign, 64).status, CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(add_copy(c, g, a, b + 1000, 64).status, CUDA_ERROR_INVALID_VALUE) << "past the end";
  EXPECT_EQ(add_copy(c, g, foreign, b, 64).status, CUDA_ERROR_INVALID_VALUE);
  // A free node names the session's memory.
  const Reply r = call(c, cu::Fn::cuGraphAddMemFreeNode, [&](WireWriter& w) {
    head(w, g);
    w.put<uint64_t>(foreign);
  });
  EXPECT_EQ(r.status, CUDA_ERROR_INVALID_VALUE);
  expect_session_goes_on(c);
}

TEST_F(HostileGraphNodes, a_kernel_nodes_arguments_must_match_its_layout) {
  const auto owned = client();
  Client& c = *owned;
  const CUgraph g = graph(c);
  const CUfunction saxpy_function = saxpy(c);
  ASSERT_NE(saxpy_function, nullptr);
  const auto add_kernel = [&](CUfunction f, size_t argument_bytes) {
    const std::vector<std::byte> arguments(argument_bytes);
    return call(c, cu::Fn::cuGraphAddKernelNode_v2, [&](WireWriter& w) {
      head(w, g);
      put_record(w, cu::KernelNodeRecord{f, nullptr, nullptr, 1, 1, 1, 32, 1, 1, 0});
      w.put_blob(arguments.data(), arguments.size());
    });
  };
  EXPECT_EQ(add_kernel(saxpy_function, 16).status, CUDA_ERROR_INVALID_VALUE) << "short";
  EXPECT_EQ(add_kernel(saxpy_function, 32).status, CUDA_ERROR_INVALID_VALUE) << "long";
  EXPECT_EQ(add_kernel(reinterpret_cast<CUfunction>(uintptr_t{0x8000}), 24).status,
            CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(add_kernel(nullptr, 0).status, CUDA_ERROR_INVALID_VALUE) << "no code at all";
  expect_session_goes_on(c);
}

TEST_F(HostileGraphNodes, a_copy_node_naming_the_clients_memory_ends_only_its_session) {
  const auto owned = client();
  Client& c = *owned;
  const CUgraph g = graph(c);
  const CUdeviceptr a = allocation(c, 1024);
  const Reply r = add_copy(c, g, a, 0x1000, 64, cu::BoxSide::kHost);
  EXPECT_NE(r.error, ErrorKind{0});
  expect_session_ended_alone(c);
}

TEST_F(HostileGraphNodes, a_dependency_list_over_the_limit_ends_only_its_session) {
  const auto owned = client();
  Client& c = *owned;
  const CUgraph g = graph(c);
  const Reply r = call(c, cu::Fn::cuGraphAddEmptyNode, [&](WireWriter& w) {
    mr::put_value(w, g);
    w.put<uint32_t>(0xffffffffu);  // and no nodes after it
  });
  EXPECT_NE(r.error, ErrorKind{0});
  expect_session_ended_alone(c);
}

TEST_F(HostileGraphNodes, access_descriptors_over_the_limit_end_only_their_session) {
  const auto owned = client();
  Client& c = *owned;
  const CUgraph g = graph(c);
  const Reply r = call(c, cu::Fn::cuGraphAddMemAllocNode, [&](WireWriter& w) {
    head(w, g);
    put_record(w, cu::MemAllocNodeRecord{CU_MEM_ALLOCATION_TYPE_PINNED, 0,
                                         CU_MEM_LOCATION_TYPE_DEVICE, 0, 1 << 20});
    w.put<uint32_t>(cu::kMaxAccessDescs + 1);
  });
  EXPECT_NE(r.error, ErrorKind{0});
  expect_session_ended_alone(c);
}

TEST_F(HostileGraphNodes, an_attribute_or_a_query_no_driver_defines_ends_only_its_session) {
  const auto owned = client();
  Client& c = *owned;
  Reply r = call(c, cu::Fn::cuGraphKernelNodeGetAttribute, [&](WireWriter& w) {
    mr::put_value(w, kForeignNode);
    w.put<int32_t>(0x7fffffff);
  });
  EXPECT_NE(r.error, ErrorKind{0});
  expect_session_ended_alone(c);
  const auto second = client();
  r = call(*second, cu::Fn::cuGraphNodeGetDependentNodes_v2, [&](WireWriter& w) {
    mr::put_value(w, kForeignNode);
    w.put<uint8_t>(0x80);
    w.put<uint64_t>(0);
  });
  EXPECT_NE(r.error, ErrorKind{0});
  expect_session_ended_alone(*second);
}

}  // namespace
}  // namespace gvirtus::testing
