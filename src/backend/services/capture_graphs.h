// The graph a stream capture is building, as a backend session may name it before the capture
// ends (a shared backend service: the cuda and cudart plugins each keep one). The capture-info
// query hands the graph out with the capture's dependency nodes, and a program may then add
// nodes to it, make conditional handles on it and set the capture's dependencies to its own
// nodes (NVIDIA's graphConditionalNodes sample does; CUDA documents it). So the graph becomes the
// session's when handed out, and cannot be destroyed by the program while the capture lasts: the
// capture's end hands it over, or, for an invalidated capture, the library destroys it and the
// session forgets it. A graph the session held already (a capture into a graph of the program's)
// stays the program's own throughout.
//
// Thread affinity: locked (a session's executors run on several threads).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>

namespace gvirtus::services {

class CaptureGraphs {
 public:
  using Stream = const void*;
  using Graph = const void*;
  struct Hooks {
    std::function<void(Graph)> adopt;             // makes it the session's (handle_owner's)
    std::function<void(Graph)> forget_nodes;      // the library destroyed it: its nodes go
    std::function<bool(Stream)> still_capturing;  // whether the stream's capture goes on
  };

  // `graph_kind`: the plugin's handle kind of graphs in the session's handle table.
  CaptureGraphs(uint16_t graph_kind, Hooks hooks) : kind_(graph_kind), hooks_(std::move(hooks)) {}

  // The capture-info query gave `graph` for `stream`'s active capture.
  void handed_out(Stream stream, Graph graph);
  // Whether `graph` was handed out for a capture not ended yet.
  bool building(Graph graph) const;
  // A capture's end answered: the graphs handed out for streams that no longer capture (the
  // stream that ended it, those that had joined it by waiting for an event recorded in it, and
  // streams destroyed) are no longer being built; those it did not hand over (the capture was
  // invalidated) are forgotten, the library having destroyed them. Asks the library about each
  // stream it holds a graph for.
  void ended(bool handed_over);
  // A reset destroyed the captures: their graphs are forgotten.
  void forget_all();

 private:
  bool held(Graph graph) const;
  void forget(Graph graph);

  uint16_t kind_;
  Hooks hooks_;
  mutable std::mutex mutex_;
  // Adopted when handed out, by capturing stream: a capture's graph under each stream it was
  // handed out for (its own, and streams that joined it).
  std::map<Stream, Graph> graphs_;
};

}  // namespace gvirtus::services
