// A plugin library loaded through the C ABI (backend/plugin_abi.h), seen by the daemon as a
// BackendPlugin: its sessions call the library's table, and a call's reply is the plugin's own
// buffer, sent without a copy (Call::reply_bytes).
#pragma once

#include "backend/plugin.h"
#include "backend/plugin_abi.h"

namespace gvirtus {

// Wraps a table the registry has checked (version, size, functions, name). Lives as long as the
// process, like the library.
BackendPlugin* adapt_abi_plugin(const gvirtus_plugin_table_v1* table);

}  // namespace gvirtus
