// The stub side of the probe plugin (probe_calls.h): libgvirtus-probe.so, a stub library like
// libcudart.so.13, linked against libgvirtus-frontend.so.1. Loading it opens the probe plugin in
// the process's session, live or not yet connected. Its C functions return gvirtus error kinds
// (0: success) and copy the message of a failure into the caller's buffer.
#include <cstring>
#include <string>

#include "common/error.h"
#include "common/log.h"
#include "frontend/process_session.h"
#include "session/probe_calls.h"

#define PROBE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

const bool opened = [] {
  try {
    gvirtus::process_session::open_plugin(gvirtus::probe::kIdentity);
  } catch (const gvirtus::Error& e) {
    GVIRTUS_LOG(kError) << "the probe plugin could not join the session: " << e.what();
  }
  return true;
}();

void copy_message(const std::string& text, char* out, size_t size) {
  if (out == nullptr || size == 0) return;
  const size_t n = std::min(size - 1, text.size());
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
}

}  // namespace

// The pid of the backend worker serving this process's session.
PROBE_EXPORT int probe_worker_pid(uint32_t* pid, char* message, size_t size) {
  (void)opened;
  try {
    gvirtus::process_session::call(gvirtus::probe::call_id(gvirtus::probe::Fn::kWorkerPid), {},
                                   [&](gvirtus::WireReader& in) {
                                     *pid = in.get<uint32_t>();
                                     in.expect_end();
                                   });
    return 0;
  } catch (const gvirtus::Error& e) {
    copy_message(e.what(), message, size);
    return static_cast<int>(e.kind());
  }
}
