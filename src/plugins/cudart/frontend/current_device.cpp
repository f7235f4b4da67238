// cudaGetDevice answered in the stub: libraries ask for the current device before nearly every
// call (a round trip each, otherwise). The current device is per thread, on the backend too (each
// client thread has its own backend thread), so each thread learns it from the backend once per
// session, and cudaSetDevice keeps it in step: a successful cudaSetDevice is the only runtime call
// that changes it. After a sticky context error or a lost backend the answer comes from the backend
// again (state_epoch()), so that the runtime's own answer in such states is what the program sees.
#include "frontend/frontend_abi.h"
#include "frontend/process_session.h"
#include "plugins/cudart/frontend/stub_call.h"

namespace gvirtus::cudart {
namespace {

struct KnownDevice {
  const void* session = nullptr;  // the session it was learnt in: a forked child has its own
  uint64_t epoch = 0;
  int device = 0;
};
thread_local KnownDevice t_known;

const void* current_session() {
  return process_session::token();
}

void remember(int device) {
  t_known = {current_session(), state_epoch(), device};
}

}  // namespace

int known_device() {
  const KnownDevice& known = t_known;
  return known.session != nullptr && known.session == current_session() ? known.device : 0;
}

}  // namespace gvirtus::cudart

namespace cr = gvirtus::cudart;

GVIRTUS_CUDART_EXPORT cudaError_t cudaGetDevice(int* device) {
  const cr::KnownDevice& known = cr::t_known;
  // A null pointer goes to the backend, whose runtime gives its own error for it.
  if (device != nullptr && known.session != nullptr && known.session == cr::current_session() &&
      known.epoch == cr::state_epoch()) {
    *device = known.device;
    return cudaSuccess;
  }
  const cudaError_t rc = cr::remote::cudaGetDevice(device);
  if (rc == cudaSuccess && device != nullptr) cr::remember(*device);
  return rc;
}

// The runtime makes the device's primary context current on the thread: the driver stub follows
// (stub_call.h's note_runtime_context).
GVIRTUS_CUDART_EXPORT cudaError_t cudaSetDevice(int device) {
  const cudaError_t rc = cr::remote::cudaSetDevice(device);
  if (rc == cudaSuccess) {
    cr::remember(device);
    gvirtus_runtime_context_set(device);
  }
  return rc;
}
