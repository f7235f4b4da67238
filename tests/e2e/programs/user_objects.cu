// User objects: an object's destructor runs once its last reference is gone - the program's,
// a graph's, an executable graph's - never before, on a thread of CUDA's (the program waits for
// it: cudaUserObjectNoDestructorSync).
//   - references created, retained and released by the program;
//   - references moved to a graph: the executable graph instantiated from it keeps the object
//     after the graph is destroyed, until it is destroyed itself;
//   - references a graph retains and releases;
//   - the one flag a user object must be created with.
// Every check is about when destructors run, so a device that runs no kernels (the simulated
// one) passes them too; without a device (no stream) the program checks nothing.
#include <atomic>
#include <chrono>
#include <thread>

#include "check.h"

namespace {

struct Owned {
  std::atomic<int> destroyed{0};
};

void CUDART_CB destroy(void* data) {
  static_cast<Owned*>(data)->destroyed++;
}

// Whether `owned` was destroyed `times` times within 10 s (the destructor runs asynchronously).
bool destroyed(const Owned& owned, int times) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (owned.destroyed.load() < times && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return owned.destroyed.load() == times;
}

bool working = false;  // the device took a stream: the checks mean something

}  // namespace

int main() {
  cudaStream_t stream = nullptr;
  working = OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  // The program's references.
  Owned a;
  cudaUserObject_t object = nullptr;
  SHOW(cudaUserObjectCreate(&object, &a, destroy, 2, cudaUserObjectNoDestructorSync));
  SHOW(cudaUserObjectRetain(object, 3));
  SHOW(cudaUserObjectRelease(object, 4));
  SHOW(cudaStreamSynchronize(stream));
  EXPECT_IF(working, a.destroyed == 0);  // one reference left
  SHOW(cudaUserObjectRelease(object, 1));
  EXPECT_IF(working, destroyed(a, 1));

  // References moved to a graph, kept by its executable graph.
  Owned b;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  cudaGraphNode_t empty = nullptr;
  SHOW(cudaUserObjectCreate(&object, &b, destroy, 1, cudaUserObjectNoDestructorSync));
  SHOW(cudaGraphCreate(&graph, 0));
  SHOW(cudaGraphAddEmptyNode(&empty, graph, nullptr, 0));
  SHOW(cudaGraphRetainUserObject(graph, object, 1, cudaGraphUserObjectMove));
  SHOW(cudaGraphInstantiate(&exec, graph, 0));
  SHOW(cudaGraphDestroy(graph));
  SHOW(cudaGraphLaunch(exec, stream));
  SHOW(cudaStreamSynchronize(stream));
  EXPECT_IF(working, b.destroyed == 0);  // the executable graph holds it
  SHOW(cudaGraphExecDestroy(exec));
  SHOW(cudaStreamSynchronize(stream));
  EXPECT_IF(working, destroyed(b, 1));

  // References a graph retains (new ones) and releases.
  Owned c;
  SHOW(cudaUserObjectCreate(&object, &c, destroy, 1, cudaUserObjectNoDestructorSync));
  SHOW(cudaGraphCreate(&graph, 0));
  SHOW(cudaGraphRetainUserObject(graph, object, 2, 0));
  SHOW(cudaGraphReleaseUserObject(graph, object, 1));
  SHOW(cudaUserObjectRelease(object, 1));
  SHOW(cudaStreamSynchronize(stream));
  EXPECT_IF(working, c.destroyed == 0);  // the graph holds one
  SHOW(cudaGraphDestroy(graph));
  EXPECT_IF(working, destroyed(c, 1));

  // The destructor cannot be waited for, and the program must say it knows.
  Owned d;
  cudaUserObject_t refused = nullptr;
  SHOW(cudaUserObjectCreate(&refused, &d, destroy, 1, 0));
  SHOW(cudaUserObjectCreate(&refused, &d, nullptr, 1, cudaUserObjectNoDestructorSync));
  EXPECT_IF(working, d.destroyed == 0);

  SHOW(cudaStreamDestroy(stream));
  return 0;
}
