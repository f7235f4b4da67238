// Handles and device pointers a client names are vetted before they reach NVIDIA's runtime
// (backend/vetting.h): through a real backend, a made-up stream, event or pool handle gets
// cudaErrorInvalidResourceHandle (on every machine: the check runs before the runtime), the
// worker's own memory is never accepted as device memory, and the session goes on. With a GPU,
// the handles a session created work, and a destroyed one, or another session's, is refused.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include "common/wire.h"
#include "common/wire_record.h"
#include "frontend/client.h"
#include "plugins/cudart/common/array_wire.h"
#include "plugins/cudart/common/graph_node_wire.h"
#include "plugins/cudart/common/graph_wire.h"
#include "plugins/cudart/common/memcpy_wire.h"
#include "plugins/cudart/cudart_calls.h"
#include "support/backend_process.h"
#include "support/core_calls.h"

namespace gvirtus::testing {
namespace {

namespace cr = cudart;

constexpr uint64_t kMadeUpHandle = 0x7f00deadbee0;

class Vetting : public ::testing::TestWithParam<TestTransport> {
 protected:
  Vetting() : backend_("", R"(["cudart"])", GetParam()) {}

  Client client() { return Client(backend_.client_config(), {to_ref(cr::kIdentity)}); }

  // A synchronous cudart call: its result, and the rest of its reply in `rest` if asked.
  static cudaError_t call(Client& client, cr::Fn fn, const WireWriter& request,
                          std::string* rest = nullptr) {
    const ByteView piece = request.view();
    int32_t result = -1;
    client.call(cr::call_id(fn), std::span(&piece, 1), [&](WireReader& in) {
      result = in.get<int32_t>();
      const auto more = in.get_raw(in.remaining());
      if (rest != nullptr) rest->assign(reinterpret_cast<const char*>(more.data()), more.size());
    });
    return static_cast<cudaError_t>(result);
  }

  static void post(Client& client, cr::Fn fn, const WireWriter& request) {
    const ByteView piece = request.view();
    client.send_async(cr::call_id(fn), std::span(&piece, 1));
  }

  static WireWriter handle(uint64_t value) {
    WireWriter w;
    w.put<uint64_t>(value);
    return w;
  }

  static cudaError_t last_error(Client& client, bool reset) {
    return call(client, reset ? cr::Fn::cudaGetLastError : cr::Fn::cudaPeekAtLastError,
                WireWriter());
  }

  // What the backend's runtime says of its devices: cudaSuccess with a count, or its own error.
  static cudaError_t device_count(Client& client, int& count) {
    WireWriter w;
    w.put<uint8_t>(1);
    w.put<int32_t>(0);
    std::string rest;
    const cudaError_t result = call(client, cr::Fn::cudaGetDeviceCount, w, &rest);
    count = 0;
    if (rest.size() == 1 + sizeof(int32_t)) std::memcpy(&count, rest.data() + 1, sizeof count);
    return result;
  }

  // A stream created on the backend, if its runtime can create one.
  static std::optional<uint64_t> create_stream(Client& client) {
    WireWriter w;
    w.put<uint8_t>(1);
    w.put<uint64_t>(0);
    std::string rest;
    if (call(client, cr::Fn::cudaStreamCreate, w, &rest) != cudaSuccess) return std::nullopt;
    uint64_t stream = 0;
    if (rest.size() != 1 + sizeof stream) return std::nullopt;
    std::memcpy(&stream, rest.data() + 1, sizeof stream);
    return stream;
  }

  bool logged(const std::string& text) {
    return eventually(5000, [&] { return backend_.log().find(text) != std::string::npos; });
  }

  BackendProcess backend_;
};

TEST_P(Vetting, made_up_stream_event_and_pool_handles_are_refused_and_the_session_goes_on) {
  Client c = client();
  EXPECT_EQ(call(c, cr::Fn::cudaStreamSynchronize, handle(kMadeUpHandle)),
            cudaErrorInvalidResourceHandle);
  EXPECT_EQ(call(c, cr::Fn::cudaStreamQuery, handle(kMadeUpHandle)),
            cudaErrorInvalidResourceHandle);
  EXPECT_EQ(call(c, cr::Fn::cudaStreamDestroy, handle(kMadeUpHandle)),
            cudaErrorInvalidResourceHandle);
  EXPECT_EQ(call(c, cr::Fn::cudaEventSynchronize, handle(kMadeUpHandle)),
            cudaErrorInvalidResourceHandle);
  EXPECT_EQ(call(c, cr::Fn::cudaEventDestroy, handle(kMadeUpHandle)),
            cudaErrorInvalidResourceHandle);
  WireWriter trim = handle(kMadeUpHandle);
  trim.put<uint64_t>(0);
  EXPECT_EQ(call(c, cr::Fn::cudaMemPoolTrimTo, trim), cudaErrorInvalidResourceHandle);
  // A copy on a made-up stream: refused before any byte is copied, so no data comes back.
  WireWriter pull;
  put_record(pull, cr::MemcpyRequest{nullptr, reinterpret_cast<const void*>(0x1000), 64,
                                     cudaMemcpyDeviceToHost,
                                     reinterpret_cast<cudaStream_t>(kMadeUpHandle)});
  std::string data;
  EXPECT_EQ(call(c, cr::Fn::cudaMemcpyAsync, pull, &data), cudaErrorInvalidResourceHandle);
  EXPECT_TRUE(data.empty());
  EXPECT_TRUE(logged("rejected stream")) << backend_.log();
  EXPECT_TRUE(ping(c));
}

// Arrays, mipmapped arrays and texture and surface objects the session never made: refused
// before the runtime (which would dereference an array, or look an object up in its tables),
// and a copy out of a made-up array brings no data back.
TEST_P(Vetting, made_up_arrays_and_texture_objects_are_refused_and_the_session_goes_on) {
  Client c = client();
  for (const cr::Fn fn :
       {cr::Fn::cudaFreeArray, cr::Fn::cudaFreeMipmappedArray, cr::Fn::cudaDestroyTextureObject,
        cr::Fn::cudaDestroySurfaceObject, cr::Fn::cudaGetTextureObjectResourceDesc,
        cr::Fn::cudaGetTextureObjectTextureDesc, cr::Fn::cudaGetSurfaceObjectResourceDesc}) {
    EXPECT_EQ(call(c, fn, handle(kMadeUpHandle)), cudaErrorInvalidResourceHandle)
        << static_cast<int>(fn);
  }
  for (const cr::Fn fn : {cr::Fn::cudaGetMipmappedArrayLevel, cr::Fn::cudaArrayGetPlane}) {
    WireWriter child = handle(kMadeUpHandle);
    child.put<uint32_t>(0);
    std::string rest;
    EXPECT_EQ(call(c, fn, child, &rest), cudaErrorInvalidResourceHandle) << static_cast<int>(fn);
    EXPECT_EQ(rest, std::string(sizeof(uint64_t), '\0'));  // no handle handed out
  }
  // A read-only array (cudaArray_const_t, a view of the array kind) is vetted as an array.
  WireWriter channel;
  channel.put<uint8_t>(1);
  channel.put_raw(std::string(sizeof(cudaChannelFormatDesc), '\0').data(),
                  sizeof(cudaChannelFormatDesc));
  channel.put<uint64_t>(kMadeUpHandle);
  EXPECT_EQ(call(c, cr::Fn::cudaGetChannelDesc, channel), cudaErrorInvalidResourceHandle);
  WireWriter pull;
  put_record(pull, cr::ArrayCopyRequest{reinterpret_cast<cudaArray_t>(kMadeUpHandle), 0, 0, nullptr,
                                        64, 64, 1, 0, cudaMemcpyDeviceToHost, nullptr});
  std::string data;
  EXPECT_EQ(call(c, cr::Fn::cudaMemcpy2DFromArray, pull, &data), cudaErrorInvalidResourceHandle);
  EXPECT_TRUE(data.empty());
  // A texture over a made-up array.
  cudaResourceDesc resource{};
  resource.resType = cudaResourceTypeArray;
  resource.res.array.array = reinterpret_cast<cudaArray_t>(kMadeUpHandle);
  const cudaTextureDesc texture{};
  WireWriter create;
  create.put<uint32_t>(0);
  create.put_raw(&resource, sizeof resource);
  create.put_raw(&texture, sizeof texture);
  EXPECT_EQ(call(c, cr::Fn::cudaCreateTextureObject, create), cudaErrorInvalidResourceHandle);
  // A made-up memory pool: its attributes and its destruction.
  WireWriter attribute = handle(kMadeUpHandle);
  attribute.put<uint32_t>(cudaMemPoolAttrReleaseThreshold);
  std::string value;
  EXPECT_EQ(call(c, cr::Fn::cudaMemPoolGetAttribute, attribute, &value),
            cudaErrorInvalidResourceHandle);
  EXPECT_EQ(value, std::string(sizeof(uint64_t), '\0'));
  EXPECT_EQ(call(c, cr::Fn::cudaMemPoolDestroy, handle(kMadeUpHandle)),
            cudaErrorInvalidResourceHandle);
  // IPC: the session closes only memory it opened.
  EXPECT_EQ(call(c, cr::Fn::cudaIpcCloseMemHandle, handle(kMadeUpHandle)), cudaErrorInvalidValue);
  EXPECT_TRUE(logged("rejected array")) << backend_.log();
  EXPECT_TRUE(ping(c));
}

TEST_P(Vetting, the_runtimes_own_streams_and_null_reach_the_runtime) {
  Client c = client();
  int devices = 0;
  const cudaError_t runtime = device_count(c, devices);
  for (uint64_t stream : {uint64_t{0}, reinterpret_cast<uint64_t>(cudaStreamLegacy),
                          reinterpret_cast<uint64_t>(cudaStreamPerThread)}) {
    // The runtime's answer: success with a GPU, its initialisation error without one.
    EXPECT_EQ(call(c, cr::Fn::cudaStreamSynchronize, handle(stream)), runtime) << stream;
  }
}

TEST_P(Vetting, a_refused_asynchronous_call_is_the_threads_last_error_until_read) {
  Client c = client();
  int devices = 0;
  const cudaError_t runtime = device_count(c, devices);
  // What the runtime's last error says when nothing new has failed (without a driver it repeats
  // its initialisation error).
  (void)last_error(c, true);
  const cudaError_t quiet = last_error(c, true);
  WireWriter record = handle(kMadeUpHandle);
  record.put<uint64_t>(0);
  post(c, cr::Fn::cudaEventRecord, record);  // no reply: the rejection waits for the next query
  EXPECT_EQ(last_error(c, false), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(last_error(c, true), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(last_error(c, true), quiet);
  // A failure the runtime reports later is newer than a rejection, and replaces it.
  post(c, cr::Fn::cudaEventRecord, record);
  (void)device_count(c, devices);
  EXPECT_EQ(last_error(c, true), runtime == cudaSuccess ? cudaErrorInvalidResourceHandle : runtime);
}

// An address inside the worker process: its heap, or failing that any writable mapping.
uint64_t worker_address(pid_t worker) {
  std::ifstream maps("/proc/" + std::to_string(worker) + "/maps");
  std::string line;
  uint64_t writable = 0;
  while (std::getline(maps, line)) {
    std::istringstream fields(line);
    std::string range, perms;
    fields >> range >> perms;
    const uint64_t start = std::stoull(range.substr(0, range.find('-')), nullptr, 16);
    if (line.find("[heap]") != std::string::npos) return start + 4096;
    if (writable == 0 && perms.starts_with("rw")) writable = start;
  }
  return writable;
}

TEST_P(Vetting, the_workers_own_memory_is_never_taken_for_device_memory) {
  Client c = client();
  int devices = 0;
  const cudaError_t runtime = device_count(c, devices);
  // With a GPU the runtime knows the address as host memory and the backend refuses it; without
  // one the runtime cannot say, and its own error comes back, as the call itself would return.
  const cudaError_t expected =
      runtime == cudaSuccess && devices > 0 ? cudaErrorInvalidValue : runtime;
  ASSERT_NE(expected, cudaSuccess);
  const uint64_t inside = worker_address(static_cast<pid_t>(c.backend().worker_pid));
  ASSERT_NE(inside, 0u);

  auto* in_worker = reinterpret_cast<char*>(inside);
  WireWriter write_into;  // host to device, "device" being the worker's heap
  put_record(write_into,
             cr::MemcpyRequest{in_worker, nullptr, 64, cudaMemcpyHostToDevice, nullptr});
  write_into.put_raw(std::string(64, 'x').data(), 64);
  EXPECT_EQ(call(c, cr::Fn::cudaMemcpy, write_into), expected);

  WireWriter read_from;  // cudaMemcpyDefault, both sides in the worker
  put_record(read_from,
             cr::MemcpyRequest{in_worker, in_worker + 64, 64, cudaMemcpyDefault, nullptr});
  EXPECT_EQ(call(c, cr::Fn::cudaMemcpy, read_from), expected);

  WireWriter memset;
  memset.put<uint64_t>(inside);
  memset.put<int32_t>(0);
  memset.put<uint64_t>(64);
  EXPECT_EQ(call(c, cr::Fn::cudaMemset, memset), expected);

  WireWriter wrapping;  // a range that wraps around the address space
  put_record(wrapping, cr::MemcpyRequest{nullptr, reinterpret_cast<const void*>(UINT64_MAX - 8), 64,
                                         cudaMemcpyDeviceToHost, nullptr});
  EXPECT_EQ(call(c, cr::Fn::cudaMemcpy, wrapping), cudaErrorInvalidValue);
  EXPECT_TRUE(ping(c));
}

TEST_P(Vetting, a_sessions_streams_work_until_destroyed_and_only_for_that_session) {
  Client c = client();
  const std::optional<uint64_t> stream = create_stream(c);
  if (!stream) GTEST_SKIP() << "the backend's runtime cannot create a stream here (no GPU)";
  EXPECT_EQ(call(c, cr::Fn::cudaStreamSynchronize, handle(*stream)), cudaSuccess);
  Client other = client();
  EXPECT_EQ(call(other, cr::Fn::cudaStreamSynchronize, handle(*stream)),
            cudaErrorInvalidResourceHandle);
  EXPECT_EQ(call(c, cr::Fn::cudaStreamDestroy, handle(*stream)), cudaSuccess);
  EXPECT_EQ(call(c, cr::Fn::cudaStreamSynchronize, handle(*stream)),
            cudaErrorInvalidResourceHandle);
  EXPECT_EQ(call(c, cr::Fn::cudaStreamDestroy, handle(*stream)), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(call(c, cr::Fn::cudaDeviceReset, WireWriter()), cudaSuccess);
  const std::optional<uint64_t> after_reset = create_stream(c);
  ASSERT_TRUE(after_reset.has_value());
  EXPECT_EQ(call(c, cr::Fn::cudaDeviceReset, WireWriter()), cudaSuccess);
  EXPECT_EQ(call(c, cr::Fn::cudaStreamSynchronize, handle(*after_reset)),
            cudaErrorInvalidResourceHandle);
}

// A created handle's request: the output's (present, value) pair.
WireWriter creating() {
  WireWriter w;
  w.put<uint8_t>(1);
  w.put<uint64_t>(0);
  return w;
}

// A handle a create call returned: the reply's (present, value) pair.
std::optional<uint64_t> created(const std::string& rest) {
  uint64_t value = 0;
  if (rest.size() != 1 + sizeof value) return std::nullopt;
  std::memcpy(&value, rest.data() + 1, sizeof value);
  return value;
}

TEST_P(Vetting, made_up_graphs_and_executable_graphs_are_refused_and_the_session_goes_on) {
  Client c = client();
  (void)last_error(c, true);
  EXPECT_EQ(call(c, cr::Fn::cudaGraphDestroy, handle(kMadeUpHandle)),
            cudaErrorInvalidResourceHandle);
  EXPECT_EQ(call(c, cr::Fn::cudaGraphExecDestroy, handle(kMadeUpHandle)),
            cudaErrorInvalidResourceHandle);
  WireWriter instantiate = creating();
  instantiate.put<uint64_t>(kMadeUpHandle);
  instantiate.put<uint64_t>(0);
  EXPECT_EQ(call(c, cr::Fn::cudaGraphInstantiate, instantiate), cudaErrorInvalidResourceHandle);
  WireWriter clone = creating();
  clone.put<uint64_t>(kMadeUpHandle);
  EXPECT_EQ(call(c, cr::Fn::cudaGraphClone, clone), cudaErrorInvalidResourceHandle);
  // A graph is no executable graph, nor the other way round.
  WireWriter flags = handle(kMadeUpHandle);
  flags.put<uint8_t>(1);
  flags.put<uint64_t>(0);
  EXPECT_EQ(call(c, cr::Fn::cudaGraphExecGetFlags, flags), cudaErrorInvalidResourceHandle);
  WireWriter nodes = handle(kMadeUpHandle);
  nodes.put<uint8_t>(cr::kNodesCount);
  nodes.put<uint64_t>(0);
  std::string rest;
  EXPECT_EQ(call(c, cr::Fn::cudaGraphGetNodes, nodes, &rest), cudaErrorInvalidResourceHandle);
  EXPECT_TRUE(rest.empty());  // no outputs after a refusal
  EXPECT_EQ(call(c, cr::Fn::cudaGraphGetRootNodes, nodes), cudaErrorInvalidResourceHandle);
  WireWriter dot = handle(kMadeUpHandle);
  dot.put<uint8_t>(1);
  dot.put<uint32_t>(0);
  EXPECT_EQ(call(c, cr::Fn::cudaGraphDebugDotPrint, dot, &rest), cudaErrorInvalidResourceHandle);
  EXPECT_TRUE(rest.empty());
  WireWriter info = handle(kMadeUpHandle);  // a made-up stream
  info.put<uint8_t>(cr::kCaptureStatus | cr::kCaptureCount);
  info.put<int32_t>(cudaStreamCaptureStatusNone);  // the caller's status, id, graph and count
  info.put<uint64_t>(0);
  info.put<uint64_t>(0);
  info.put<uint64_t>(0);
  EXPECT_EQ(call(c, cr::Fn::cudaStreamGetCaptureInfo, info), cudaErrorInvalidResourceHandle);
  WireWriter begin = handle(kMadeUpHandle);
  begin.put<int32_t>(cudaStreamCaptureModeGlobal);
  EXPECT_EQ(call(c, cr::Fn::cudaStreamBeginCapture, begin), cudaErrorInvalidResourceHandle);
  // A launch is sent ahead: its refusal is the thread's last error.
  WireWriter launch = handle(kMadeUpHandle);
  launch.put<uint64_t>(0);
  post(c, cr::Fn::cudaGraphLaunch, launch);
  EXPECT_EQ(last_error(c, true), cudaErrorInvalidResourceHandle);
  EXPECT_TRUE(logged("rejected graph")) << backend_.log();
  EXPECT_TRUE(logged("rejected executable graph")) << backend_.log();
  EXPECT_TRUE(ping(c));
}

// Graph nodes are the runtime's pointers into its graphs: one the session was never handed, in
// any place a node travels (named, a dependency, an edge's end), is refused before the runtime;
// a memset or copy node's memory is vetted as device memory; the session goes on.
TEST_P(Vetting, made_up_graph_nodes_are_refused_and_the_session_goes_on) {
  Client c = client();
  (void)last_error(c, true);
  std::string rest;
  EXPECT_EQ(call(c, cr::Fn::cudaGraphNodeGetType, handle(kMadeUpHandle), &rest),
            cudaErrorInvalidResourceHandle);
  EXPECT_TRUE(rest.empty());
  EXPECT_EQ(call(c, cr::Fn::cudaGraphDestroyNode, handle(kMadeUpHandle)),
            cudaErrorInvalidResourceHandle);
  WireWriter add = handle(0);  // a null graph, the runtime's to judge; a made-up dependency
  add.put<uint32_t>(1);
  add.put<uint64_t>(kMadeUpHandle);
  EXPECT_EQ(call(c, cr::Fn::cudaGraphAddEmptyNode, add, &rest), cudaErrorInvalidResourceHandle);
  EXPECT_TRUE(rest.empty());  // no node after a refusal
  WireWriter edges = handle(0);
  edges.put<uint32_t>(1);
  edges.put<uint64_t>(0);
  edges.put<uint64_t>(kMadeUpHandle);
  edges.put<uint8_t>(0);
  EXPECT_EQ(call(c, cr::Fn::cudaGraphAddDependencies, edges), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(call(c, cr::Fn::cudaGraphRemoveDependencies, edges), cudaErrorInvalidResourceHandle);
  WireWriter neighbours = handle(kMadeUpHandle);
  neighbours.put<uint8_t>(cr::kShapeCount);
  neighbours.put<uint64_t>(0);
  EXPECT_EQ(call(c, cr::Fn::cudaGraphNodeGetDependencies, neighbours, &rest),
            cudaErrorInvalidResourceHandle);
  EXPECT_TRUE(rest.empty());
  EXPECT_EQ(call(c, cr::Fn::cudaGraphNodeGetDependentNodes, neighbours),
            cudaErrorInvalidResourceHandle);
  WireWriter find = handle(kMadeUpHandle);
  find.put<uint64_t>(0);
  EXPECT_EQ(call(c, cr::Fn::cudaGraphNodeFindInClone, find), cudaErrorInvalidResourceHandle);
  WireWriter enabled = handle(0);  // a null executable graph, a made-up node
  enabled.put<uint64_t>(kMadeUpHandle);
  enabled.put<uint32_t>(1);
  EXPECT_EQ(call(c, cr::Fn::cudaGraphNodeSetEnabled, enabled), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(call(c, cr::Fn::cudaGraphKernelNodeGetParams, handle(kMadeUpHandle)),
            cudaErrorInvalidResourceHandle);
  EXPECT_EQ(call(c, cr::Fn::cudaGraphMemcpyNodeGetParams, handle(kMadeUpHandle)),
            cudaErrorInvalidResourceHandle);
  EXPECT_EQ(call(c, cr::Fn::cudaGraphChildGraphNodeGetGraph, handle(kMadeUpHandle)),
            cudaErrorInvalidResourceHandle);
  // A made-up event in an event node, a made-up graph as a child.
  WireWriter record = handle(0);
  record.put<uint32_t>(0);
  record.put<uint64_t>(kMadeUpHandle);
  EXPECT_EQ(call(c, cr::Fn::cudaGraphAddEventRecordNode, record), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(call(c, cr::Fn::cudaGraphAddChildGraphNode, record), cudaErrorInvalidResourceHandle);
  WireWriter set_event = handle(0);  // a null node, a made-up event
  set_event.put<uint64_t>(kMadeUpHandle);
  EXPECT_EQ(call(c, cr::Fn::cudaGraphEventWaitNodeSetEvent, set_event),
            cudaErrorInvalidResourceHandle);
  WireWriter attribute = handle(0);  // a null node, a made-up programmatic event
  attribute.put<int32_t>(cudaLaunchAttributeProgrammaticEvent);
  cudaLaunchAttributeValue value{};
  value.programmaticEvent.event = reinterpret_cast<cudaEvent_t>(kMadeUpHandle);
  attribute.put_raw(&value, sizeof value);
  EXPECT_EQ(call(c, cr::Fn::cudaGraphKernelNodeSetAttribute, attribute),
            cudaErrorInvalidResourceHandle);
  // The worker's own memory as a memset node's destination, or a copy node's source: never device
  // memory (with a GPU cudaErrorInvalidValue, the runtime's own init error without one).
  static int worker_like = 0;
  WireWriter memset = handle(0);
  memset.put<uint32_t>(0);
  put_record(memset, cr::MemsetNodeWire{reinterpret_cast<uint64_t>(&worker_like), 0, 0, 1, 4, 1});
  EXPECT_NE(call(c, cr::Fn::cudaGraphAddMemsetNode, memset), cudaSuccess);
  WireWriter copy = handle(0);
  copy.put<uint32_t>(0);
  put_record(copy, cr::Memcpy1DNodeWire{0, reinterpret_cast<uint64_t>(&worker_like), 4,
                                        cudaMemcpyDeviceToDevice});
  EXPECT_NE(call(c, cr::Fn::cudaGraphAddMemcpyNode1D, copy), cudaSuccess);
  // An extent that wraps the address space.
  WireWriter wrapping = handle(0);
  wrapping.put<uint32_t>(0);
  put_record(wrapping, cr::MemsetNodeWire{0x1000, UINT64_MAX / 2, 0, 4, 1, 4});
  EXPECT_EQ(call(c, cr::Fn::cudaGraphAddMemsetNode, wrapping), cudaErrorInvalidValue);
  EXPECT_EQ(last_error(c, true), cudaErrorInvalidValue);
  EXPECT_TRUE(logged("rejected graph node")) << backend_.log();
  EXPECT_TRUE(ping(c));
}

// A graph that a child graph node owns (cudaGraphChildGraphNodeGetGraph) is the session's to use
// but not to destroy; it goes with its node, and the nodes of a destroyed graph with it.
TEST_P(Vetting, a_graphs_nodes_go_with_it_and_a_child_graph_with_its_node) {
  Client c = client();
  auto create_graph = [&]() -> std::optional<uint64_t> {
    WireWriter create = creating();
    create.put<uint32_t>(0);
    std::string rest;
    if (call(c, cr::Fn::cudaGraphCreate, create, &rest) != cudaSuccess) return std::nullopt;
    return created(rest);
  };
  const std::optional<uint64_t> graph = create_graph();
  if (!graph) GTEST_SKIP() << "the backend's runtime cannot create a graph here (no GPU)";
  const std::optional<uint64_t> inner = create_graph();
  ASSERT_TRUE(inner.has_value());
  auto node_of = [](const std::string& rest) {
    uint64_t node = 0;
    if (rest.size() == sizeof node) std::memcpy(&node, rest.data(), sizeof node);
    return node;
  };
  std::string rest;
  WireWriter empty = handle(*inner);
  empty.put<uint32_t>(0);
  ASSERT_EQ(call(c, cr::Fn::cudaGraphAddEmptyNode, empty, &rest), cudaSuccess);
  WireWriter child = handle(*graph);
  child.put<uint32_t>(0);
  child.put<uint64_t>(*inner);
  ASSERT_EQ(call(c, cr::Fn::cudaGraphAddChildGraphNode, child, &rest), cudaSuccess);
  const uint64_t child_node = node_of(rest);
  ASSERT_EQ(call(c, cr::Fn::cudaGraphChildGraphNodeGetGraph, handle(child_node), &rest),
            cudaSuccess);
  const uint64_t owned = node_of(rest);
  EXPECT_EQ(call(c, cr::Fn::cudaGraphDestroy, handle(owned)), cudaErrorInvalidValue);
  WireWriter nodes = handle(owned);
  nodes.put<uint8_t>(cr::kNodesArray | cr::kNodesCount);
  nodes.put<uint64_t>(1);
  ASSERT_EQ(call(c, cr::Fn::cudaGraphGetNodes, nodes, &rest), cudaSuccess);
  uint64_t owned_node = 0;  // after the count and n
  ASSERT_EQ(rest.size(), sizeof(uint64_t) + sizeof(uint32_t) + sizeof owned_node);
  std::memcpy(&owned_node, rest.data() + sizeof(uint64_t) + sizeof(uint32_t), sizeof owned_node);
  EXPECT_EQ(call(c, cr::Fn::cudaGraphNodeGetType, handle(owned_node)), cudaSuccess);
  EXPECT_EQ(call(c, cr::Fn::cudaGraphDestroy, handle(*graph)), cudaSuccess);
  EXPECT_EQ(call(c, cr::Fn::cudaGraphNodeGetType, handle(child_node)),
            cudaErrorInvalidResourceHandle);
  EXPECT_EQ(call(c, cr::Fn::cudaGraphNodeGetType, handle(owned_node)),
            cudaErrorInvalidResourceHandle);
  EXPECT_EQ(call(c, cr::Fn::cudaGraphGetNodes, nodes), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(call(c, cr::Fn::cudaGraphDestroy, handle(*inner)), cudaSuccess);
}

// cudaGraphInstantiateWithParams: the upload stream is vetted when the flags ask for an upload,
// and left to the runtime (which ignores it) otherwise; the outputs come back either way.
TEST_P(Vetting, an_instantiation_uploads_only_to_a_stream_of_the_session) {
  Client c = client();
  auto request = [](uint64_t flags) {
    WireWriter w;
    w.put<uint8_t>(1);
    w.put<uint64_t>(0);  // the executable graph as the caller left it
    w.put<uint64_t>(0);  // a null graph: the runtime's to refuse
    w.put<uint8_t>(1);
    w.put<uint64_t>(flags);
    w.put<uint64_t>(kMadeUpHandle);  // the upload stream
    w.put<uint64_t>(0);
    w.put<int32_t>(cudaGraphInstantiateError);
    return w;
  };
  std::string rest;
  EXPECT_EQ(call(c, cr::Fn::cudaGraphInstantiateWithParams, request(cudaGraphInstantiateFlagUpload),
                 &rest),
            cudaErrorInvalidResourceHandle);
  EXPECT_EQ(rest.size(), 2 * sizeof(uint64_t) + sizeof(int32_t));
  EXPECT_NE(call(c, cr::Fn::cudaGraphInstantiateWithParams, request(0), &rest),
            cudaErrorInvalidResourceHandle);
  EXPECT_EQ(rest.size(), 2 * sizeof(uint64_t) + sizeof(int32_t));
  EXPECT_TRUE(ping(c));
}

TEST_P(Vetting, a_sessions_graphs_work_until_destroyed_and_only_for_that_session) {
  Client c = client();
  WireWriter create = creating();
  create.put<uint32_t>(0);
  std::string rest;
  if (call(c, cr::Fn::cudaGraphCreate, create, &rest) != cudaSuccess) {
    GTEST_SKIP() << "the backend's runtime cannot create a graph here (no GPU)";
  }
  const std::optional<uint64_t> graph = created(rest);
  ASSERT_TRUE(graph.has_value());
  WireWriter instantiate = creating();
  instantiate.put<uint64_t>(*graph);
  instantiate.put<uint64_t>(0);
  ASSERT_EQ(call(c, cr::Fn::cudaGraphInstantiate, instantiate, &rest), cudaSuccess);
  const std::optional<uint64_t> exec = created(rest);
  ASSERT_TRUE(exec.has_value());
  WireWriter launch = handle(*exec);
  launch.put<uint64_t>(0);
  EXPECT_EQ(call(c, cr::Fn::cudaGraphLaunch, launch), cudaSuccess);

  Client other = client();
  EXPECT_EQ(call(other, cr::Fn::cudaGraphLaunch, launch), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(call(other, cr::Fn::cudaGraphDestroy, handle(*graph)), cudaErrorInvalidResourceHandle);

  // A reset destroys the executable graph with the context; the graph is no context's and stays.
  EXPECT_EQ(call(c, cr::Fn::cudaDeviceReset, WireWriter()), cudaSuccess);
  EXPECT_EQ(call(c, cr::Fn::cudaGraphLaunch, launch), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(call(c, cr::Fn::cudaGraphExecDestroy, handle(*exec)), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(call(c, cr::Fn::cudaGraphDestroy, handle(*graph)), cudaSuccess);
  EXPECT_EQ(call(c, cr::Fn::cudaGraphDestroy, handle(*graph)), cudaErrorInvalidResourceHandle);
}

INSTANTIATE_TEST_SUITE_P(Transports, Vetting,
                         ::testing::Values(TestTransport::tcp, TestTransport::shm),
                         [](const auto& info) { return std::string(to_string(info.param)); });

}  // namespace
}  // namespace gvirtus::testing
