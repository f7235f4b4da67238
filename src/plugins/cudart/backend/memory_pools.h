// The cudart backend's memory pool attributes (custom rows 218-219 of cudart_calls.txt; wire:
// common/memory_pool_wire.h).
#pragma once

#include <cuda_runtime_api.h>

#include "common/wire.h"
#include "plugins/cudart/cudart_calls.h"

namespace gvirtus::cudart {

// Runs `fn` if it is one of these calls; false otherwise.
bool run_memory_pool(Fn fn, WireReader& in, WireWriter& out, cudaError_t& result);

}  // namespace gvirtus::cudart
