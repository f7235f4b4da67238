#include "backend/services/session_services.h"

namespace gvirtus::services {

SessionServices& session_services() {
  static SessionServices services;
  return services;
}

}  // namespace gvirtus::services
