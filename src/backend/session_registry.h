// The registry of one session's plugins (gvirtus_session_registry_v1, backend/plugin_abi.h): each
// plugin joins when its session opens and asks the others, through it, about the handles and
// device memory it does not hold itself. The session owns it; it outlives every plugin session
// of its session (declared before them), so no plugin ever leaves.
//
// Thread affinity: locked (a session's executors ask from several threads). A peer's answer is
// its own to lock; peers never call back into the registry, so asking cannot deadlock.
#pragma once

#include <mutex>
#include <vector>

#include "backend/plugin_abi.h"

namespace gvirtus {

class SessionRegistry {
 public:
  SessionRegistry();
  SessionRegistry(const SessionRegistry&) = delete;
  SessionRegistry& operator=(const SessionRegistry&) = delete;

  // What the session passes its plugins.
  const gvirtus_session_registry_v1* table() const { return &table_; }

  void join(const gvirtus_session_peer_v1* peer);
  bool holds(const gvirtus_session_peer_v1* asking, const char* kind, const void* handle);
  bool contains(const gvirtus_session_peer_v1* asking, const void* address, uint64_t bytes);
  void forget(const gvirtus_session_peer_v1* asking, const char* kind, const void* handle);
  void device_reset(const gvirtus_session_peer_v1* asking, int device);

 private:
  // The peers other than `asking`, copied under the lock (peers join while others ask).
  std::vector<gvirtus_session_peer_v1> others(const gvirtus_session_peer_v1* asking);

  std::mutex mutex_;
  std::vector<gvirtus_session_peer_v1> peers_;
  gvirtus_session_registry_v1 table_;
};

}  // namespace gvirtus
