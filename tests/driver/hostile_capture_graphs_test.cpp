// The graph a capture is building (backend/capture_graphs.h, services/capture_graphs.h), against a
// client that sends what it likes: once cuStreamGetCaptureInfo handed it out, the session may make
// conditional handles on it and name its dependency nodes, but not destroy it while the capture
// lasts; the capture's end hands it over (then it may be destroyed), and an invalidated capture's
// graph, which the driver destroys, is no longer the session's.
#include "hostile_driver.h"
#include "plugins/cuda/common/graph_node_wire.h"

namespace gvirtus::testing {
namespace {

struct CaptureInfo {
  int32_t status = -1;
  uint32_t capture = 0;  // CUstreamCaptureStatus
  CUgraph graph = nullptr;
};

}  // namespace

TEST_F(HostileDriver, a_captures_graph_is_the_sessions_while_handed_out_and_goes_with_the_capture) {
  const auto owned = client();
  Client& c = *owned;
  const auto begin = [&](CUstream stream) {
    return call(c, cu::Fn::cuStreamBeginCapture_v2,
                [&](WireWriter& w) {
                  mr::put_value(w, stream);
                  mr::put_value(w, CU_STREAM_CAPTURE_MODE_GLOBAL);
                })
        .status;
  };
  const auto info = [&](CUstream stream) {
    CaptureInfo got;
    const Reply r = call(c, cu::Fn::cuStreamGetCaptureInfo_v3, [&](WireWriter& w) {
      mr::put_value(w, stream);
      w.put<uint8_t>(cu::kShapeNodes);
    });
    got.status = r.status;
    WireReader in(r.rest, "capture info");
    if (r.status == CUDA_SUCCESS) {
      got.capture = in.get<uint32_t>();
      if (got.capture != CU_STREAM_CAPTURE_STATUS_NONE) {
        (void)in.get<uint64_t>();  // the id
        got.graph = mr::get_value<CUgraph>(in);
      }
    }
    return got;
  };
  const auto end = [&](CUstream stream) {
    CUgraph graph = nullptr;
    return call(c, cu::Fn::cuStreamEndCapture,
                [&](WireWriter& w) {
                  mr::put_value(w, stream);
                  mr::put_output(w, &graph);
                })
        .status;
  };
  const auto destroy = [&](CUgraph graph) {
    return call(c, cu::Fn::cuGraphDestroy, [&](WireWriter& w) { mr::put_value(w, graph); }).status;
  };
  const auto make_handle = [&](CUgraph graph) {
    return call(c, cu::Fn::cuGraphConditionalHandleCreate,
                [&](WireWriter& w) {
                  mr::put_value(w, graph);
                  mr::put_value(w, CUcontext{nullptr});
                  mr::put_value(w, 0u);
                  mr::put_value(w, 0u);
                })
        .status;
  };

  const CUstream stream = create_stream(c);
  ASSERT_EQ(begin(stream), CUDA_SUCCESS);
  const CaptureInfo building = info(stream);
  ASSERT_EQ(building.status, CUDA_SUCCESS);
  ASSERT_EQ(building.capture, CU_STREAM_CAPTURE_STATUS_ACTIVE);
  ASSERT_NE(building.graph, nullptr);
  EXPECT_EQ(make_handle(building.graph), CUDA_SUCCESS);
  EXPECT_EQ(destroy(building.graph), CUDA_ERROR_INVALID_VALUE);
  EXPECT_TRUE(backend_.logged("a capture is building it")) << backend_.log();
  // Waiting for the stream invalidates the capture; its end destroys the graph.
  EXPECT_NE(synchronize(c, stream), CUDA_SUCCESS);
  EXPECT_EQ(end(stream), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
  EXPECT_EQ(make_handle(building.graph), CUDA_ERROR_INVALID_HANDLE) << "no longer the session's";

  // A capture that ends well hands its graph over.
  ASSERT_EQ(begin(stream), CUDA_SUCCESS);
  const CaptureInfo second = info(stream);
  ASSERT_EQ(second.status, CUDA_SUCCESS);
  ASSERT_NE(second.graph, nullptr);
  CUgraph handed = nullptr;
  const Reply ended = call(c, cu::Fn::cuStreamEndCapture, [&](WireWriter& w) {
    mr::put_value(w, stream);
    mr::put_output(w, &handed);
  });
  ASSERT_EQ(ended.status, CUDA_SUCCESS);
  handed = created<CUgraph>(ended);
  EXPECT_EQ(handed, second.graph);
  EXPECT_EQ(destroy(handed), CUDA_SUCCESS);
  expect_session_goes_on(c);
}

}  // namespace gvirtus::testing
