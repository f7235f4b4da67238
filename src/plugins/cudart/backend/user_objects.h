// The cudart plugin's user objects (rows 285-289 of cudart_calls.txt; user_objects.cpp says how),
// called by run_custom: true when `fn` is one of them, false otherwise.
#pragma once

#include <cuda_runtime_api.h>

#include "common/wire.h"
#include "plugins/cudart/cudart_calls.h"

namespace gvirtus::cudart {

bool run_user_object_call(Fn fn, WireReader& in, WireWriter& out, cudaError_t& result);

// A destroyed graph's references to user objects went with it; a new session holds none.
void forget_user_object_references(cudaGraph_t graph);
void forget_all_user_objects();

}  // namespace gvirtus::cudart
