/* The backend plugin ABI: what a plugin library libgvirtus-plugin-<name>.so exports, in C.
 *
 * A plugin exports a function named gvirtus_backend_plugin_v<N> for the ABI version N it was built
 * for (the way NCCL's net plugins export ncclNetPlugin_v<N>); it returns a table of function
 * pointers whose first two fields are that version and the table's size. The backend looks for the
 * versions it speaks, newest first, and adapts an older one it still knows; a plugin built for a
 * version it does not know (newer, or the C++ interface of gvirtus before this ABI) is refused
 * with a message naming the plugin and the versions, and only sessions that ask for that plugin
 * are refused: the daemon and every other plugin go on.
 *
 * Nothing but C crosses this boundary: no C++ object, no exception, no allocation that the other
 * side frees. A plugin written in C++ uses backend/plugin_export.h, which builds this table from
 * its BackendPlugin class and turns every exception into an error kind and message.
 *
 * Threads and processes: the daemon loads the library (so a missing one fails at startup) but
 * never calls open_session or handle; those run in the session's worker process, after fork().
 * handle runs on the worker's thread for the calling client thread: calls of different client
 * threads may run concurrently, so a plugin session must be thread-safe.
 */
#ifndef GVIRTUS_BACKEND_PLUGIN_ABI_H
#define GVIRTUS_BACKEND_PLUGIN_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GVIRTUS_BACKEND_PLUGIN_ABI_VERSION 1u
/* The exported entry of this version:
 *   const gvirtus_plugin_table_v1* gvirtus_backend_plugin_v1(void); */
#define GVIRTUS_BACKEND_PLUGIN_ENTRY_V1 "gvirtus_backend_plugin_v1"
/* The entry of plugins built for the C++ interface that preceded this ABI. */
#define GVIRTUS_BACKEND_PLUGIN_ENTRY_CXX "gvirtus_backend_plugin"

/* What one plugin of a session offers the session's other plugins (through the registry below):
 * whether it holds a handle of a kind, named as the descriptors name handle kinds ("stream",
 * "event", "memory pool": the same objects in NVIDIA's runtime and driver), whether a device
 * range lies in memory its calls allocated, forgetting a handle another plugin destroyed, and
 * forgetting what a device reset through another plugin destroyed (the device's primary context
 * is both plugins'). Called on any of the session's threads; must not call the registry back. */
typedef struct gvirtus_session_peer_v1 {
  void* self;
  int (*holds)(void* self, const char* kind, const void* handle);
  int (*contains)(void* self, const void* address, uint64_t bytes);
  void (*forget)(void* self, const char* kind, const void* handle);
  void (*device_reset)(void* self, int device);
} gvirtus_session_peer_v1;

/* The session's registry, shared by its plugins (one session per worker process): a plugin joins
 * when its session opens, and asks the others about what it does not hold itself, so that a
 * process using NVIDIA's runtime through one plugin and the driver through another sees the same
 * pointers, streams and events on both paths. The registry and the peers live as long as the
 * session; `asking` is left out of the answers. */
typedef struct gvirtus_session_registry_v1 {
  uint32_t struct_size;
  void* self;
  void (*join)(void* self, const gvirtus_session_peer_v1* peer);
  int (*holds)(void* self, const gvirtus_session_peer_v1* asking, const char* kind,
               const void* handle);
  int (*contains)(void* self, const gvirtus_session_peer_v1* asking, const void* address,
                  uint64_t bytes);
  void (*forget)(void* self, const gvirtus_session_peer_v1* asking, const char* kind,
                 const void* handle);
  void (*device_reset)(void* self, const gvirtus_session_peer_v1* asking, int device);
} gvirtus_session_registry_v1;

/* The session a plugin session serves. Strings are NUL-terminated and live as long as the
 * session. Fields are only ever added at the end: a plugin reads one only when struct_size
 * covers it. */
typedef struct gvirtus_session_info_v1 {
  uint32_t struct_size;
  const char* peer;      /* "tcp://127.0.0.1:40112" */
  const char* transport; /* "tcp" */
  const char* program;   /* the client's program name, from its handshake */
  uint32_t client_pid;
  /* Memory the client maps too (shm's arena), or NULL and 0; its contents are the client's,
   * hostile like any input. */
  void* shared_memory;
  size_t shared_memory_size;
  /* Where the plugin keeps the device memory it holds for the session, in bytes, for status
   * queries; NULL when nothing reads it. Shared with other processes: update it only with atomic
   * stores. */
  uint64_t* device_bytes;
  /* The session's registry of its plugins (above); NULL when the backend offers none. */
  const gvirtus_session_registry_v1* registry;
  /* The backend's module cache (backend/services/module_cache.h) that sessions share: its
   * directory, or NULL or "" when there is none, and the bound on its size in bytes. */
  const char* module_cache_dir;
  uint64_t module_cache_max_bytes;
  /* Non-zero once the client is gone (the session is ending): a call that waits for the client
   * stops waiting. Read it with atomic loads; NULL when the backend offers none. */
  const int* client_gone;
} gvirtus_session_info_v1;

/* One call to execute: the frame's header fields and its request payload. */
typedef struct gvirtus_call_v1 {
  uint32_t call_id; /* plugin id << 16 | function */
  uint16_t flags;   /* the frame's flags: asynchronous calls have kFlagAsync (4) */
  uint32_t thread_id;
  uint64_t request_id;
  const void* args;
  size_t args_size;
} gvirtus_call_v1;

/* What a call (or open_session) produced. error_kind 0 is success, with the reply payload in
 * reply/reply_size; else a gvirtus error kind (1 failed, 2 overloaded, 3 disconnected,
 * 4 unimplemented, 5 invalid input, 6 timed out) and a message. Invalid input means the request
 * was malformed and ends the session; any other kind goes back to the client as an error reply.
 * The memory behind reply and error_message is the plugin's and stays valid until the same
 * thread calls into the plugin again. */
typedef struct gvirtus_result_v1 {
  const void* reply;
  size_t reply_size;
  uint32_t error_kind;
  const char* error_message;
} gvirtus_result_v1;

typedef struct gvirtus_plugin_table_v1 {
  uint32_t abi_version; /* GVIRTUS_BACKEND_PLUGIN_ABI_VERSION when built */
  uint32_t struct_size; /* sizeof(gvirtus_plugin_table_v1) when built */
  uint16_t id;          /* the high 16 bits of its call ids */
  const char* name;
  uint64_t table_hash; /* its call table's hash, checked against each client's */
  uint32_t version;    /* its interface version; 0: any client's */
  /* Starts the plugin's state for a session; returns it, or NULL with result's error. */
  void* (*open_session)(const gvirtus_session_info_v1* info, gvirtus_result_v1* result);
  void (*handle)(void* session, const gvirtus_call_v1* call, gvirtus_result_v1* result);
  /* Ends a session's state (when the session ends, after its last call). */
  void (*close_session)(void* session);
  /* Fields added later: the backend reads one only when struct_size covers it, and a plugin
   * table needs no more than GVIRTUS_PLUGIN_TABLE_V1_MIN_SIZE bytes. */
  /* Non-zero when the calls of a function (the low 16 bits of their call ids) print nothing
   * themselves (backend/plugin.h, BackendPlugin::quiet); NULL: any call may print. Called before
   * each synchronous reply, on any of the session's threads. */
  int (*quiet)(uint16_t function);
} gvirtus_plugin_table_v1;

/* The size of the table's first version, which every v1 plugin has. */
#define GVIRTUS_PLUGIN_TABLE_V1_MIN_SIZE \
  (offsetof(gvirtus_plugin_table_v1, close_session) + sizeof(void (*)(void*)))

typedef const gvirtus_plugin_table_v1* (*gvirtus_backend_plugin_entry_v1)(void);

#ifdef __cplusplus
}
#endif

#endif /* GVIRTUS_BACKEND_PLUGIN_ABI_H */
