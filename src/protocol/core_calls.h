// The core plugin: calls every session has, whatever else the backend serves.
//   Hello - the connect handshake (must be the first frame of a session).
//   Authenticate - the client's answer to the backend's challenge (second frame, only when the
//           backend has a secret; protocol/auth.h).
//   Ping  - echoes its payload: liveness checks, tests and the call-rate benchmarks.
//   Sink  - an asynchronous call that does nothing: the asynchronous throughput benchmark.
//   Wait  - returns after the given milliseconds (at most kMaxWaitMs): a call that blocks, as a
//           stream synchronisation does, for tests of how a session serves several threads.
//   Status - the backend's GPUs and sessions, for operators (gvirtus-smi; protocol/status.h).
//   OpenPlugin - opens one more plugin on a live session (protocol/handshake.h): a stub library
//           loaded after the first call joins the process's session.
//   ServeOnExecutors - from now on every client thread's calls run on an executor of their own,
//           none on the reading thread (backend/session.cpp). A stub asks for it before it sends
//           anything whose completion waits for the client (a host function's gate): a call
//           blocked on the reading thread would stop it reading the call that releases the gate.
//   ServesTheClient - the calling client thread runs the application's host functions (a stub's
//           callback thread): its calls never wait for calls other threads sent ahead
//           (backend/session.cpp), since one of those may itself wait, in the library, for a gate
//           this thread releases.
//   Output - not a call: frames the backend sends ahead of a synchronous reply, carrying what its
//           worker printed to the application's stdout or stderr (protocol/output_frames.h).
#pragma once

#include "common/frame.h"
#include "protocol/call_table.h"

#define GVIRTUS_CORE_CALLS(X)                                                 \
  X(Hello, 0, sync, "u16 version, str program, u32 pid, u32 cuda, plugins[]") \
  X(Ping, 1, sync, "raw payload -> same payload")                             \
  X(Sink, 2, async, "raw payload")                                            \
  X(Wait, 3, sync, "u32 milliseconds")                                        \
  X(Status, 4, sync, "-> BackendStatus (protocol/status.h)")                  \
  X(Authenticate, 5, sync, "u8 outcome, [32 proof]")                          \
  X(OpenPlugin, 6, sync, "u16 id, str name, u64 table_hash, u32 version")     \
  X(ServeOnExecutors, 7, sync, "-")                                           \
  X(ServesTheClient, 8, sync, "-")                                            \
  X(Output, 9, reply, "backend -> client, request id 0: u8 stream (1|2), raw bytes")

namespace gvirtus::core {

GVIRTUS_DEFINE_CALL_TABLE(GVIRTUS_CORE_CALLS, 0, "core", 0)

inline constexpr uint32_t kMaxWaitMs = 10000;

}  // namespace gvirtus::core
