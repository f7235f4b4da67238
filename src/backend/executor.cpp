#include "backend/executor.h"

namespace gvirtus {

Executor::Executor(Run run) : run_(std::move(run)), thread_([this] { loop(); }) {}

Executor::Executor(Run run, OnCallingThread) : run_(std::move(run)) {}

Executor::~Executor() {
  stop();
  if (thread_.joinable()) thread_.join();
}

void Executor::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
}

void Executor::run_here() {
  loop();
}

void Executor::post(const FrameHeader& header, std::span<const std::byte> payload, uint64_t order) {
  {
    std::lock_guard lock(mutex_);
    std::vector<std::byte> buffer;
    if (!spare_.empty()) {
      buffer = std::move(spare_.back());
      spare_.pop_back();
    }
    buffer.assign(payload.begin(), payload.end());
    queue_.push_back(Pending{header, std::move(buffer), order});
  }
  wake_.notify_one();
}

bool Executor::busy() const {
  std::lock_guard lock(mutex_);
  return running_call_ || !queue_.empty();
}

void Executor::loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and every posted call has run
    Pending call = std::move(queue_.front());
    queue_.pop_front();
    running_call_ = true;
    lock.unlock();
    run_(call.header, call.payload, call.order);
    lock.lock();
    running_call_ = false;
    spare_.push_back(std::move(call.payload));
  }
}

}  // namespace gvirtus
