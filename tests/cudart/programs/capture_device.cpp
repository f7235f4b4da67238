// The capturing device: a test double preloaded into gvirtus-backend before the accepting device
// (bench/copy/accepting_device.cpp), on a machine without a GPU, so that what the stub sends
// while a stream captures can be seen on the backend (capture_test.cpp). It is never GPU
// evidence: it keeps streams and their capture state as CUDA documents them, and logs to the
// backend's log (GVIRTUS_LOG_FD) each copy and host function a capturing stream receives and each
// refusal.
//
// Streams are made-up handles; a capture is begun, joined by a stream that waits for an event
// recorded in it (fork and join; its work goes into the capture's graph in the order it comes),
// ended (into a made-up graph, or invalidated; the streams that joined leave with it),
// and invalidated by what CUDA forbids in a capture: waiting for the stream
// (cudaStreamSynchronize answers cudaErrorStreamCaptureUnsupported). Its failures are the
// thread's last error. A capture's graph takes its copies and host functions, and the nodes added
// to it while it is captured, in the order they come, done only when an executable graph
// instantiated from it is launched (the copies by the next definition, the accepting device's;
// the host functions called, in order, on the launching thread).
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <vector>

namespace {

std::mutex& mutex = *new std::mutex;
auto& streams = *new std::set<cudaStream_t>;
auto& capturing = *new std::set<cudaStream_t>;
auto& invalidated = *new std::set<cudaStream_t>;
auto& graphs = *new std::set<cudaGraph_t>;
// Events are made-up handles; one recorded on a capturing stream names that capture's stream
// (its origin): a stream that waits for it joins the capture (fork and join).
auto& events = *new std::set<cudaEvent_t>;
auto& recorded_in_capture = *new std::map<cudaEvent_t, cudaStream_t>;
auto& joined = *new std::map<cudaStream_t, cudaStream_t>;  // a joined stream -> its origin

// A copy or a host function a capture or a node took, as it was given.
struct Work {
  cudaHostFn_t fn = nullptr;  // a host function, else a copy (linear, or `box` when `boxed`)
  void* data = nullptr;
  void* dst = nullptr;
  const void* src = nullptr;
  size_t count = 0;
  cudaMemcpyKind kind = cudaMemcpyDefault;
  bool boxed = false;
  cudaMemcpy3DParms box{};
};
// A graph's nodes in the order added (an order their dependencies allow), each its work; a
// captured graph is one node of all it took.
struct Node {
  cudaGraphNode_t handle;
  std::vector<Work> work;
};
using Nodes = std::vector<Node>;
auto& capture_graphs = *new std::map<cudaStream_t, cudaGraph_t>;  // the graphs they build
auto& graph_nodes = *new std::map<cudaGraph_t, Nodes>;
auto& executables = *new std::map<cudaGraphExec_t, Nodes>;

std::vector<Work> all_work(const Nodes& nodes) {
  std::vector<Work> work;
  for (const Node& node : nodes) work.insert(work.end(), node.work.begin(), node.work.end());
  return work;
}
char handles[1 << 16];  // made-up handles are addresses in here, never reused
int next_handle = 0;

template <typename T>
T made_up() {
  return reinterpret_cast<T>(&handles[next_handle++ % sizeof handles]);
}

// The thread's last error, as the runtime keeps it: what this double's calls failed with.
thread_local cudaError_t last_error = cudaSuccess;

cudaError_t failed(cudaError_t error) {
  last_error = error;
  return error;
}

// Its records go to the backend's log, as the worker's own lines do (GVIRTUS_LOG_FD, common/log.h):
// what the worker prints to stderr goes to the application (backend/output_relay.h).
void log(const char* what, int value = 0) {
  const char* fd = std::getenv("GVIRTUS_LOG_FD");
  dprintf(fd != nullptr ? std::atoi(fd) : STDERR_FILENO, "capturing device: %s %d\n", what, value);
}

}  // namespace

extern "C" {

#define CAPTURE_DEVICE_EXPORT __attribute__((visibility("default")))

CAPTURE_DEVICE_EXPORT cudaError_t cudaStreamCreate(cudaStream_t* stream) {
  std::lock_guard lock(mutex);
  *stream = made_up<cudaStream_t>();
  streams.insert(*stream);
  return cudaSuccess;
}

CAPTURE_DEVICE_EXPORT cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  std::lock_guard lock(mutex);
  return streams.erase(stream) != 0 ? cudaSuccess : failed(cudaErrorInvalidResourceHandle);
}

CAPTURE_DEVICE_EXPORT cudaError_t cudaStreamBeginCapture(cudaStream_t stream,
                                                         cudaStreamCaptureMode) {
  std::lock_guard lock(mutex);
  if (streams.count(stream) == 0) return failed(cudaErrorStreamCaptureUnsupported);  // null
  if (capturing.count(stream) != 0) return failed(cudaErrorIllegalState);
  capturing.insert(stream);
  capture_graphs[stream] = made_up<cudaGraph_t>();
  graph_nodes[capture_graphs[stream]] = {};
  return cudaSuccess;
}

CAPTURE_DEVICE_EXPORT cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* graph) {
  std::lock_guard lock(mutex);
  if (joined.count(stream) != 0) return failed(cudaErrorStreamCaptureUnmatched);
  if (capturing.erase(stream) == 0) return failed(cudaErrorIllegalState);
  for (auto it = joined.begin(); it != joined.end();) {  // they leave with the capture
    if (it->second != stream) {
      ++it;
      continue;
    }
    capturing.erase(it->first);
    capture_graphs.erase(it->first);
    invalidated.erase(it->first);
    it = joined.erase(it);
  }
  const cudaGraph_t built = capture_graphs[stream];
  capture_graphs.erase(stream);
  if (invalidated.erase(stream) != 0) {
    graph_nodes.erase(built);
    *graph = nullptr;
    return failed(cudaErrorStreamCaptureInvalidated);
  }
  *graph = built;
  graphs.insert(*graph);
  return cudaSuccess;
}

CAPTURE_DEVICE_EXPORT cudaError_t cudaStreamIsCapturing(cudaStream_t stream,
                                                        cudaStreamCaptureStatus* status) {
  std::lock_guard lock(mutex);
  *status = capturing.count(stream) == 0     ? cudaStreamCaptureStatusNone
            : invalidated.count(stream) != 0 ? cudaStreamCaptureStatusInvalidated
                                             : cudaStreamCaptureStatusActive;
  return cudaSuccess;
}

// The capture's graph (the one its end hands over) and no dependencies; the id is the stream's.
CAPTURE_DEVICE_EXPORT cudaError_t cudaStreamGetCaptureInfo(
    cudaStream_t stream, cudaStreamCaptureStatus* status, unsigned long long* id,
    cudaGraph_t* graph, const cudaGraphNode_t** dependencies, const cudaGraphEdgeData* edges[],
    size_t* count) {
  std::lock_guard lock(mutex);
  if (status == nullptr) return failed(cudaErrorInvalidValue);
  if (capturing.count(stream) == 0) {
    *status = cudaStreamCaptureStatusNone;
    return cudaSuccess;
  }
  *status = invalidated.count(stream) != 0 ? cudaStreamCaptureStatusInvalidated
                                           : cudaStreamCaptureStatusActive;
  if (id != nullptr) *id = reinterpret_cast<uintptr_t>(stream);
  if (graph != nullptr) *graph = capture_graphs[stream];
  if (dependencies != nullptr) *dependencies = nullptr;
  if (edges != nullptr) *edges = nullptr;
  if (count != nullptr) *count = 0;
  return cudaSuccess;
}

// The capture's dependencies set to nodes of its graph: its work keeps the order it came in.
CAPTURE_DEVICE_EXPORT cudaError_t cudaStreamUpdateCaptureDependencies(cudaStream_t stream,
                                                                      cudaGraphNode_t*,
                                                                      const cudaGraphEdgeData*,
                                                                      size_t, unsigned int) {
  std::lock_guard lock(mutex);
  return capturing.count(stream) != 0 ? cudaSuccess : failed(cudaErrorIllegalState);
}

CAPTURE_DEVICE_EXPORT cudaError_t cudaEventCreate(cudaEvent_t* event) {
  std::lock_guard lock(mutex);
  *event = made_up<cudaEvent_t>();
  events.insert(*event);
  return cudaSuccess;
}

CAPTURE_DEVICE_EXPORT cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int) {
  return cudaEventCreate(event);
}

CAPTURE_DEVICE_EXPORT cudaError_t cudaEventDestroy(cudaEvent_t event) {
  std::lock_guard lock(mutex);
  recorded_in_capture.erase(event);
  return events.erase(event) != 0 ? cudaSuccess : failed(cudaErrorInvalidResourceHandle);
}

CAPTURE_DEVICE_EXPORT cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  std::lock_guard lock(mutex);
  if (events.count(event) == 0) return failed(cudaErrorInvalidResourceHandle);
  if (capturing.count(stream) == 0) {
    recorded_in_capture.erase(event);
    return cudaSuccess;
  }
  const auto origin = joined.find(stream);
  recorded_in_capture[event] = origin != joined.end() ? origin->second : stream;
  return cudaSuccess;
}

// Waiting for an event recorded in a capture that goes on joins the capture: the stream's work
// goes into the capture's graph, in the order it comes.
CAPTURE_DEVICE_EXPORT cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event,
                                                      unsigned int) {
  std::lock_guard lock(mutex);
  if (events.count(event) == 0) return failed(cudaErrorInvalidResourceHandle);
  const auto recorded = recorded_in_capture.find(event);
  if (recorded == recorded_in_capture.end() || capturing.count(recorded->second) == 0 ||
      capturing.count(stream) != 0) {
    return cudaSuccess;
  }
  log("a stream joined a capture");
  capturing.insert(stream);
  capture_graphs[stream] = capture_graphs[recorded->second];
  joined[stream] = recorded->second;
  return cudaSuccess;
}

CAPTURE_DEVICE_EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  std::lock_guard lock(mutex);
  if (capturing.count(stream) == 0) return cudaSuccess;
  if (invalidated.count(stream) != 0) {
    log("cudaStreamSynchronize of an invalidated capture");
    return failed(cudaErrorStreamCaptureInvalidated);
  }
  invalidated.insert(stream);
  log("cudaStreamSynchronize refused in a capture");
  return failed(cudaErrorStreamCaptureUnsupported);
}

CAPTURE_DEVICE_EXPORT cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  std::lock_guard lock(mutex);
  graph_nodes.erase(graph);
  return graphs.erase(graph) != 0 ? cudaSuccess : failed(cudaErrorInvalidValue);
}

CAPTURE_DEVICE_EXPORT cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph,
                                                       unsigned long long) {
  std::lock_guard lock(mutex);
  if (graphs.count(graph) == 0) return failed(cudaErrorInvalidValue);
  *exec = made_up<cudaGraphExec_t>();
  executables[*exec] = graph_nodes[graph];
  return cudaSuccess;
}

CAPTURE_DEVICE_EXPORT cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t* exec,
                                                                cudaGraph_t graph,
                                                                unsigned long long flags) {
  return cudaGraphInstantiate(exec, graph, flags);
}

CAPTURE_DEVICE_EXPORT cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
  std::lock_guard lock(mutex);
  return executables.erase(exec) != 0 ? cudaSuccess : failed(cudaErrorInvalidValue);
}

// The graph's work in the order captured, now, on this thread (a host function blocks it as
// natively it blocks the stream).
CAPTURE_DEVICE_EXPORT cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream) {
  std::vector<Work> work;
  {
    std::lock_guard lock(mutex);
    const auto it = executables.find(exec);
    if (it == executables.end()) return failed(cudaErrorInvalidValue);
    work = all_work(it->second);
  }
  using Copy = cudaError_t (*)(void*, const void*, size_t, cudaMemcpyKind, cudaStream_t);
  static const auto next = reinterpret_cast<Copy>(::dlsym(RTLD_NEXT, "cudaMemcpyAsync"));
  using Box = cudaError_t (*)(const cudaMemcpy3DParms*, cudaStream_t);
  static const auto next_box = reinterpret_cast<Box>(::dlsym(RTLD_NEXT, "cudaMemcpy3DAsync"));
  for (const Work& w : work) {
    const cudaError_t rc = w.fn != nullptr ? (w.fn(w.data), cudaSuccess)
                           : w.boxed       ? next_box(&w.box, stream)
                                           : next(w.dst, w.src, w.count, w.kind, stream);
    if (rc != cudaSuccess) return failed(rc);
  }
  return cudaSuccess;
}

// A graph's nodes, in the order added (a count alone without an array).
CAPTURE_DEVICE_EXPORT cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t* nodes,
                                                    size_t* count) {
  std::lock_guard lock(mutex);
  const auto it = graph_nodes.find(graph);
  if (it == graph_nodes.end() || count == nullptr) return failed(cudaErrorInvalidValue);
  if (nodes != nullptr) {
    for (size_t i = 0; i < *count; ++i) {
      nodes[i] = i < it->second.size() ? it->second[i].handle : nullptr;
    }
  }
  *count = it->second.size();
  return cudaSuccess;
}

// Graphs built node by node: each node's work kept in the order added.
CAPTURE_DEVICE_EXPORT cudaError_t cudaGraphCreate(cudaGraph_t* graph, unsigned int) {
  std::lock_guard lock(mutex);
  *graph = made_up<cudaGraph_t>();
  graphs.insert(*graph);
  graph_nodes[*graph] = {};
  return cudaSuccess;
}

namespace {

cudaError_t add(cudaGraphNode_t* node, cudaGraph_t graph, std::vector<Work> work) {
  std::lock_guard lock(mutex);
  const auto it = graph_nodes.find(graph);
  if (it == graph_nodes.end() || node == nullptr) return failed(cudaErrorInvalidValue);
  *node = made_up<cudaGraphNode_t>();
  it->second.push_back(Node{*node, std::move(work)});
  return cudaSuccess;
}

}  // namespace

CAPTURE_DEVICE_EXPORT cudaError_t cudaGraphAddHostNode(cudaGraphNode_t* node, cudaGraph_t graph,
                                                       const cudaGraphNode_t*, size_t,
                                                       const cudaHostNodeParams* params) {
  return add(node, graph, {Work{params->fn, params->userData}});
}

CAPTURE_DEVICE_EXPORT cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t* node, cudaGraph_t graph,
                                                         const cudaGraphNode_t*, size_t,
                                                         const cudaMemcpy3DParms* params) {
  Work work;
  work.boxed = true;
  work.box = *params;
  return add(node, graph, {work});
}

CAPTURE_DEVICE_EXPORT cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t* node, cudaGraph_t graph,
                                                           const cudaGraphNode_t*, size_t,
                                                           void* dst, const void* src, size_t count,
                                                           cudaMemcpyKind kind) {
  return add(node, graph, {Work{nullptr, nullptr, dst, src, count, kind}});
}

CAPTURE_DEVICE_EXPORT cudaError_t cudaGraphAddChildGraphNode(cudaGraphNode_t* node,
                                                             cudaGraph_t graph,
                                                             const cudaGraphNode_t*, size_t,
                                                             cudaGraph_t child) {
  std::vector<Work> work;
  {
    std::lock_guard lock(mutex);
    const auto it = graph_nodes.find(child);
    if (it == graph_nodes.end()) return failed(cudaErrorInvalidValue);
    work = all_work(it->second);
  }
  return add(node, graph, std::move(work));
}

// An executable graph's child graph node takes the work of another graph of the same shape.
CAPTURE_DEVICE_EXPORT cudaError_t cudaGraphExecChildGraphNodeSetParams(cudaGraphExec_t exec,
                                                                       cudaGraphNode_t node,
                                                                       cudaGraph_t child) {
  std::lock_guard lock(mutex);
  const auto executable = executables.find(exec);
  const auto given = graph_nodes.find(child);
  if (executable == executables.end() || given == graph_nodes.end()) {
    return failed(cudaErrorInvalidValue);
  }
  for (Node& n : executable->second) {
    if (n.handle == node) {
      n.work = all_work(given->second);
      return cudaSuccess;
    }
  }
  return failed(cudaErrorInvalidValue);
}

// Taken by a capture, else the next definition's (the accepting device runs it at once).
CAPTURE_DEVICE_EXPORT cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn,
                                                     void* data) {
  {
    std::lock_guard lock(mutex);
    if (capturing.count(stream) != 0) {
      if (invalidated.count(stream) != 0) return failed(cudaErrorStreamCaptureInvalidated);
      log("cudaLaunchHostFunc captured");
      graph_nodes[capture_graphs[stream]].push_back(
          Node{made_up<cudaGraphNode_t>(), {Work{fn, data}}});
      return cudaSuccess;
    }
  }
  using Launch = cudaError_t (*)(cudaStream_t, cudaHostFn_t, void*);
  static const auto next = reinterpret_cast<Launch>(::dlsym(RTLD_NEXT, "cudaLaunchHostFunc"));
  return next(stream, fn, data);
}

CAPTURE_DEVICE_EXPORT cudaError_t cudaGetLastError() {
  const cudaError_t error = last_error;
  last_error = cudaSuccess;
  return error;
}

CAPTURE_DEVICE_EXPORT cudaError_t cudaPeekAtLastError() {
  return last_error;
}

CAPTURE_DEVICE_EXPORT cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count,
                                                  cudaMemcpyKind kind, cudaStream_t stream) {
  {
    std::lock_guard lock(mutex);
    if (capturing.count(stream) != 0) {
      log("cudaMemcpyAsync captured, kind", kind);
      graph_nodes[capture_graphs[stream]].push_back(
          Node{made_up<cudaGraphNode_t>(), {Work{nullptr, nullptr, dst, src, count, kind}}});
      return cudaSuccess;
    }
  }
  using Copy = cudaError_t (*)(void*, const void*, size_t, cudaMemcpyKind, cudaStream_t);
  static const auto next = reinterpret_cast<Copy>(::dlsym(RTLD_NEXT, "cudaMemcpyAsync"));
  return next(dst, src, count, kind, stream);
}

}  // extern "C"
