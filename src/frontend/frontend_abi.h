/* The frontend's C ABI: the process's one gvirtus session, shared by every stub library.
 *
 * libgvirtus-frontend.so.1 holds the client core (frontend/client.h) once per process. Every stub
 * library (libcudart.so.13, and later libcuda.so.1, libnvidia-ml.so.1, ...) links it and reaches
 * the session only through the functions below, so that all stubs of a process share one session,
 * one backend worker and one CUDA context: a device pointer, stream or event that one stub got
 * means the same to every other. A child made by fork() gets its own session on its first call.
 *
 * Versioning: the symbols live under the version node GVIRTUS_FRONTEND_1. A stub checks
 * gvirtus_frontend_abi_version() once; an incompatible change adds functions under a new node
 * (old stubs keep working) or, for a break, a new SONAME. Structs passed in carry their own size
 * first, so fields can be appended without breaking older callers.
 *
 * Errors: every function that can fail returns a gvirtus error kind (GVIRTUS_OK = 0, else the
 * values of gvirtus::ErrorKind: failed, overloaded, disconnected, unimplemented, invalid input,
 * timed out), and the calling thread's gvirtus_error_message() says why. No C++ exception ever
 * crosses these functions, in either direction: a reply decoder returns a status instead of
 * throwing.
 */
#ifndef GVIRTUS_FRONTEND_ABI_H
#define GVIRTUS_FRONTEND_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GVIRTUS_FRONTEND_ABI_VERSION 1u
#define GVIRTUS_OK 0

#if defined(GVIRTUS_FRONTEND_BUILDING)
#define GVIRTUS_FRONTEND_API __attribute__((visibility("default")))
#else
#define GVIRTUS_FRONTEND_API
#endif

/* One piece of a request payload; a request is gathered from several without a copy. */
typedef struct gvirtus_piece {
  const void* data;
  size_t size;
} gvirtus_piece;

/* A plugin a stub library calls: its id (the high 16 bits of its call ids), its name, its call
 * table's hash, and the interface version the stub speaks (0: any). */
typedef struct gvirtus_plugin {
  uint32_t struct_size; /* sizeof(gvirtus_plugin) */
  uint16_t id;
  const char* name;
  uint64_t table_hash;
  uint32_t version;
} gvirtus_plugin;

/* Reads a reply payload while it is still in the transport's buffer (no copy); returns
 * GVIRTUS_OK or an error kind, with its message through gvirtus_error_message_set(). */
typedef int (*gvirtus_reply_decoder)(void* context, const void* payload, size_t size);

/* A synchronous call sent by gvirtus_begin_call() and not yet finished. */
typedef struct gvirtus_pending {
  uint64_t request_id;
  uint32_t call_id;
  uint64_t request_bytes;
} gvirtus_pending;

/* Names a plugin's calls for GVIRTUS_STATS; returns a NUL-terminated string or NULL. */
typedef const char* (*gvirtus_call_namer)(uint16_t function);

GVIRTUS_FRONTEND_API uint32_t gvirtus_frontend_abi_version(void);

/* The calling thread's message for the last error a function of this ABI returned. */
GVIRTUS_FRONTEND_API const char* gvirtus_error_message(void);
/* For decoders: sets the message that goes with the error kind they return. */
GVIRTUS_FRONTEND_API void gvirtus_error_message_set(const char* message);

/* Opens a plugin in the process's session. Before the session connects, the plugin joins the
 * handshake (one round trip for all); on a live session, a core OpenPlugin call opens it there,
 * so a library loaded long after the first call joins the same session. A refusal (unknown
 * plugin, different call table or version) names the plugin and the reason; the session goes on
 * and the refused plugin's calls fail. Each plugin is opened again in a forked child's session. */
GVIRTUS_FRONTEND_API int gvirtus_open_plugin(const gvirtus_plugin* plugin);

/* A synchronous call: sends the request and waits for its reply, which `decode` reads. */
GVIRTUS_FRONTEND_API int gvirtus_call(uint32_t call_id, const gvirtus_piece* pieces, size_t count,
                                      gvirtus_reply_decoder decode, void* context);
/* The same split in two, so that a thread can keep several calls in flight. Every begun call
 * must be finished; the backend answers a thread's calls in order. */
GVIRTUS_FRONTEND_API int gvirtus_begin_call(uint32_t call_id, const gvirtus_piece* pieces,
                                            size_t count, gvirtus_pending* pending);
GVIRTUS_FRONTEND_API int gvirtus_finish_call(const gvirtus_pending* pending,
                                             gvirtus_reply_decoder decode, void* context);
/* Where the end of a call's reply may land directly (gvirtus_begin_call_into): when the reply
 * is a success whose payload is exactly `at` + `bytes` long, its bytes from `at` on are written
 * to `into` as they arrive (a device-to-host copy's data, with no buffer in between), `landed`
 * is set to 1, and the decoder sees only the first `at` bytes. Otherwise (a failure, an error
 * reply, another length) nothing lands, `landed` stays 0 and the decoder sees the whole payload.
 * The landing and its memory must stay valid until the call is finished. */
typedef struct gvirtus_landing {
  void* into;
  uint64_t bytes;
  uint64_t at;
  int landed;
} gvirtus_landing;
/* gvirtus_begin_call() with a landing for its reply (NULL: none). */
GVIRTUS_FRONTEND_API int gvirtus_begin_call_into(uint32_t call_id, const gvirtus_piece* pieces,
                                                 size_t count, gvirtus_landing* landing,
                                                 gvirtus_pending* pending);
/* An asynchronous call: returns once sent (or held for batching); a failure on the backend is
 * reported later through gvirtus_take_async_error(). */
GVIRTUS_FRONTEND_API int gvirtus_send_async(uint32_t call_id, const gvirtus_piece* pieces,
                                            size_t count);
/* Sends the asynchronous calls held for batching now. */
GVIRTUS_FRONTEND_API int gvirtus_flush_async(void);
/* The first error of an asynchronous call since the last take: returns its kind (and sets the
 * message), or GVIRTUS_OK when there is none. */
GVIRTUS_FRONTEND_API int gvirtus_take_async_error(void);

/* Memory the backend maps too (shm's arena), connecting if needed; *size is 0 when the
 * transport shares none. */
GVIRTUS_FRONTEND_API int gvirtus_shared_memory(void** base, size_t* size);

/* A block of that memory for a stub's page-locked host memory: every stub of the process places
 * its blocks through these, so that none overlaps another's. `bytes` is rounded up to whole
 * pages (4 KiB); *taken is the block's size, 0 when the memory is full or shared with no backend.
 * A forked child's session starts with all of its own memory free. */
GVIRTUS_FRONTEND_API int gvirtus_shared_take(uint64_t bytes, uint64_t* offset, uint64_t* taken);
/* Frees the block that starts at `offset` (nothing when none does). */
GVIRTUS_FRONTEND_API int gvirtus_shared_give_back(uint64_t offset);

/* The application's page-locked host memory, as a stub allocates or registers it
 * (cudaMallocHost, cudaHostRegister, cuMemHostAlloc, ...): a transport that can send from
 * registered memory without a copy (rdma) registers it with every backend's connection, now or
 * when it is made. Unregister the same range before the memory is freed or unregistered, and only
 * once no copy reads it. Never connects; failures only cost the zero-copy path. These two live
 * under the version node GVIRTUS_FRONTEND_1.2. */
GVIRTUS_FRONTEND_API int gvirtus_host_memory_register(const void* addr, uint64_t bytes);
GVIRTUS_FRONTEND_API int gvirtus_host_memory_unregister(const void* addr, uint64_t bytes);

/* Managed memory mirrored in this process (frontend/managed_memory.h): a region of the backend's
 * managed memory mapped at its own address here, kept coherent at the points CUDA names. Before
 * any request goes out (but a mirror's transfer's own) the host's writes to managed memory reach
 * the backend, and the request's payload and its reply's landing, where they lie in managed
 * memory, are made resident. A stub calls gvirtus_managed_invalidate() after work that may change
 * managed memory on the device, and at synchronisation points: the host's next access then
 * fetches what the device wrote. `move` moves `bytes` between the backend's copy at `address` and
 * `host` (fetch: into host; flush: out of it), returning GVIRTUS_OK or an error kind; it must not
 * touch managed memory itself, and runs with this frontend's own requests allowed. */
typedef int (*gvirtus_managed_move)(void* context, uint64_t address, void* host, uint64_t bytes);
GVIRTUS_FRONTEND_API int gvirtus_managed_map(uint64_t address, uint64_t bytes,
                                             gvirtus_managed_move fetch, gvirtus_managed_move flush,
                                             void* context);
GVIRTUS_FRONTEND_API int gvirtus_managed_unmap(uint64_t address);
/* A managed variable (`__managed__`) of `owner` (a module of the stub's), mirrored at its
 * backend address (frontend/managed_variables.h): its pages are mapped as managed memory whose
 * transfers move only the variables' bytes. Adding one mirrored already does nothing. Owners are
 * told apart per stub by `fetch`. unmap_owner forgets the owner's variables (its module unloaded).
 */
GVIRTUS_FRONTEND_API int gvirtus_managed_map_variable(const void* owner, uint64_t address,
                                                      uint64_t bytes, gvirtus_managed_move fetch,
                                                      gvirtus_managed_move flush, void* context);
GVIRTUS_FRONTEND_API void gvirtus_managed_unmap_owner(const void* owner,
                                                      gvirtus_managed_move fetch);
/* Drops the mirror's clean copies overlapping [address, address + bytes); bytes 0: all of them. */
GVIRTUS_FRONTEND_API void gvirtus_managed_invalidate(uint64_t address, uint64_t bytes);
/* Whether `address` lies in a mirrored region: 1 with its start and size, else 0. */
GVIRTUS_FRONTEND_API int gvirtus_managed_find(uint64_t address, uint64_t* base, uint64_t* bytes);

/* A count of the changes one stub made to the session's devices that another stub of the process
 * may have cached answers about (a device reset, a primary context's flags): a stub bumps it after
 * such a change succeeded, and keys what it learnt of a device's contexts by it. Under the version
 * node GVIRTUS_FRONTEND_1.4. */
GVIRTUS_FRONTEND_API uint64_t gvirtus_device_generation(void);
GVIRTUS_FRONTEND_API void gvirtus_device_generation_bump(void);

/* The runtime's current context on the calling thread, as the runtime stub tells the driver stub
 * of it: NVIDIA's runtime makes a device's primary context current on a thread at the thread's
 * first call that needs a context and at each cudaSetDevice, and a program that calls the driver
 * API beside the runtime (or a library that does: cuFFT) sees that context as the driver's
 * current one. The runtime stub sets the thread's device then; the driver stub, finding a setting
 * it has not followed yet, makes that device's primary context current on the thread.
 * gvirtus_runtime_context gives the device and returns the setting's number (0: none yet on this
 * thread; each setting gets a new one). Under the version node GVIRTUS_FRONTEND_1.7. */
GVIRTUS_FRONTEND_API void gvirtus_runtime_context_set(int device);
GVIRTUS_FRONTEND_API uint64_t gvirtus_runtime_context(int* device);

/* Host functions that run in the application while the backend's stream waits for them
 * (frontend/host_callbacks.h; the backend's gates: backend/services/host_gates.h). A stub
 * registers the application's function as a callback and sends its token in the function's
 * place; the session's callback thread runs `run` with the callback and the status the gate
 * reached (a stream callback's; 0 for a host function) when the backend's stream reaches it. Under
 * the version node GVIRTUS_FRONTEND_1.5. */
typedef struct gvirtus_host_callback {
  void (*run)(const struct gvirtus_host_callback* callback, int32_t status);
  void* function; /* the application's, and what goes with it, for `run` */
  void* data;
  void* extra;
} gvirtus_host_callback;
/* Registers a copy of `callback`; returns its token (never 0), or 0 for a NULL callback or run. */
GVIRTUS_FRONTEND_API uint64_t gvirtus_host_callback_add(const gvirtus_host_callback* callback);
/* Copies the callback of `token` into *callback: 1 when it is registered, else 0. */
GVIRTUS_FRONTEND_API int gvirtus_host_callback_find(uint64_t token,
                                                    gvirtus_host_callback* callback);
/* Forgets `token`, whose enqueue failed. */
GVIRTUS_FRONTEND_API void gvirtus_host_callback_drop(uint64_t token);
/* Makes the calling thread's route's session serve the gates of the plugin whose "next" call is
 * `next_call_id` (request: u64 the run done or 0, u32 milliseconds to wait; reply: i32 status, u8
 * reached, then when reached u64 run, u64 token, i32 status, u8 once): the first time, the
 * session serves every client thread on an executor and a callback thread starts. */
GVIRTUS_FRONTEND_API int gvirtus_host_callbacks_serve(uint32_t next_call_id);

/* Identifies the session the calling thread's calls go to (its route's, below): it changes when a
 * forked child starts its own, and differs between the backends of a pool, so stubs key what they
 * learnt from a backend (loaded modules, device properties) by it. Never NULL. Does not connect. */
GVIRTUS_FRONTEND_API const void* gvirtus_session_token(void);

/* A client's pool (docs/cluster.md): the configuration may name several backends, each a session
 * of its own. Every call of this ABI that sends or reads goes to the calling thread's route, the
 * backend it last chose (0 until then), as CUDA's calls go to the thread's current device; a
 * stub routes each call by what it is about before sending it. A backend that cannot be reached
 * or dies fails only the calls routed to it. gvirtus_flush_async() sends every backend's held
 * calls. These functions live under the version node GVIRTUS_FRONTEND_1.1. */
/* How many backends the configuration names (1 when it names none: the one backend). Does not
 * connect. */
GVIRTUS_FRONTEND_API uint32_t gvirtus_pool_size(void);
/* A backend's name in the configuration ("backend"; "" when it names none), or NULL when there
 * is no such backend. Valid for the process's life. */
GVIRTUS_FRONTEND_API const char* gvirtus_pool_backend_name(uint32_t backend);
/* The device selection of a pool of several backends, over the union of their devices in the
 * pool's order (GVIRTUS_VISIBLE_DEVICES, else the configuration's visible_devices; normalised:
 * "2,0", "none", or "" for every device), for the stubs to apply: the backends get none. "" for
 * one backend, whose selection its backend applies. Valid for the process's life. */
GVIRTUS_FRONTEND_API const char* gvirtus_pool_device_selection(void);
/* The host of the tcp endpoint through which `backend` was reached (connecting if needed), as a
 * NUL-terminated string in `host` (`size` bytes); "" when it was reached over another transport.
 * Where another backend of the pool can reach it for a direct copy. */
GVIRTUS_FRONTEND_API int gvirtus_pool_backend_host(uint32_t backend, char* host, size_t size);
/* Routes the calling thread's next calls to `backend` (0 .. gvirtus_pool_size() - 1); invalid
 * input, naming the pool's size, when there is no such backend. */
GVIRTUS_FRONTEND_API int gvirtus_route_set(uint32_t backend);
/* The calling thread's route. */
GVIRTUS_FRONTEND_API uint32_t gvirtus_route_get(void);

/* The calling thread's id in frames (small, stable per thread). */
GVIRTUS_FRONTEND_API uint32_t gvirtus_thread_id(void);

/* Registers the names of a plugin's calls for the GVIRTUS_STATS table. */
GVIRTUS_FRONTEND_API void gvirtus_register_call_names(uint16_t plugin, const char* plugin_name,
                                                      gvirtus_call_namer namer);

/* Counts work beyond single calls for GVIRTUS_STATS's second table, by what it was (a copy
 * relayed between two backends of a pool: "copy relayed backend0 -> backend2"): one more, its
 * bytes and the time it took. Nothing when GVIRTUS_STATS is off. Under GVIRTUS_FRONTEND_1.1. */
GVIRTUS_FRONTEND_API void gvirtus_stats_note_work(const char* what, uint64_t bytes,
                                                  uint64_t nanoseconds);

#ifdef __cplusplus
}
#endif

#endif /* GVIRTUS_FRONTEND_ABI_H */
