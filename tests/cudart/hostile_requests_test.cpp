// A client that speaks the cudart table but sends requests no stub would: ids it never
// introduced, module chunks out of order or too large, impossible parameter layouts, launches
// with the wrong parameter bytes. Each must end only that client's session, with the reason in
// the backend's log; the daemon and other sessions go on.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "backend/services/staging_blocks.h"
#include "common/call_marshal.h"
#include "common/managed_batch_wire.h"
#include "common/shareable_token.h"
#include "common/wire.h"
#include "common/wire_record.h"
#include "frontend/client.h"
#include "plugins/cuda/common/jit_options.h"
#include "plugins/cudart/common/graph_node_wire.h"
#include "plugins/cudart/common/memcpy_wire.h"
#include "plugins/cudart/common/module_wire.h"
#include "plugins/cudart/common/shared_host_wire.h"
#include "plugins/cudart/cudart_calls.h"
#include "protocol/core_calls.h"
#include "support/backend_process.h"
#include "support/core_calls.h"

namespace gvirtus::testing {
namespace {

namespace cr = cudart;

class HostileCudart : public ::testing::Test {
 protected:
  explicit HostileCudart(TestTransport transport = TestTransport::tcp)
      : backend_("", R"(["cudart"])", transport) {}

  Client client() { return Client(backend_.client_config(), {to_ref(cr::kIdentity)}); }

  // Sends one cudart request; the kind of error it ends with (kFailed if it succeeded).
  static ErrorKind send(Client& client, cr::Fn fn, const WireWriter& request) {
    const ByteView piece = request.view();
    try {
      client.call(cr::call_id(fn), std::span(&piece, 1),
                  [](WireReader& in) { (void)in.get_raw(in.remaining()); });
    } catch (const Error& e) {
      return e.kind();
    }
    return ErrorKind::kFailed;
  }

  // Whether the backend logged `text` (workers log as their session ends).
  bool logged(const std::string& text) { return backend_.logged(text); }

  // The session of `client` is over, and a new client is served.
  void expect_session_ended_alone(Client& client) {
    EXPECT_NE(error_of([&] { ping(client); }), ErrorKind{0});
    Client fresh = this->client();
    EXPECT_TRUE(ping(fresh));
  }

  BackendProcess backend_;
};

TEST_F(HostileCudart, launch_of_a_kernel_never_resolved_ends_the_session) {
  Client c = client();
  WireWriter w;
  put_record(w, cr::LaunchRequest{0xdeadbeef, {1, 1, 1}, {1, 1, 1}, 0, nullptr});
  w.put_blob(nullptr, 0);
  EXPECT_EQ(send(c, cr::Fn::cudaLaunch, w), ErrorKind::kDisconnected);
  EXPECT_TRUE(logged("was not resolved")) << backend_.log();
  expect_session_ended_alone(c);
}

// cudaLaunchKernelExC with attributes (cudaLaunchEx): a count CUDA cannot have ends the session;
// an attribute naming an event the session does not hold is refused before the runtime, and the
// session goes on; valid attributes with a kernel never resolved end it, as cudaLaunch does.
WireWriter launch_ex(uint32_t count, const cudaLaunchAttribute* attributes) {
  WireWriter w;
  put_record(w, cr::LaunchRequest{0xdeadbeef, {1, 1, 1}, {1, 1, 1}, 0, nullptr});
  if (attributes != nullptr) {
    cr::put_launch_attributes(w, attributes, count);
  } else {
    w.put<uint32_t>(count);
  }
  w.put_blob(nullptr, 0);
  return w;
}

TEST_F(HostileCudart, a_launch_with_more_attributes_than_cuda_has_ends_the_session) {
  Client c = client();
  EXPECT_EQ(send(c, cr::Fn::cudaLaunchEx, launch_ex(cr::kMaxLaunchAttributes + 1, nullptr)),
            ErrorKind::kDisconnected);
  EXPECT_TRUE(logged("a launch names 33 attributes")) << backend_.log();
  expect_session_ended_alone(c);
}

TEST_F(HostileCudart, a_launch_attribute_naming_an_event_the_session_lacks_is_refused) {
  Client c = client();
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeProgrammaticEvent;
  attribute.val.programmaticEvent.event = reinterpret_cast<cudaEvent_t>(uintptr_t{0x5e5e5e5e});
  const WireWriter request = launch_ex(1, &attribute);
  const ByteView piece = request.view();
  int32_t status = -1;
  c.call(cr::call_id(cr::Fn::cudaLaunchEx), std::span(&piece, 1),
         [&](WireReader& in) { status = in.get<int32_t>(); });
  EXPECT_EQ(status, cudaErrorInvalidResourceHandle);
  EXPECT_TRUE(ping(c)) << "the session goes on";

  attribute.id = cudaLaunchAttributePriority;  // a plain figure: on to the kernel, never resolved
  attribute.val.priority = 0;
  EXPECT_EQ(send(c, cr::Fn::cudaLaunchEx, launch_ex(1, &attribute)), ErrorKind::kDisconnected);
  EXPECT_TRUE(logged("was not resolved")) << backend_.log();
  expect_session_ended_alone(c);
}

// A stream attribute of a stream the session does not hold, naming an event it does not hold, or
// with an id no header names, is refused before the runtime; the session goes on.
TEST_F(HostileCudart, a_stream_attribute_naming_what_the_session_lacks_is_refused) {
  Client c = client();
  auto status_of = [&](cr::Fn fn, uint64_t stream, int32_t id, const void* value) {
    WireWriter w;
    w.put<uint64_t>(stream);
    w.put<int32_t>(id);
    if (value != nullptr) w.put_raw(value, sizeof(cudaLaunchAttributeValue));
    const ByteView piece = w.view();
    int32_t status = -1;
    c.call(cr::call_id(fn), std::span(&piece, 1), [&](WireReader& in) {
      status = in.get<int32_t>();
      (void)in.get_raw(in.remaining());
    });
    return status;
  };
  cudaLaunchAttributeValue value{};
  value.priority = 0;
  EXPECT_EQ(
      status_of(cr::Fn::cudaStreamSetAttribute, 0x5e5e5e00, cudaLaunchAttributePriority, &value),
      cudaErrorInvalidResourceHandle);
  EXPECT_EQ(
      status_of(cr::Fn::cudaStreamGetAttribute, 0x5e5e5e00, cudaLaunchAttributePriority, nullptr),
      cudaErrorInvalidResourceHandle);
  value.programmaticEvent.event = reinterpret_cast<cudaEvent_t>(uintptr_t{0x5e5e5e5e});
  EXPECT_EQ(
      status_of(cr::Fn::cudaStreamSetAttribute, 0, cudaLaunchAttributeProgrammaticEvent, &value),
      cudaErrorInvalidResourceHandle);
  // Ids no runtime header names (the fuzzer's 0x47470000 among them) are refused before the
  // runtime, set or get: their bits are no value of cudaLaunchAttributeID.
  for (const int32_t id : {0x47470000, -1, 4096}) {
    value = cudaLaunchAttributeValue{};
    EXPECT_EQ(status_of(cr::Fn::cudaStreamSetAttribute, 0, id, &value), cudaErrorInvalidValue)
        << id;
    EXPECT_EQ(status_of(cr::Fn::cudaStreamGetAttribute, 0, id, nullptr), cudaErrorInvalidValue)
        << id;
  }
  EXPECT_TRUE(ping(c)) << "the session goes on";
}

TEST_F(HostileCudart, a_kernel_node_of_a_kernel_never_resolved_ends_the_session) {
  Client c = client();
  WireWriter w;
  w.put<uint64_t>(0);  // the graph (null: the runtime's to refuse, were the kernel known)
  w.put<uint32_t>(0);  // no dependencies
  put_record(w, cr::KernelNodeWire{0xdeadbeef, {1, 1, 1}, {1, 1, 1}, 0});
  w.put_blob(nullptr, 0);
  EXPECT_EQ(send(c, cr::Fn::cudaGraphAddKernelNode, w), ErrorKind::kDisconnected);
  EXPECT_TRUE(logged("was not resolved")) << backend_.log();
  expect_session_ended_alone(c);
}

TEST_F(HostileCudart, a_dependency_list_longer_than_its_request_ends_the_session) {
  // A million dependencies claimed, none sent: refused before anything is allocated for them.
  Client c = client();
  WireWriter w;
  w.put<uint64_t>(0);
  w.put<uint32_t>(1u << 20);
  EXPECT_EQ(send(c, cr::Fn::cudaGraphAddEmptyNode, w), ErrorKind::kDisconnected);
  EXPECT_TRUE(logged("graph node list of 1048576 nodes")) << backend_.log();
  expect_session_ended_alone(c);
}

TEST_F(HostileCudart, a_copy_node_of_a_direction_outside_its_range_ends_the_session) {
  Client c = client();
  WireWriter w;
  w.put<uint64_t>(0);
  w.put<uint32_t>(0);
  w.put<uint64_t>(0);  // Memcpy1DNodeWire: dst, src, count, then the kind's bits
  w.put<uint64_t>(0);
  w.put<uint64_t>(0);
  w.put<int32_t>(1 << 20);
  EXPECT_EQ(send(c, cr::Fn::cudaGraphAddMemcpyNode1D, w), ErrorKind::kDisconnected);
  EXPECT_TRUE(logged("outside the range of its type")) << backend_.log();
  expect_session_ended_alone(c);
}

TEST_F(HostileCudart, a_generic_node_of_a_type_never_remoted_ends_the_session) {
  // The stub refuses external semaphore nodes itself.
  Client c = client();
  WireWriter w;
  w.put<uint64_t>(0);
  w.put<uint32_t>(0);
  w.put<uint8_t>(0);  // no edge data
  w.put<int32_t>(cudaGraphNodeTypeExtSemaphoreSignal);
  EXPECT_EQ(send(c, cr::Fn::cudaGraphAddNode, w), ErrorKind::kDisconnected);
  EXPECT_TRUE(logged("graph node type " + std::to_string(cudaGraphNodeTypeExtSemaphoreSignal) +
                     " on the wire"))
      << backend_.log();
  expect_session_ended_alone(c);
}

TEST_F(HostileCudart, an_enum_value_outside_its_types_range_ends_the_session) {
  // The stub answers such values itself (StubEnums), so only a hostile client sends one; the
  // backend never turns it into an enum object (undefined behaviour) nor passes it on.
  Client c = client();
  WireWriter w;
  w.put<uint32_t>(1u << 20);  // enum cudaLimit
  w.put<uint64_t>(0);
  EXPECT_EQ(send(c, cr::Fn::cudaDeviceSetLimit, w), ErrorKind::kDisconnected);
  EXPECT_TRUE(logged("outside the range of its type")) << backend_.log();
  expect_session_ended_alone(c);
}

TEST_F(HostileCudart, a_kernel_call_naming_an_unknown_id_ends_the_session) {
  Client c = client();
  WireWriter w;
  w.put<uint8_t>(1);  // cudaFuncGetAttributes: the output (present), then the kernel id
  w.put_raw(std::string(sizeof(cudaFuncAttributes), '\0').data(), sizeof(cudaFuncAttributes));
  w.put<uint64_t>(42);
  EXPECT_EQ(send(c, cr::Fn::cudaFuncGetAttributes, w), ErrorKind::kDisconnected);
  EXPECT_TRUE(logged("kernel 42 was not resolved")) << backend_.log();
  expect_session_ended_alone(c);
}

TEST_F(HostileCudart, module_chunks_out_of_order_end_the_session) {
  Client c = client();
  WireWriter first;
  put_record(first, cr::ModuleChunk{7, 1000, 0});
  first.put_blob("0123456789", 10);
  first.put<uint32_t>(0);                                                 // no JIT options
  EXPECT_EQ(send(c, cr::Fn::cudaModuleLoad, first), ErrorKind::kFailed);  // accepted, waits
  WireWriter skip;
  put_record(skip, cr::ModuleChunk{7, 1000, 500});  // not where the module stands (10)
  skip.put_blob("0123456789", 10);
  skip.put<uint32_t>(0);
  EXPECT_EQ(send(c, cr::Fn::cudaModuleLoad, skip), ErrorKind::kDisconnected);
  EXPECT_TRUE(logged("out of order")) << backend_.log();
  expect_session_ended_alone(c);
}

TEST_F(HostileCudart, a_modules_jit_options_over_the_limit_end_the_session) {
  Client c = client();
  WireWriter w;
  put_record(w, cr::ModuleChunk{7, 10, 0});
  w.put_blob("0123456789", 10);
  w.put<uint32_t>(gvirtus::cuda::kMaxJitOptions + 1);  // and no options after it
  EXPECT_EQ(send(c, cr::Fn::cudaModuleLoad, w), ErrorKind::kDisconnected);
  expect_session_ended_alone(c);
}

TEST_F(HostileCudart, a_managed_batch_over_the_limit_or_with_more_locations_ends_the_session) {
  Client c = client();
  WireWriter w;
  w.put<uint64_t>(0);                     // the stream
  w.put<uint64_t>(0);                     // flags
  w.put<uint64_t>(kMaxManagedBatch + 1);  // ranges, and none after
  EXPECT_EQ(send(c, cr::Fn::cudaMemPrefetchBatchAsync, w), ErrorKind::kDisconnected);
  EXPECT_TRUE(logged("a managed batch of")) << backend_.log();
  expect_session_ended_alone(c);
  Client d = client();
  WireWriter v;
  v.put<uint64_t>(0);
  v.put<uint64_t>(0);
  v.put<uint64_t>(1);  // one range...
  v.put<uint64_t>(0x1000);
  v.put<uint64_t>(64);
  v.put<uint64_t>(2);  // ...and two locations for it
  EXPECT_EQ(send(d, cr::Fn::cudaMemDiscardAndPrefetchBatchAsync, v), ErrorKind::kDisconnected);
  expect_session_ended_alone(d);
}

// Pools shared between sessions (rows 301-304): a pool or pointer the session never got is
// refused before the runtime; an import whose token names no exporting session is refused and the
// session goes on; a blob of the wrong size, or a handle type the stub never sends, ends only its
// session.
TEST_F(HostileCudart, pool_sharing_is_vetted) {
  Client c = client();
  // The reply's status.
  const auto status = [](Client& client, cr::Fn fn, const WireWriter& request) {
    const ByteView piece = request.view();
    int32_t result = -1;
    client.call(cr::call_id(fn), std::span(&piece, 1), [&](WireReader& in) {
      result = in.get<int32_t>();
      (void)in.get_raw(in.remaining());
    });
    return result;
  };
  WireWriter w;
  put_record(w, ShareableRequest{0x6500, kHandlePosixFd, 0});
  EXPECT_EQ(status(c, cr::Fn::cudaMemPoolExportToShareableHandle, w),
            cudaErrorInvalidResourceHandle);
  WireWriter pointer_into_foreign;
  pointer_into_foreign.put<uint64_t>(0x6600);
  const cudaMemPoolPtrExportData data{};
  pointer_into_foreign.put_blob(&data, sizeof data);
  EXPECT_EQ(status(c, cr::Fn::cudaMemPoolImportPointer, pointer_into_foreign),
            cudaErrorInvalidResourceHandle);
  ShareableToken nobody{};
  nobody.server[5] = 0x42;
  WireWriter import;
  put_record(import, ShareableRequest{0, kHandlePosixFd, 0});
  import.put_blob(&nobody, sizeof nobody);
  EXPECT_EQ(status(c, cr::Fn::cudaMemPoolImportFromShareableHandle, import), cudaErrorInvalidValue);
  EXPECT_TRUE(ping(c)) << "the session goes on";
  WireWriter short_token;
  put_record(short_token, ShareableRequest{0, kHandlePosixFd, 0});
  short_token.put_blob(&nobody, 7);
  EXPECT_EQ(send(c, cr::Fn::cudaMemPoolImportFromShareableHandle, short_token),
            ErrorKind::kDisconnected);
  expect_session_ended_alone(c);
  Client d = client();
  WireWriter no_type;
  put_record(no_type, ShareableRequest{0x6500, 0, 0});
  EXPECT_EQ(send(d, cr::Fn::cudaMemPoolExportToShareableHandle, no_type), ErrorKind::kDisconnected);
  expect_session_ended_alone(d);
}

// Staging blocks (backend/services/staging_blocks.h) through the cudart plugin's rows: a block of
// no bytes or beyond the session's bound is refused before the runtime sees it; a transfer that
// names no block ends only its session.
TEST_F(HostileCudart, staging_blocks_are_bounded_and_transfers_outside_them_end_the_session) {
  Client c = client();
  const auto allocate = [&](uint64_t bytes) {
    WireWriter w;
    w.put<uint64_t>(bytes);
    const ByteView piece = w.view();
    int32_t result = -1;
    c.call(cr::call_id(cr::Fn::gvirtusStagingAlloc), std::span(&piece, 1), [&](WireReader& in) {
      result = in.get<int32_t>();
      (void)in.get_raw(in.remaining());
    });
    return result;
  };
  EXPECT_EQ(allocate(0), cudaErrorInvalidValue);
  EXPECT_EQ(allocate(services::kMaxStagingBytes + 1), cudaErrorMemoryAllocation);
  EXPECT_TRUE(ping(c)) << "the session goes on";
  WireWriter read;
  read.put<uint64_t>(0x10000);
  read.put<uint64_t>(16);
  EXPECT_EQ(send(c, cr::Fn::gvirtusStagingRead, read), ErrorKind::kDisconnected);
  expect_session_ended_alone(c);
  EXPECT_TRUE(logged("outside every staging block")) << backend_.log();
  Client d = client();
  WireWriter write;
  write.put<uint64_t>(0x10000);
  write.put<uint64_t>(4);
  write.put_raw("abcd", 4);
  EXPECT_EQ(send(d, cr::Fn::gvirtusStagingWrite, write), ErrorKind::kDisconnected);
  expect_session_ended_alone(d);
}

#ifdef GVIRTUS_CAPTURE_DEVICE_PRELOAD
// A backend with the capturing device (programs/capture_device.cpp), which keeps capture states
// and builds graphs of copies, over the accepting device keeping what is copied; one client.
class HostileCudartCapture : public ::testing::Test {
 protected:
  static BackendOptions options() {
    BackendOptions o;
    o.plugins = R"(["cudart"])";
    o.exec_prefix = {"env", "LD_PRELOAD=" GVIRTUS_CAPTURE_DEVICE_PRELOAD,
                     "GVIRTUS_ACCEPTING_DEVICE=keep"};
    return o;
  }

  // The call's result; `read` takes the rest of a successful reply.
  template <typename Read>
  int32_t call(cr::Fn fn, const WireWriter& request, Read&& read) {
    const ByteView piece = request.view();
    int32_t result = -1;
    client_.call(cr::call_id(fn), std::span(&piece, 1), [&](WireReader& in) {
      result = in.get<int32_t>();
      if (result == cudaSuccess) read(in);
      (void)in.get_raw(in.remaining());
    });
    return result;
  }
  int32_t call(cr::Fn fn, const WireWriter& request) {
    return call(fn, request, [](WireReader&) {});
  }

  // Device memory of the session's, or null.
  void* allocate(size_t bytes) {
    void* device = nullptr;
    WireWriter w;
    marshal::put_output(w, &device);
    marshal::put_value(w, bytes);
    return call(cr::Fn::cudaMalloc, w, [&](WireReader& in) { marshal::get_output(in, &device); }) ==
                   cudaSuccess
               ? device
               : nullptr;
  }

  BackendProcess backend_{options()};
  Client client_{backend_.client_config(), {to_ref(cr::kIdentity)}};
};

// A copy whose host side is the backend's own buffer (the request's bytes, the reply) on a
// capturing stream: no stub sends one (it stages such copies), and a capture would keep the
// buffer's address in its graph, to be read or written at each launch long after the call. The
// backend refuses it (cudaErrorStreamCaptureUnsupported) and the session goes on.
TEST_F(HostileCudartCapture, a_copy_of_the_backends_own_buffer_on_a_capturing_stream_is_refused) {
  cudaStream_t stream = nullptr;
  WireWriter create;
  marshal::put_output(create, &stream);
  ASSERT_EQ(call(cr::Fn::cudaStreamCreate, create,
                 [&](WireReader& in) { marshal::get_output(in, &stream); }),
            cudaSuccess);
  void* device = allocate(64);
  ASSERT_NE(device, nullptr);
  const auto copy_up = [&] {
    WireWriter w;
    put_record(w, cr::MemcpyRequest{device, nullptr, 64, cudaMemcpyHostToDevice, stream});
    w.put_raw(std::string(64, 'x').data(), 64);
    return call(cr::Fn::cudaMemcpyAsync, w);
  };
  const auto copy_down = [&] {
    WireWriter w;
    put_record(w, cr::MemcpyRequest{nullptr, device, 64, cudaMemcpyDeviceToHost, stream});
    return call(cr::Fn::cudaMemcpyAsync, w);
  };
  EXPECT_EQ(copy_up(), cudaSuccess) << "outside a capture, a copy";
  WireWriter begin;
  marshal::put_value(begin, stream);
  marshal::put_value(begin, cudaStreamCaptureModeGlobal);
  ASSERT_EQ(call(cr::Fn::cudaStreamBeginCapture, begin), cudaSuccess);
  EXPECT_EQ(copy_up(), cudaErrorStreamCaptureUnsupported);
  EXPECT_EQ(copy_down(), cudaErrorStreamCaptureUnsupported);
  EXPECT_TRUE(ping(client_)) << "the session goes on";
  EXPECT_FALSE(backend_.logged("cudaMemcpyAsync captured")) << backend_.log();
}

// A copy node's CUDA array must be the session's: a made-up one is refused before the runtime
// sees it, and the session goes on; the same node between the session's device memory is made.
// A pointer side copying to or from an array is vetted over the rows it reaches in the array's
// elements.
TEST_F(HostileCudartCapture, a_copy_node_names_only_the_sessions_arrays) {
  void* device = allocate(4096);
  ASSERT_NE(device, nullptr);
  cudaGraph_t graph = nullptr;
  WireWriter create;
  marshal::put_output(create, &graph);
  marshal::put_value(create, 0u);
  ASSERT_EQ(call(cr::Fn::cudaGraphCreate, create,
                 [&](WireReader& in) { marshal::get_output(in, &graph); }),
            cudaSuccess);
  const auto add = [&](uint64_t src_array, void* src) {
    const auto at = reinterpret_cast<uint64_t>(device);
    const cr::MemcpyNodeWire node{{reinterpret_cast<uint64_t>(src), 256, 256, 4, 0, 0, 0},
                                  {at + 2048, 256, 256, 4, 0, 0, 0},
                                  64,
                                  4,
                                  1,
                                  cudaMemcpyDeviceToDevice,
                                  src_array,
                                  0};
    WireWriter w;
    w.put<uint64_t>(cr::wire_handle(graph));
    w.put<uint32_t>(0);
    put_record(w, node);
    return call(cr::Fn::cudaGraphAddMemcpyNode, w);
  };
  EXPECT_EQ(add(0x7f00deadbee0, nullptr), cudaErrorInvalidResourceHandle);
  EXPECT_TRUE(backend_.logged("rejected array")) << backend_.log();
  EXPECT_TRUE(ping(client_)) << "the session goes on";
  EXPECT_EQ(add(0, device), cudaSuccess) << backend_.log();

  // With an array of floats taking part, the device side's row and position x count floats. The
  // accepting device's memory is one 64 GiB range that the runtime calls device memory throughout
  // (the backend asks the runtime, not its ledger): from x = 20 Gi floats the row ends 80 GiB
  // past the pointer, outside it (counted in bytes it would end inside).
  cudaArray_t array = nullptr;
  const cudaChannelFormatDesc floats{32, 0, 0, 0, cudaChannelFormatKindFloat};
  WireWriter make;
  marshal::put_output(make, &array);
  marshal::put_output(make, &floats);
  marshal::put_value(make, size_t{64});
  marshal::put_value(make, size_t{1});
  marshal::put_value(make, 0u);
  ASSERT_EQ(
      call(cr::Fn::cudaMallocArray, make, [&](WireReader& in) { marshal::get_output(in, &array); }),
      cudaSuccess);
  const auto into_array = [&](uint64_t x) {
    const cr::MemcpyNodeWire node{{reinterpret_cast<uint64_t>(device), 4096, 4096, 1, x, 0, 0},
                                  {0, 0, 0, 0, 0, 0, 0},
                                  64,
                                  1,
                                  1,
                                  cudaMemcpyDeviceToDevice,
                                  0,
                                  cr::wire_handle(array)};
    WireWriter w;
    w.put<uint64_t>(cr::wire_handle(graph));
    w.put<uint32_t>(0);
    put_record(w, node);
    return call(cr::Fn::cudaGraphAddMemcpyNode, w);
  };
  EXPECT_EQ(into_array(900), cudaSuccess) << backend_.log();
  EXPECT_EQ(into_array(uint64_t{20} << 30), cudaErrorInvalidValue);
  EXPECT_TRUE(ping(client_)) << "the session goes on";
}
#endif

TEST_F(HostileCudart, a_module_beyond_the_session_bound_ends_the_session) {
  Client c = client();
  WireWriter w;
  put_record(w, cr::ModuleChunk{7, cr::kMaxModuleBytes + 1, 0});
  w.put_blob("x", 1);
  w.put<uint32_t>(0);
  EXPECT_EQ(send(c, cr::Fn::cudaModuleLoad, w), ErrorKind::kDisconnected);
  EXPECT_TRUE(logged("modules of more than")) << backend_.log();
  expect_session_ended_alone(c);
}

TEST_F(HostileCudart, a_kernel_layout_outside_its_parameter_bytes_ends_the_session) {
  Client c = client();
  WireWriter w;
  put_record(w, cr::KernelResolve{7, 1});  // a module never loaded: the layout is checked first
  w.put_string("kernel");
  put_record(w, cr::KernelLayout{16, 1});  // 16 parameter bytes, one parameter...
  put_record(w, cr::ParamSlot{12, 8});     // ...at offset 12, of 8 bytes: beyond 16
  EXPECT_EQ(send(c, cr::Fn::cudaKernelResolve, w), ErrorKind::kDisconnected);
  EXPECT_TRUE(logged("parameter outside its bytes")) << backend_.log();
  expect_session_ended_alone(c);
}

TEST_F(HostileCudart, resolving_in_a_module_never_loaded_ends_the_session) {
  Client c = client();
  WireWriter w;
  put_record(w, cr::VarResolve{99, 0});
  w.put_string("variable");
  EXPECT_EQ(send(c, cr::Fn::cudaVarResolve, w), ErrorKind::kDisconnected);
  EXPECT_TRUE(logged("module 99 was not loaded")) << backend_.log();
  expect_session_ended_alone(c);
}

TEST_F(HostileCudart, a_copy_chunk_over_the_limit_ends_the_session) {
  Client c = client();
  WireWriter w;
  put_record(
      w, cr::MemcpyRequest{reinterpret_cast<void*>(0x1000), reinterpret_cast<const void*>(0x2000),
                           cr::kMemcpyChunkBytes + 1, cudaMemcpyDeviceToDevice, nullptr});
  EXPECT_EQ(send(c, cr::Fn::cudaMemcpy, w), ErrorKind::kDisconnected);
  EXPECT_TRUE(logged("cudaMemcpy chunk of")) << backend_.log();
  expect_session_ended_alone(c);
}

TEST_F(HostileCudart, more_module_ids_than_a_session_may_have_end_the_session) {
  Client c = client();
  ErrorKind last = ErrorKind::kFailed;
  size_t sent = 0;
  for (; sent <= cr::kMaxModulesPerSession && last == ErrorKind::kFailed; ++sent) {
    WireWriter w;  // an empty module: the runtime refuses it, and its id stays known
    put_record(w, cr::ModuleChunk{1000 + sent, 0, 0});
    w.put_blob(nullptr, 0);
    w.put<uint32_t>(0);
    last = send(c, cr::Fn::cudaModuleLoad, w);
  }
  EXPECT_EQ(last, ErrorKind::kDisconnected);
  EXPECT_EQ(sent, cr::kMaxModulesPerSession + 1);
  EXPECT_TRUE(logged("more than 4096 modules in one session")) << backend_.log();
  expect_session_ended_alone(c);
}

TEST_F(HostileCudart, a_module_image_that_is_no_image_is_refused_and_the_session_goes_on) {
  Client c = client();
  WireWriter w;
  put_record(w, cr::ModuleChunk{7, 16, 0});
  w.put_blob("not a fatbinary!", 16);
  w.put<uint32_t>(0);
  int32_t result = cudaSuccess;
  const ByteView piece = w.view();
  c.call(cr::call_id(cr::Fn::cudaModuleLoad), std::span(&piece, 1),
         [&](WireReader& in) { result = in.get<int32_t>(); });
  // Neither a fatbinary nor a cubin nor PTX ending in its NUL: refused before the runtime, which
  // would read past the 16 bytes looking for the NUL (a GPU's runtime accepted them).
  EXPECT_EQ(result, cudaErrorInvalidKernelImage);
  EXPECT_TRUE(logged("module 7 refused")) << backend_.log();
  const ByteView nothing;
  EXPECT_NO_THROW(
      c.call(core::call_id(core::Fn::kPing), std::span(&nothing, 1), [](WireReader&) {}));
}

// Shared host memory (shm's arena): offsets and sizes come from the client and are checked
// against the arena before the backend touches it.
class HostileShared : public HostileCudart {
 protected:
  HostileShared() : HostileCudart(TestTransport::shm) {}

  static WireWriter register_request(uint64_t offset, uint64_t bytes) {
    WireWriter w;
    put_record(w, cr::RegisterShared{offset, bytes, cudaHostAllocMapped});
    return w;
  }
  static WireWriter copy_request(uint64_t offset, uint64_t count, cudaMemcpyKind kind) {
    WireWriter w;
    // A device pointer never reached: the request is refused first.
    put_record(w, cr::SharedCopy{reinterpret_cast<void*>(0x1000), offset, count, kind, nullptr});
    return w;
  }
};

TEST_F(HostileShared, registering_beyond_the_arena_ends_the_session) {
  Client c = client();
  const uint64_t arena = c.shared_memory().size();
  ASSERT_GT(arena, 0u);
  EXPECT_EQ(send(c, cr::Fn::cudaHostRegisterShared, register_request(arena, 4096)),
            ErrorKind::kDisconnected);
  EXPECT_TRUE(logged("outside the")) << backend_.log();
  expect_session_ended_alone(c);
}

TEST_F(HostileShared, a_range_that_wraps_around_ends_the_session) {
  Client c = client();
  EXPECT_EQ(send(c, cr::Fn::cudaHostRegisterShared, register_request(4096, ~uint64_t{4095})),
            ErrorKind::kDisconnected);
  expect_session_ended_alone(c);
}

TEST_F(HostileShared, registering_part_of_a_page_ends_the_session) {
  Client c = client();
  EXPECT_EQ(send(c, cr::Fn::cudaHostRegisterShared, register_request(100, 4096)),
            ErrorKind::kDisconnected);
  EXPECT_TRUE(logged("not whole pages")) << backend_.log();
  expect_session_ended_alone(c);
}

TEST_F(HostileShared, a_copy_beyond_the_arena_ends_the_session) {
  Client c = client();
  const uint64_t arena = c.shared_memory().size();
  EXPECT_EQ(
      send(c, cr::Fn::cudaMemcpyShared, copy_request(arena - 4096, 8192, cudaMemcpyHostToDevice)),
      ErrorKind::kDisconnected);
  EXPECT_TRUE(logged("outside the")) << backend_.log();
  expect_session_ended_alone(c);
}

TEST_F(HostileShared, a_shared_copy_of_another_kind_ends_the_session) {
  Client c = client();
  EXPECT_EQ(send(c, cr::Fn::cudaMemcpyShared, copy_request(0, 64, cudaMemcpyDeviceToDevice)),
            ErrorKind::kDisconnected);
  EXPECT_TRUE(logged("cudaMemcpyShared of kind")) << backend_.log();
  expect_session_ended_alone(c);
}

TEST_F(HostileShared, unregistering_what_was_never_registered_ends_the_session) {
  Client c = client();
  WireWriter w;
  put_record(w, cr::UnregisterShared{8192});
  EXPECT_EQ(send(c, cr::Fn::cudaHostUnregisterShared, w), ErrorKind::kDisconnected);
  EXPECT_TRUE(logged("not registered")) << backend_.log();
  expect_session_ended_alone(c);
}

TEST_F(HostileShared, a_valid_registration_gets_the_runtimes_answer_and_the_session_goes_on) {
  Client c = client();
  int32_t result = -1;
  uint64_t device = 1;
  const WireWriter w = register_request(0, 8192);
  const ByteView piece = w.view();
  c.call(cr::call_id(cr::Fn::cudaHostRegisterShared), std::span(&piece, 1), [&](WireReader& in) {
    result = in.get<int32_t>();
    device = get_record<cr::RegisteredShared>(in).device;
  });
  // On a GPU: success and the mapped memory's device pointer; here the runtime's own error.
  EXPECT_EQ(result == cudaSuccess, device != 0) << result;
  const ByteView nothing;
  EXPECT_NO_THROW(
      c.call(core::call_id(core::Fn::kPing), std::span(&nothing, 1), [](WireReader&) {}));
}

TEST_F(HostileCudart, shared_memory_calls_over_a_transport_that_shares_none_end_the_session) {
  Client c = client();
  ASSERT_TRUE(c.shared_memory().empty());
  WireWriter w;
  put_record(w, cr::RegisterShared{0, 4096, 0});
  EXPECT_EQ(send(c, cr::Fn::cudaHostRegisterShared, w), ErrorKind::kDisconnected);
  EXPECT_TRUE(logged("shares no memory")) << backend_.log();
  expect_session_ended_alone(c);
}

}  // namespace
}  // namespace gvirtus::testing
