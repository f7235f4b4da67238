// The driver's current context follows its client thread where client threads share a backend
// thread (backend/services/client_threads.h): the descriptor's before_call puts back the context
// the client thread had, and after each call the context current now is noted as its.
//
// Thread affinity: any of the session's threads.
#pragma once

#include <cstdint>

namespace gvirtus::cuda {

// The descriptor's before_call.
void before_call(uint32_t client_thread);
// After a call: the calling backend thread's current context is its client thread's.
void note_thread_context();
// A session opens.
void forget_thread_contexts();

}  // namespace gvirtus::cuda
