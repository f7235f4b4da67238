#include "communicators/shm/shm_futex.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>

namespace gvirtus::shm {
namespace {

long futex(std::atomic<uint32_t>& word, int op, uint32_t value, const timespec* timeout) {
  return ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), op, value, timeout, nullptr, 0);
}

}  // namespace

FutexWait futex_wait(std::atomic<uint32_t>& word, uint32_t expected,
                     std::chrono::nanoseconds timeout) {
  if (timeout.count() <= 0) return FutexWait::kTimedOut;
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(timeout);
  timespec t{};
  t.tv_sec = static_cast<time_t>(std::min<int64_t>(seconds.count(), INT_MAX));
  t.tv_nsec = static_cast<long>((timeout - seconds).count());
  if (futex(word, FUTEX_WAIT, expected, &t) == 0) return FutexWait::kWoken;
  switch (errno) {
    case ETIMEDOUT:
      return FutexWait::kTimedOut;
    case EAGAIN:  // the word changed before we slept: a wake-up
    case EINTR:
      return FutexWait::kWoken;
    default:  // EFAULT, ENOSYS: no futex on this memory
      return FutexWait::kUnsupported;
  }
}

bool futex_wake(std::atomic<uint32_t>& word) {
  return futex(word, FUTEX_WAKE, INT_MAX, nullptr) >= 0 || (errno != EFAULT && errno != ENOSYS);
}

}  // namespace gvirtus::shm
