// The graph a stream capture is building, as the session may name it (capture_graphs.h).
#include "backend/services/capture_graphs.h"

#include <set>

#include "backend/services/session_services.h"

namespace gvirtus::services {

bool CaptureGraphs::held(Graph graph) const {
  return session_services().handles.holds(kind_, graph);
}

void CaptureGraphs::forget(Graph graph) {
  session_services().handles.release(kind_, graph);
  hooks_.forget_nodes(graph);
}

void CaptureGraphs::handed_out(Stream stream, Graph graph) {
  if (graph == nullptr) return;
  std::lock_guard lock(mutex_);
  if (graphs_.count(stream) != 0 || held(graph)) return;  // known, or the program's own
  hooks_.adopt(graph);
  graphs_.emplace(stream, graph);
}

bool CaptureGraphs::building(Graph graph) const {
  std::lock_guard lock(mutex_);
  for (const auto& [stream, captured] : graphs_) {
    if (captured == graph) return true;
  }
  return false;
}

void CaptureGraphs::ended(bool handed_over) {
  std::lock_guard lock(mutex_);
  // The capture ended, and the streams that joined it left it: whichever of them its graph was
  // handed out for no longer captures. A capture the call did not end (ended on another thread
  // than began it) goes on, and keeps its entries, as do other captures.
  std::set<Graph> destroyed;
  for (auto it = graphs_.begin(); it != graphs_.end();) {
    if (hooks_.still_capturing(it->first)) {
      ++it;
      continue;
    }
    if (!handed_over) destroyed.insert(it->second);
    it = graphs_.erase(it);
  }
  for (const Graph graph : destroyed) forget(graph);
}

void CaptureGraphs::forget_all() {
  std::lock_guard lock(mutex_);
  for (const auto& [stream, graph] : graphs_) forget(graph);
  graphs_.clear();
}

}  // namespace gvirtus::services
