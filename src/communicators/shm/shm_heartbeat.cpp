#include "communicators/shm/shm_heartbeat.h"

#include <pthread.h>
#include <unistd.h>

namespace gvirtus::shm {
namespace {

std::atomic<uint64_t> g_forks{0};
std::atomic<uint64_t> g_epoch{0};

void count_fork() {
  g_forks.fetch_add(1, std::memory_order_relaxed);
}

void new_epoch() {
  g_epoch.fetch_add(1, std::memory_order_relaxed);
}

bool register_handlers() {
  ::pthread_atfork(nullptr, &count_fork, &new_epoch);
  return true;
}

}  // namespace

uint64_t forks_so_far() {
  static const bool registered = register_handlers();
  (void)registered;
  return g_forks.load(std::memory_order_relaxed);
}

uint64_t process_epoch() {
  (void)forks_so_far();  // handlers registered
  return g_epoch.load(std::memory_order_relaxed);
}

Heartbeat::Heartbeat(std::atomic<uint64_t>& counter, std::chrono::milliseconds period)
    : state_(std::make_unique<State>()), owner_(::getpid()) {
  State* s = state_.get();
  s->thread = std::thread([s, &counter, period] {
    std::unique_lock lock(s->mutex);
    while (!s->stop) {
      counter.fetch_add(1, std::memory_order_relaxed);
      s->wake.wait_for(lock, period);
    }
  });
}

Heartbeat::~Heartbeat() {
  if (!here()) {
    (void)state_.release();  // the thread and its lock live in the parent only
    return;
  }
  {
    std::lock_guard lock(state_->mutex);
    state_->stop = true;
  }
  state_->wake.notify_all();
  state_->thread.join();
}

bool Heartbeat::here() const {
  return owner_ == ::getpid();
}

}  // namespace gvirtus::shm
