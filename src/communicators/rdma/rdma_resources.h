// Owning wrappers for the rdma_cm and verbs objects of one connection, and the fork rules.
//
// The backend accepts in its daemon process and forks one worker per session, which then owns the
// connection. Two things make that work: our registered buffers are MAP_SHARED (a forked child
// sees what the NIC writes, where private pages would be copied away from it), and kernel objects
// are torn down only by the process that uses them: the daemon, after handing a connection to a
// worker, closes its descriptors but destroys nothing the worker still needs.
#pragma once

#include <rdma/rdma_cma.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

namespace gvirtus::rdma {

// Counts fork() calls made by this process (pthread_atfork); installed by the plugin entry.
void install_fork_counter();
uint64_t fork_generation();

// Anonymous MAP_SHARED memory, page-aligned; unmapped on destruction.
class SharedRegion {
 public:
  SharedRegion() = default;
  explicit SharedRegion(size_t bytes);
  ~SharedRegion();
  SharedRegion(const SharedRegion&) = delete;
  SharedRegion& operator=(const SharedRegion&) = delete;
  SharedRegion& operator=(SharedRegion&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(bytes_, other.bytes_);
    return *this;
  }

  std::byte* data() const { return data_; }
  size_t size() const { return bytes_; }

 private:
  std::byte* data_ = nullptr;
  size_t bytes_ = 0;
};

// An rdma_cm event channel; its fd is non-blocking so that waits go through poll() with deadlines.
class EventChannel {
 public:
  EventChannel();
  ~EventChannel();
  EventChannel(const EventChannel&) = delete;
  EventChannel& operator=(const EventChannel&) = delete;

  rdma_event_channel* get() const { return channel_; }
  int fd() const { return channel_->fd; }

 private:
  rdma_event_channel* channel_ = nullptr;
};

// Waits for the next cm event on `channel` until `deadline_ms` (monotonic, -1 = forever) and
// returns it (the caller acks it), or nullptr on timeout.
rdma_cm_event* next_cm_event(EventChannel& channel, int64_t deadline_ms);
int64_t now_ms();

// "rdma://10.0.0.1:7471" for an address and port.
std::string rdma_url(const sockaddr* addr);

}  // namespace gvirtus::rdma
