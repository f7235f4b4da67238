// Graphs built node by node, as a hostile client sends them (wire: plugins/cuda/common/
// graph_node_wire.h), against a backend on the simulated device: nodes, graphs, events and
// functions the session never got, parameter buffers unlike the kernel's layout, memset and copy
// nodes over memory that is not the session's, and malformed requests (a copy node naming the
// client's memory, lists and descriptor counts over their limits, an attribute or a shape query
// no driver defines), and host nodes and host functions (their tokens, and the gates' "next"). A
// bad argument is answered with the driver's own error and the session goes on; a malformed request
// ends only its own session.
#include <cuda.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "common/call_marshal.h"
#include "common/wire.h"
#include "common/wire_record.h"
#include "cuda_calls.h"
#include "hostile_driver.h"
#include "plugins/cuda/common/graph_node_wire.h"
#include "protocol/core_calls.h"

namespace gvirtus::testing {
namespace {

class HostileGraphNodes : public HostileDriver {
 protected:
  static CUgraph graph(Client& c) {
    return create_with_no_flags<CUgraph>(c, cu::Fn::cuGraphCreate);
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

  // The gates' "next" from its own thread, as the stub's callback thread calls it: releases `done`,
  // waits up to `wait_ms` for a reached gate. The reply's bytes after the status.
  static std::vector<std::byte> next_gate(Client& c, uint64_t done, uint32_t wait_ms) {
    std::vector<std::byte> rest;
    std::thread([&] {
      // As the stub's callback thread does first: its calls wait for no call sent ahead.
      c.call(core::call_id(core::Fn::kServesTheClient), {},
             [](WireReader& in) { in.expect_end(); });
      const Reply r = call(c, cu::Fn::gvirtusHostCallbackNext, [&](WireWriter& w) {
        w.put<uint64_t>(done);
        w.put<uint32_t>(wait_ms);
      });
      EXPECT_EQ(r.status, CUDA_SUCCESS);
      rest = r.rest;
    }).join();
    return rest;
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

// A destroyed graph's nodes are nobody's: named again, they are refused before the driver, which
// would read freed memory (natively the query is undefined).
TEST_F(HostileGraphNodes, a_destroyed_graphs_nodes_are_refused) {
  const auto owned = client();
  Client& c = *owned;
  const CUgraph g = graph(c);
  const Reply added = add_empty(c, g, {});
  ASSERT_EQ(added.status, CUDA_SUCCESS);
  const CUgraphNode node = node_of(added);
  const auto type_of = [&](CUgraphNode n) {
    return call(c, cu::Fn::cuGraphNodeGetType, [&](WireWriter& w) { mr::put_value(w, n); }).status;
  };
  EXPECT_EQ(type_of(node), CUDA_SUCCESS);
  ASSERT_EQ(call(c, cu::Fn::cuGraphDestroy, [&](WireWriter& w) { mr::put_value(w, g); }).status,
            CUDA_SUCCESS);
  EXPECT_EQ(type_of(node), CUDA_ERROR_INVALID_VALUE);
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
  // A side named by a unified address is vetted as device memory all the same.
  EXPECT_EQ(add_copy(c, g, a, b, 64, cu::BoxSide::kUnified).status, CUDA_SUCCESS);
  EXPECT_EQ(add_copy(c, g, a, foreign, 64, cu::BoxSide::kUnified).status, CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(add_copy(c, g, a, b + 1000, 64, cu::BoxSide::kUnified).status, CUDA_ERROR_INVALID_VALUE)
      << "past the end";
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

// Memory a graph's allocation node placed: the session's until the graph is destroyed, unless an
// executable graph was instantiated from it - whose launches place that memory, where it stays
// until freed (NVIDIA's graphMemoryFootprint frees it with cudaFree once the graph is gone).
TEST_F(HostileGraphNodes, graph_memory_outlives_its_graph_once_instantiated_until_freed) {
  const auto owned = client();
  Client& c = *owned;
  const auto allocating_graph = [&](CUdeviceptr& placed) {
    const CUgraph g = graph(c);
    const Reply r = call(c, cu::Fn::cuGraphAddMemAllocNode, [&](WireWriter& w) {
      head(w, g);
      put_record(w, cu::MemAllocNodeRecord{CU_MEM_ALLOCATION_TYPE_PINNED, 0,
                                           CU_MEM_LOCATION_TYPE_DEVICE, 0, 1 << 20});
      w.put<uint32_t>(0);  // no access descriptors
    });
    EXPECT_EQ(r.status, CUDA_SUCCESS);
    WireReader reply(r.rest, "cuGraphAddMemAllocNode's reply");
    (void)mr::get_value<CUgraphNode>(reply);
    placed = reply.get<uint64_t>();
    return g;
  };
  const auto destroy = [&](CUgraph g) {
    return call(c, cu::Fn::cuGraphDestroy, [&](WireWriter& w) { mr::put_value(w, g); }).status;
  };
  const auto free_memory = [&](CUdeviceptr address) {
    return call(c, cu::Fn::cuMemFree_v2, [&](WireWriter& w) { mr::put_value(w, address); }).status;
  };
  // Never instantiated: its memory goes with it.
  CUdeviceptr gone = 0;
  const CUgraph plain = allocating_graph(gone);
  ASSERT_NE(gone, 0u);
  EXPECT_EQ(destroy(plain), CUDA_SUCCESS);
  EXPECT_EQ(free_memory(gone), CUDA_ERROR_INVALID_VALUE);
  // Instantiated, then destroyed: its memory stays the session's until freed, once.
  CUdeviceptr kept = 0;
  const CUgraph instantiated = allocating_graph(kept);
  CUgraphExec exec = nullptr;
  Reply r = call(c, cu::Fn::cuGraphInstantiateWithFlags, [&](WireWriter& w) {
    mr::put_output(w, &exec);
    mr::put_value(w, instantiated);
    mr::put_value(w, 0ull);  // flags
  });
  ASSERT_EQ(r.status, CUDA_SUCCESS);
  EXPECT_EQ(destroy(instantiated), CUDA_SUCCESS);
  EXPECT_EQ(free_memory(kept), CUDA_SUCCESS);
  EXPECT_EQ(free_memory(kept), CUDA_ERROR_INVALID_VALUE) << "freed once";
  expect_session_goes_on(c);
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

TEST_F(HostileGraphNodes, host_nodes_take_only_the_sessions_graphs_and_nodes_and_a_token) {
  const auto owned = client();
  Client& c = *owned;
  const CUgraph g = graph(c);
  auto add_host = [&](CUgraph to, uint64_t token) {
    return call(c, cu::Fn::cuGraphAddHostNode, [&](WireWriter& w) {
      head(w, to);
      w.put<uint64_t>(token);
    });
  };
  Reply r = add_host(g, 0);
  EXPECT_EQ(r.status, CUDA_ERROR_INVALID_VALUE) << "a host node names a callback";
  EXPECT_EQ(node_of(r), nullptr);
  EXPECT_EQ(add_host(kForeignGraph, 7).status, CUDA_ERROR_INVALID_HANDLE);
  r = call(c, cu::Fn::cuGraphHostNodeGetParams,
           [&](WireWriter& w) { mr::put_value(w, kForeignNode); });
  EXPECT_EQ(r.status, CUDA_ERROR_INVALID_VALUE);
  EXPECT_TRUE(r.rest.empty());
  r = call(c, cu::Fn::cuGraphHostNodeSetParams, [&](WireWriter& w) {
    mr::put_value(w, kForeignNode);
    w.put<uint64_t>(7);
  });
  EXPECT_EQ(r.status, CUDA_ERROR_INVALID_VALUE);
  // The session's own host node gives its token back, and takes a new one.
  r = add_host(g, 42);
  ASSERT_EQ(r.status, CUDA_SUCCESS);
  const CUgraphNode node = node_of(r);
  auto token_of = [&] {
    const Reply got =
        call(c, cu::Fn::cuGraphHostNodeGetParams, [&](WireWriter& w) { mr::put_value(w, node); });
    EXPECT_EQ(got.status, CUDA_SUCCESS);
    uint64_t token = 0;
    if (got.rest.size() == sizeof token) std::memcpy(&token, got.rest.data(), sizeof token);
    return token;
  };
  EXPECT_EQ(token_of(), 42u);
  r = call(c, cu::Fn::cuGraphHostNodeSetParams, [&](WireWriter& w) {
    mr::put_value(w, node);
    w.put<uint64_t>(43);
  });
  EXPECT_EQ(r.status, CUDA_SUCCESS);
  EXPECT_EQ(token_of(), 43u);
  // A host function enqueue needs a token and a stream of the session's.
  auto enqueue = [&](CUstream stream, uint64_t token) {
    return call(c, cu::Fn::cuLaunchHostFunc, [&](WireWriter& w) {
      mr::put_value(w, stream);
      w.put<uint64_t>(token);
    });
  };
  EXPECT_EQ(enqueue(nullptr, 0).status, CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(enqueue(reinterpret_cast<CUstream>(uintptr_t{0x8000}), 5).status,
            CUDA_ERROR_INVALID_HANDLE);
  // "next" releasing a run never handed out, with nothing reached: nothing, after its wait.
  const std::vector<std::byte> nothing = next_gate(c, 12345, 20);
  ASSERT_EQ(nothing.size(), 1u);
  EXPECT_EQ(nothing[0], std::byte{0});
  expect_session_goes_on(c);
}

TEST_F(HostileGraphNodes, a_host_function_holds_its_stream_until_the_client_releases_it) {
  const auto owned = client();
  Client& c = *owned;
  // As the stub does before its first host function: no call may wait on the reading thread.
  c.call(core::call_id(core::Fn::kServeOnExecutors), {}, [](WireReader& in) { in.expect_end(); });
  // The simulated device runs a host function as it is enqueued: the enqueue waits for its gate.
  std::atomic<bool> enqueued{false};
  Reply enqueue_reply;
  std::thread enqueuer([&] {
    enqueue_reply = call(c, cu::Fn::cuLaunchHostFunc, [&](WireWriter& w) {
      mr::put_value(w, CUstream{nullptr});
      w.put<uint64_t>(77);
    });
    enqueued = true;
  });
  const std::vector<std::byte> reached = next_gate(c, 0, 5000);
  ASSERT_EQ(reached.size(), 1u + 8 + 8 + 4 + 1);
  EXPECT_EQ(reached[0], std::byte{1});
  uint64_t run = 0, token = 0;
  std::memcpy(&run, reached.data() + 1, sizeof run);
  std::memcpy(&token, reached.data() + 9, sizeof token);
  EXPECT_EQ(token, 77u);
  EXPECT_EQ(reached.back(), std::byte{1}) << "a stream's host function runs once";
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(enqueued) << "the stream waits for the client's function";
  const std::vector<std::byte> after = next_gate(c, run, 0);  // releases it
  enqueuer.join();
  EXPECT_TRUE(enqueued);
  EXPECT_EQ(enqueue_reply.status, CUDA_SUCCESS);
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0], std::byte{0});
  expect_session_goes_on(c);
}

TEST_F(HostileGraphNodes, a_client_that_leaves_a_host_function_waiting_frees_its_session) {
  {
    const auto owned = client();
    Client& c = *owned;
    c.call(core::call_id(core::Fn::kServeOnExecutors), {}, [](WireReader& in) { in.expect_end(); });
    const ByteView payload[] = {[&] {
      static WireWriter w;
      w.clear();
      mr::put_value(w, CUstream{nullptr});
      w.put<uint64_t>(78);
      return w.view();
    }()};
    c.send_async(cu::call_id(cu::Fn::cuLaunchHostFunc), payload);
    c.flush_async();
    const std::vector<std::byte> reached = next_gate(c, 0, 5000);
    ASSERT_FALSE(reached.empty());
    EXPECT_EQ(reached[0], std::byte{1});
  }  // gone without releasing it
  // The worker ends (its gate stops waiting once the client is gone), and the backend serves on.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (backend_.log().find("exited with status 0") == std::string::npos &&
         std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_NE(backend_.log().find("exited with status 0"), std::string::npos) << backend_.log();
  const auto fresh = client();
  EXPECT_TRUE(ping(*fresh));
}

TEST_F(HostileGraphNodes, user_object_references_the_session_does_not_hold_are_refused) {
  const auto owned = client();
  Client& c = *owned;
  const Reply made = call(c, cu::Fn::cuUserObjectCreate, [&](WireWriter& w) {
    w.put<uint64_t>(91);  // the destructor's token: no callback thread runs it here
    w.put<uint32_t>(1);
    w.put<uint32_t>(CU_USER_OBJECT_NO_DESTRUCTOR_SYNC);
  });
  ASSERT_EQ(made.status, CUDA_SUCCESS);
  ASSERT_EQ(made.rest.size(), sizeof(uint64_t));
  CUuserObject object = nullptr;
  std::memcpy(&object, made.rest.data(), sizeof object);
  auto about = [&](cu::Fn fn, CUgraph g, CUuserObject o, uint32_t count) {
    return call(c, fn,
                [&](WireWriter& w) {
                  if (fn == cu::Fn::cuGraphRetainUserObject ||
                      fn == cu::Fn::cuGraphReleaseUserObject) {
                    mr::put_value(w, g);
                  }
                  mr::put_value(w, o);
                  w.put<uint32_t>(count);
                  if (fn == cu::Fn::cuGraphRetainUserObject) w.put<uint32_t>(0);
                })
        .status;
  };
  const auto foreign = reinterpret_cast<CUuserObject>(uintptr_t{0x9000});
  EXPECT_EQ(about(cu::Fn::cuUserObjectRetain, nullptr, foreign, 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(about(cu::Fn::cuUserObjectRelease, nullptr, object, 2), CUDA_ERROR_INVALID_VALUE)
      << "one reference held, two released: the driver would free it and go on with it";
  EXPECT_EQ(about(cu::Fn::cuUserObjectRetain, nullptr, object, 0), CUDA_ERROR_INVALID_VALUE);
  const CUgraph g = graph(c);
  EXPECT_EQ(about(cu::Fn::cuGraphRetainUserObject, g, object, 1), CUDA_SUCCESS);
  EXPECT_EQ(about(cu::Fn::cuGraphReleaseUserObject, g, object, 2), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(about(cu::Fn::cuGraphReleaseUserObject, kForeignGraph, object, 1),
            CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(about(cu::Fn::cuGraphReleaseUserObject, g, object, 1), CUDA_SUCCESS);
  EXPECT_EQ(about(cu::Fn::cuUserObjectRelease, nullptr, object, 1), CUDA_SUCCESS);
  // Every reference is gone: the handle is refused from now on.
  EXPECT_EQ(about(cu::Fn::cuUserObjectRetain, nullptr, object, 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(about(cu::Fn::cuUserObjectRelease, nullptr, object, 1), CUDA_ERROR_INVALID_VALUE);
  // Its destructor was handed to the client, once, with nothing waiting for it.
  const std::vector<std::byte> reached = next_gate(c, 0, 5000);
  ASSERT_EQ(reached.size(), 1u + 8 + 8 + 4 + 1);
  uint64_t token = 0;
  std::memcpy(&token, reached.data() + 9, sizeof token);
  EXPECT_EQ(token, 91u);
  EXPECT_EQ(reached.back(), std::byte{1});
  expect_session_goes_on(c);
}

TEST_F(HostileGraphNodes, a_capture_into_a_graph_takes_only_the_sessions_graph_and_nodes) {
  const auto owned = client();
  Client& c = *owned;
  const CUgraph g = graph(c);
  auto begin = [&](CUgraph into, const std::vector<CUgraphNode>& dependencies) {
    return call(c, cu::Fn::cuStreamBeginCaptureToGraph,
                [&](WireWriter& w) {
                  mr::put_value(w, CUstream{nullptr});
                  mr::put_value(w, into);
                  w.put<uint32_t>(static_cast<uint32_t>(dependencies.size()));
                  for (CUgraphNode node : dependencies) mr::put_value(w, node);
                  w.put_bool(false);
                  w.put<uint32_t>(CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
                })
        .status;
  };
  EXPECT_EQ(begin(kForeignGraph, {}), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(begin(g, {kForeignNode}), CUDA_ERROR_INVALID_VALUE);
  // The dependencies of a stream that captures nothing: the driver's answer, and no node of
  // another graph (nor one never handed out) reaches the driver.
  auto update = [&](const std::vector<CUgraphNode>& nodes) {
    return call(c, cu::Fn::cuStreamUpdateCaptureDependencies_v2,
                [&](WireWriter& w) {
                  mr::put_value(w, CUstream{nullptr});
                  w.put<uint32_t>(static_cast<uint32_t>(nodes.size()));
                  for (CUgraphNode node : nodes) mr::put_value(w, node);
                  w.put_bool(false);
                  w.put<uint32_t>(CU_STREAM_SET_CAPTURE_DEPENDENCIES);
                })
        .status;
  };
  EXPECT_EQ(update({kForeignNode}), CUDA_ERROR_ILLEGAL_STATE);
  expect_session_goes_on(c);
  // A list longer than any graph may have is malformed: it ends only its session.
  const Reply r = call(c, cu::Fn::cuStreamUpdateCaptureDependencies_v2, [&](WireWriter& w) {
    mr::put_value(w, CUstream{nullptr});
    w.put<uint32_t>(static_cast<uint32_t>(cu::kMaxNodeEdges + 1));
  });
  EXPECT_NE(r.error, ErrorKind{0});
  expect_session_ended_alone(c);
}

}  // namespace
}  // namespace gvirtus::testing

namespace gvirtus::testing {
namespace {

// The reply's u64 at `offset` bytes after the status (0 when it is not there).
uint64_t word_at(const Reply& r, size_t offset) {
  uint64_t value = 0;
  if (r.rest.size() >= offset + sizeof value) {
    std::memcpy(&value, r.rest.data() + offset, sizeof value);
  }
  return value;
}

class HostileConditionals : public HostileGraphNodes {
 protected:
  static Reply make_handle(Client& c, CUgraph g) {
    return call(c, cu::Fn::cuGraphConditionalHandleCreate, [&](WireWriter& w) {
      mr::put_value(w, g);
      mr::put_value(w, CUcontext{});
      w.put<uint32_t>(1);
      w.put<uint32_t>(CU_GRAPH_COND_ASSIGN_DEFAULT);
    });
  }
  static Reply add(Client& c, CUgraph g, uint64_t handle, uint32_t type, uint32_t size) {
    return call(c, cu::Fn::gvirtusGraphAddConditionalNode, [&](WireWriter& w) {
      head(w, g);
      w.put<uint64_t>(handle);
      w.put<uint32_t>(type);
      w.put<uint32_t>(size);
      mr::put_value(w, CUcontext{});
    });
  }
};

TEST_F(HostileConditionals, a_conditional_node_names_only_a_handle_made_for_its_own_graph) {
  const auto owned = client();
  Client& c = *owned;
  const CUgraph g = graph(c);
  const CUgraph other = graph(c);
  Reply r = make_handle(c, kForeignGraph);
  EXPECT_EQ(r.status, CUDA_ERROR_INVALID_HANDLE) << "a graph the session never got";
  r = make_handle(c, g);
  ASSERT_EQ(r.status, CUDA_SUCCESS);
  const uint64_t handle = word_at(r, 0);
  EXPECT_NE(handle, 0u);
  // Another graph's handle, and one never made: refused before the driver sees them.
  EXPECT_EQ(add(c, other, handle, CU_GRAPH_COND_TYPE_IF, 1).status, CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(add(c, g, handle + 1000, CU_GRAPH_COND_TYPE_IF, 1).status, CUDA_ERROR_INVALID_VALUE);
  EXPECT_TRUE(backend_.logged("not a handle this session made for the node's graph"))
      << backend_.log();
  // More bodies than a reply carries.
  EXPECT_EQ(add(c, g, handle, CU_GRAPH_COND_TYPE_SWITCH, cu::kMaxConditionalBodies + 1).status,
            CUDA_ERROR_INVALID_VALUE);
  // Its own handle: the node and its bodies, which take nodes of their own.
  r = add(c, g, handle, CU_GRAPH_COND_TYPE_IF, 2);
  ASSERT_EQ(r.status, CUDA_SUCCESS);
  EXPECT_NE(word_at(r, 0), 0u) << "the node";
  ASSERT_GE(r.rest.size(), 8u + 4u + 16u);
  uint32_t bodies = 0;
  std::memcpy(&bodies, r.rest.data() + 8, sizeof bodies);
  EXPECT_EQ(bodies, 2u);
  const auto body = reinterpret_cast<CUgraph>(word_at(r, 12));
  EXPECT_EQ(add_empty(c, body, {}).status, CUDA_SUCCESS) << "a body takes nodes";
  // A body is its node's: never the session's to destroy.
  r = call(c, cu::Fn::cuGraphDestroy, [&](WireWriter& w) { mr::put_value(w, body); });
  EXPECT_EQ(r.status, CUDA_ERROR_INVALID_VALUE);
  // Once its graph is gone, the handle is gone too.
  r = call(c, cu::Fn::cuGraphDestroy, [&](WireWriter& w) { mr::put_value(w, g); });
  EXPECT_EQ(r.status, CUDA_SUCCESS);
  EXPECT_EQ(add_empty(c, body, {}).status, CUDA_ERROR_INVALID_HANDLE) << "the body went with it";
  EXPECT_EQ(add(c, other, handle, CU_GRAPH_COND_TYPE_IF, 1).status, CUDA_ERROR_INVALID_VALUE);
  expect_session_goes_on(c);
}

}  // namespace
}  // namespace gvirtus::testing

namespace gvirtus::testing {
namespace {

class HostileMemOpNodes : public HostileGraphNodes {
 protected:
  static Reply add_ops(Client& c, CUgraph g, const std::vector<cu::MemOpRecord>& ops) {
    return call(c, cu::Fn::cuGraphAddBatchMemOpNode, [&](WireWriter& w) {
      head(w, g);
      mr::put_value(w, CUcontext{});
      w.put<uint32_t>(0);
      w.put<uint32_t>(static_cast<uint32_t>(ops.size()));
      for (const auto& op : ops) put_record(w, op);
    });
  }
};

TEST_F(HostileMemOpNodes, a_batch_nodes_words_must_be_the_sessions_device_memory) {
  const auto owned = client();
  Client& c = *owned;
  const CUgraph g = graph(c);
  const CUdeviceptr word = allocation(c, 64);
  EXPECT_EQ(add_ops(c, g, {{CU_STREAM_MEM_OP_WRITE_VALUE_32, word + 60, 1, 0}}).status,
            CUDA_SUCCESS);
  EXPECT_EQ(add_ops(c, g, {{CU_STREAM_MEM_OP_WRITE_VALUE_64, word + 60, 1, 0}}).status,
            CUDA_ERROR_INVALID_VALUE)
      << "8 bytes from 4 before the allocation's end";
  EXPECT_EQ(add_ops(c, g, {{CU_STREAM_MEM_OP_WAIT_VALUE_32, 0x1000, 1, 0}}).status,
            CUDA_ERROR_INVALID_VALUE)
      << "no memory of the session's";
  EXPECT_EQ(add_ops(c, kForeignGraph, {{CU_STREAM_MEM_OP_BARRIER, 0, 0, 0}}).status,
            CUDA_ERROR_INVALID_HANDLE);
  expect_session_goes_on(c);
  // An operation no driver defines is malformed.
  EXPECT_NE(add_ops(c, g, {{99, word, 1, 0}}).error, ErrorKind{0});
  expect_session_ended_alone(c);
}

}  // namespace
}  // namespace gvirtus::testing
