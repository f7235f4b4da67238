#include "backend/services/rejections.h"

#include <atomic>

#include "common/log.h"

namespace gvirtus::services {
namespace {

// A client that names bad handles in a loop must not flood the daemon's log: the first few
// refusals of a session say what happened, the rest are only returned.
constexpr int kLoggedRefusals = 8;
std::atomic<int> logged_refusals{0};

struct ThreadRefusals {
  int32_t pending = 0;  // the newest refusal the library does not know of (0: none)
  bool pending_set = false;
  bool refused_this_call = false;
  std::string_view call;  // the running call's name, for the log
};
thread_local ThreadRefusals this_thread;

struct AheadFailure {
  int32_t status = 0;
  bool pending = false;
};
thread_local AheadFailure ahead_failure;

}  // namespace

void begin_call(std::string_view name) {
  this_thread.refused_this_call = false;
  this_thread.call = name;
}

int32_t refuse(int32_t status, const char* library, const char* what, const void* value,
               const char* why) {
  this_thread.pending = status;
  this_thread.pending_set = true;
  this_thread.refused_this_call = true;
  if (logged_refusals.fetch_add(1, std::memory_order_relaxed) < kLoggedRefusals) {
    GVIRTUS_LOG(kWarning) << library << ": "
                          << (this_thread.call.empty() ? "a call" : this_thread.call)
                          << " rejected " << what << " " << value << ": " << why;
  }
  return status;
}

void end_call(int32_t result, int32_t success) {
  if (result != success && !this_thread.refused_this_call) this_thread.pending_set = false;
}

int32_t merge_last_error(int32_t result, bool reset) {
  const bool pending = this_thread.pending_set;
  const int32_t refusal = this_thread.pending;
  if (reset) this_thread.pending_set = false;
  return pending ? refusal : result;
}

void note_ahead_failure(int32_t result, int32_t success) {
  if (result == success || ahead_failure.pending) return;  // the first one is what CUDA reports
  ahead_failure = {result, true};
}

void drop_ahead_failure() {
  ahead_failure.pending = false;
}

int32_t deferred_failure(int32_t result, int32_t success) {
  if (result != success || !ahead_failure.pending) return result;
  ahead_failure.pending = false;
  return ahead_failure.status;
}

}  // namespace gvirtus::services
