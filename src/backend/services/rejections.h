// Calls the backend refuses on the library's behalf, for every plugin (a shared backend service).
//
// A generated handler that finds a handle or a device pointer its session does not hold answers
// the call with the library's own error without calling the library. The library's last error
// then does not know of the refusal, so it is kept as the executing thread's pending error, which
// the library's last-error calls (a descriptor's "last_error") report until a later call fails in
// the library itself. An asynchronous call's refusal reaches the application that way, as the
// library's own asynchronous errors do.
//
// Statuses are the library's, as int32 (every status type travels so). Thread affinity: per
// executing thread, as a library's last error is; the log budget is per process (one session).
#pragma once

#include <cstdint>
#include <string_view>

#include "common/wire.h"
#include "protocol/call_table.h"

namespace gvirtus::services {

// The call `name` is about to run: no refusal yet. Its name goes into the log line of a refusal
// (a literal's: it must outlive the call).
void begin_call(std::string_view name = {});
// Refuses `value` (a handle or pointer named `what`) with `status`; logs the first few refusals
// of the session with `why` and the call's name. Returns `status`.
int32_t refuse(int32_t status, const char* library, const char* what, const void* value,
               const char* why);
// What the call returned: a failure the library itself produced is newer than any pending
// refusal, which it therefore clears.
void end_call(int32_t result, int32_t success);
// A last-error call: the library's answer `result`, or the thread's pending refusal if there is
// one (consumed when `reset`).
int32_t merge_last_error(int32_t result, bool reset);

// Runs one call's handler (`name`), body(Status& result), between begin_call and end_call; the
// reply of a last-error call gets the merged status in its first four bytes (where every
// generated reply has its status). Returns the library's own result.
template <typename Status, typename Body>
Status run_call(std::string_view name, LastErrorRole role, Status success, WireWriter& reply,
                Body&& body) {
  begin_call(name);
  Status result = success;
  body(result);
  if (role == LastErrorRole::kNone) {
    end_call(result, success);
  } else {
    reply.store_at<int32_t>(0, merge_last_error(result, role == LastErrorRole::kTake));
  }
  return result;
}

// A library without last-error calls (the CUDA driver) reports an asynchronous error from a later
// call, as CUDA does. So for such a plugin: a call the client sent ahead that fails leaves its
// status pending on the executing thread (note_ahead_failure), and the thread's next waited-for
// call that succeeds answers with it instead, which clears it (deferred_failure, given that
// call's own result; a call that fails itself answers its own failure and leaves the pending one).
void note_ahead_failure(int32_t result, int32_t success);
int32_t deferred_failure(int32_t result, int32_t success);
// A reset destroyed the context the pending failure came from: it goes with it (the reset itself
// answers its own success, as the driver's does).
void drop_ahead_failure();

// The first failure among already computed checks, or `success`.
template <typename Status, typename... Results>
Status first_failure(Status success, Results... results) {
  Status first = success;
  ((first = first != success ? first : results), ...);
  return first;
}

}  // namespace gvirtus::services
