// The backend's cudart handlers: generated ones (cudart_handlers.cpp, from cudart_calls.txt) and
// the custom ones written by hand. Each decodes its request, calls NVIDIA's real runtime and
// writes the reply: i32 result, then outputs. Malformed requests throw Error{kInvalidInput},
// which ends the session.
#pragma once

#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>

#include "common/function_ref.h"
#include "common/wire.h"
#include "plugins/cudart/backend/modules.h"
#include "plugins/cudart/common/marshal.h"
#include "plugins/cudart/cudart_calls.h"

namespace gvirtus::cudart {

// Runs a generated call; false if `fn` is not one.
bool run_generated(Fn fn, WireReader& in, WireWriter& out, cudaError_t& result);

// Runs a custom call; false if `fn` is not one.
bool run_custom(Fn fn, WireReader& in, WireWriter& out, cudaError_t& result);

// Runs a custom call of stream capture and graphs (graphs.cpp); false if `fn` is not one.
bool run_graph_call(Fn fn, WireReader& in, WireWriter& out, cudaError_t& result);

// Runs a custom call of graph nodes and the graph's destruction (graph_node_calls.cpp); false if
// `fn` is not one.
bool run_graph_node_call(Fn fn, WireReader& in, WireWriter& out, cudaError_t& result);
// cudaMemPrefetchBatchAsync, cudaMemDiscardBatchAsync, cudaMemDiscardAndPrefetchBatchAsync
// (managed_batches.cpp; wire: src/common/managed_batch_wire.h).
cudaError_t run_managed_batch(Fn fn, WireReader& in, WireWriter& out);

// cudaMemPoolExportToShareableHandle, cudaMemPoolImportFromShareableHandle,
// cudaMemPoolExportPointer, cudaMemPoolImportPointer (pool_sharing.cpp); false if `fn` is none.
bool run_pool_sharing(Fn fn, WireReader& in, WireWriter& out, cudaError_t& result);

// cudaLogsRegisterCallback, cudaLogsUnregisterCallback, cudaLogsDumpToMemory and the relayed
// messages' row (logs.cpp); false if `fn` is none.
bool run_logs(Fn fn, WireReader& in, WireWriter& out, cudaError_t& result);

// gvirtusStagingAlloc, gvirtusStagingWrite, gvirtusStagingRead (host_staging.cpp; the wire and
// the blocks: backend/services/staging_blocks.h); false if `fn` is none.
bool run_host_staging(Fn fn, WireReader& in, WireWriter& out, cudaError_t& result);

// Forgets the conditional handles the session made (a new session).
void forget_conditional_handles();

// cudaStreamBeginCaptureToGraph, cudaStreamUpdateCaptureDependencies
// (capture_dependencies.cpp); false if `fn` is neither.
bool run_capture_dependencies_call(Fn fn, WireReader& in, WireWriter& out, cudaError_t& result);

// An attribute call after its target (attribute_calls.cpp): i32 id bits, then for a set the
// value's bytes; the reply is the result, then a successful get's value. `vet_target` vets the
// target, `apply` calls the runtime.
cudaError_t run_attribute_call(
    WireReader& in, WireWriter& out, bool set, FunctionRef<cudaError_t()> vet_target,
    FunctionRef<cudaError_t(cudaLaunchAttributeID, cudaLaunchAttributeValue*)> apply);

// cudaStreamGetAttribute, cudaStreamSetAttribute (attribute_calls.cpp).
cudaError_t run_stream_attribute(Fn fn, WireReader& in, WireWriter& out);

}  // namespace gvirtus::cudart
