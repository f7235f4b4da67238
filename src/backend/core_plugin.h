// The built-in core plugin (protocol/core_calls.h): ping and sink. Hello is handled by the session
// itself, before any plugin runs.
#pragma once

#include "backend/plugin.h"

namespace gvirtus {

BackendPlugin* core_plugin();

}  // namespace gvirtus
