#include "plugins/cudart/frontend/not_supported.h"

#include "common/log.h"
#include "plugins/cudart/frontend/stub_call.h"

namespace gvirtus::cudart {

int not_supported(const char* name, std::atomic<bool>& logged) {
  if (!logged.exchange(true, std::memory_order_relaxed)) {
    GVIRTUS_LOG(kWarning) << name
                          << " is not supported by gvirtus; it returns cudaErrorNotSupported";
  }
  return record_local_error(cudaErrorNotSupported);
}

}  // namespace gvirtus::cudart
