// Host functions on the simulated device: cuLaunchHostFunc and cuStreamAddCallback run the
// function at once, on the calling thread, outside the device's lock (streams complete at once
// here, so the stream's earlier work is done; the function may wait, as gvirtus's gates wait
// for their client). A capturing stream takes a host function as a host node of its graph; a
// stream callback it refuses and invalidates the capture, as the driver does. Host nodes keep
// their function and data; a launch runs them in their graph's order (graph_launch.cpp).
#include "graph_node_params.h"
#include "state.h"

namespace sim = gvirtus::simulated;

GVIRTUS_SIMULATED_EXPORT CUresult cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void* userData) {
  bool run_now = false;
  const CUresult r = sim::guarded([&](sim::State& s) {
    if (fn == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!sim::known_stream(s, hStream)) return CUDA_ERROR_INVALID_HANDLE;
    if (const auto capture = s.capturing.find(hStream); capture != s.capturing.end()) {
      return sim::capture_host_function(s, capture->second, sim::HostNode{fn, userData});
    }
    run_now = true;
    return CUDA_SUCCESS;
  });
  if (r == CUDA_SUCCESS && run_now) fn(userData);
  return r;
}

GVIRTUS_SIMULATED_EXPORT CUresult cuStreamAddCallback(CUstream hStream, CUstreamCallback callback,
                                                      void* userData, unsigned int flags) {
  const CUresult r = sim::guarded([&](sim::State& s) {
    if (callback == nullptr || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    if (!sim::known_stream(s, hStream)) return CUDA_ERROR_INVALID_HANDLE;
    return sim::waited_for(s, hStream);  // a capture cannot hold a callback
  });
  if (r == CUDA_SUCCESS) callback(hStream, CUDA_SUCCESS, userData);
  return r;
}

GVIRTUS_SIMULATED_EXPORT CUresult cuGraphAddHostNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                                                     const CUgraphNode* dependencies,
                                                     size_t numDependencies,
                                                     const CUDA_HOST_NODE_PARAMS* nodeParams) {
  return sim::guarded([&](sim::State& s) {
    sim::Graph* graph = sim::find_graph(s, hGraph);
    if (graph == nullptr || phGraphNode == nullptr || nodeParams == nullptr ||
        nodeParams->fn == nullptr) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    return sim::add_node(s, *graph, dependencies, numDependencies, CU_GRAPH_NODE_TYPE_HOST,
                         sim::HostNode{nodeParams->fn, nodeParams->userData}, phGraphNode);
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuGraphHostNodeGetParams(CUgraphNode hNode,
                                                           CUDA_HOST_NODE_PARAMS* nodeParams) {
  return sim::guarded([&](sim::State& s) {
    sim::Node* node = sim::node_of_type(s, hNode, CU_GRAPH_NODE_TYPE_HOST);
    if (node == nullptr || nodeParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const auto& host = std::get<sim::HostNode>(node->params);
    nodeParams->fn = host.fn;
    nodeParams->userData = host.data;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult
cuGraphHostNodeSetParams(CUgraphNode hNode, const CUDA_HOST_NODE_PARAMS* nodeParams) {
  return sim::guarded([&](sim::State& s) {
    sim::Node* node = sim::node_of_type(s, hNode, CU_GRAPH_NODE_TYPE_HOST);
    if (node == nullptr || nodeParams == nullptr || nodeParams->fn == nullptr) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    node->params = sim::HostNode{nodeParams->fn, nodeParams->userData};
    return CUDA_SUCCESS;
  });
}
