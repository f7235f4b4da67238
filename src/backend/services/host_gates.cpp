#include "backend/services/host_gates.h"

#include <algorithm>
#include <utility>

namespace gvirtus::services {
namespace {

// How often a waiting gate or next() looks whether the client is gone: the flag is a plain
// atomic the session sets, with nothing to wake waiters.
constexpr std::chrono::milliseconds kGoneCheck{100};

}  // namespace

HostGates::~HostGates() {
  close();
}

void HostGates::open(const std::atomic<int>* client_gone) {
  std::lock_guard lock(mutex_);
  // Not a reset: a plugin that joins a live session (OpenPlugin) must not drop gates in flight.
  client_gone_ = client_gone;
  closed_ = false;
}

void HostGates::close() {
  std::lock_guard lock(mutex_);
  closed_ = true;
  changed_.notify_all();
}

bool HostGates::gone() const {
  return closed_ || (client_gone_ != nullptr && client_gone_->load(std::memory_order_relaxed));
}

Gate* HostGates::make(uint64_t token, bool once) {
  std::lock_guard lock(mutex_);
  if (token == 0 || gates_.size() >= kMaxGates) return nullptr;
  auto gate = std::make_unique<Gate>(Gate{this, token, once});
  Gate* made = gate.get();
  gates_.emplace(made, std::move(gate));
  return made;
}

void HostGates::discard(Gate* gate) {
  std::lock_guard lock(mutex_);
  gates_.erase(gate);
}

uint64_t HostGates::token_of(const void* data) const {
  std::lock_guard lock(mutex_);
  const auto found = gates_.find(static_cast<const Gate*>(data));
  return found != gates_.end() ? found->second->token : 0;
}

void HostGates::reach(void* gate, int32_t status) {
  auto* g = static_cast<Gate*>(gate);
  g->owner->reach_gate(g, status, true);
}

void HostGates::notify(void* gate, int32_t status) {
  auto* g = static_cast<Gate*>(gate);
  g->owner->reach_gate(g, status, false);
}

void HostGates::reach_gate(Gate* gate, int32_t status, bool wait) {
  std::unique_lock lock(mutex_);
  const bool once = gate->once;
  if (!gone()) {
    const uint64_t run = next_run_++;
    reached_.push_back(ReachedGate{run, gate->token, status, once});
    changed_.notify_all();
    if (wait) {
      released_[run] = false;
      while (!gone() && !released_[run]) changed_.wait_for(lock, kGoneCheck);
      released_.erase(run);
    }
  }
  if (once) gates_.erase(gate);
}

std::optional<ReachedGate> HostGates::next(uint64_t done, std::chrono::milliseconds wait) {
  const auto until = std::chrono::steady_clock::now() + std::min(wait, kMaxWait);
  std::unique_lock lock(mutex_);
  // Only a run whose gate waits counts: a client cannot fill released_.
  if (const auto waiting = released_.find(done); waiting != released_.end()) {
    waiting->second = true;
    changed_.notify_all();
  }
  while (reached_.empty() && !gone()) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= until) return std::nullopt;
    changed_.wait_for(lock, std::min<std::chrono::steady_clock::duration>(until - now, kGoneCheck));
  }
  if (reached_.empty()) return std::nullopt;  // the session is ending
  const ReachedGate first = reached_.front();
  reached_.pop_front();
  return first;
}

void serve_next_gate(HostGates& gates, WireReader& in, WireWriter& out) {
  const auto done = in.get<uint64_t>();
  const auto wait_ms = in.get<uint32_t>();
  in.expect_end();
  const auto reached = gates.next(done, std::chrono::milliseconds(wait_ms));
  out.put<int32_t>(0);
  out.put<uint8_t>(reached ? 1 : 0);
  if (!reached) return;
  out.put<uint64_t>(reached->run);
  out.put<uint64_t>(reached->token);
  out.put<int32_t>(reached->status);
  out.put<uint8_t>(reached->once ? 1 : 0);
}

HostGates& host_gates() {
  static HostGates* const gates = new HostGates;
  return *gates;
}

}  // namespace gvirtus::services
