// Call tables: one per plugin, describing each call once for both sides.
//
// A plugin writes its table as an X-macro:
//   #define GVIRTUS_CORE_CALLS(X) X(Hello, 0, sync, "hello") X(Ping, 1, sync, "blob")
// and derives from it, with the helpers below, the function-id enum used by the stub and the
// handler array used by the backend, plus a hash of the table's text. The hash goes into the
// connect handshake, so a stub and a backend built from different tables refuse each other with
// a clear message instead of misreading frames.
#pragma once

#include <cstdint>
#include <string_view>

namespace gvirtus {

// FNV-1a, 64 bit: stable across compilers and machines, evaluated at compile time.
constexpr uint64_t fnv1a64(std::string_view text) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (char c : text) {
    hash ^= static_cast<uint8_t>(c);
    hash *= 0x100000001b3ull;
  }
  return hash;
}

// What the handshake exchanges about a plugin.
struct PluginIdentity {
  uint16_t id;
  std::string_view name;
  uint64_t table_hash;
  // The plugin interface version the backend side speaks; 0 accepts any client's. A client that
  // opens the plugin on a live session names the version it speaks (OpenPlugin).
  uint32_t version = 0;
};

// Whether a call reports its library's last error, taking it (cudaGetLastError) or peeking at it
// (cudaPeekAtLastError): the backend merges the calls it refused on the library's behalf into
// their result (backend/services/rejections.h).
enum class LastErrorRole { kNone, kTake, kPeek };

}  // namespace gvirtus

// Expands one table row into its signature text; the rows concatenate into one string literal.
#define GVIRTUS_CALL_SIGNATURE(name, id, kind, args) #name ":" #id ":" #kind ":" args ";"
// Expands one table row into an enumerator.
#define GVIRTUS_CALL_ENUMERATOR(name, id, kind, args) k##name = id,

// Declares, inside a plugin's namespace, what both sides derive from its X-macro table TABLE:
// kPluginId, the function-id enum Fn, kIdentity (with the hash of the table's text and the
// interface version, 0 for any) and call_id(). The user includes common/frame.h (make_call_id).
#define GVIRTUS_DEFINE_CALL_TABLE(TABLE, plugin_id, plugin_name, interface_version)       \
  inline constexpr uint16_t kPluginId = plugin_id;                                        \
  enum class Fn : uint16_t { TABLE(GVIRTUS_CALL_ENUMERATOR) kCount };                     \
  inline constexpr PluginIdentity kIdentity{                                              \
      kPluginId, plugin_name, fnv1a64(TABLE(GVIRTUS_CALL_SIGNATURE)), interface_version}; \
  constexpr uint32_t call_id(Fn fn) {                                                     \
    return make_call_id(kPluginId, static_cast<uint16_t>(fn));                            \
  }
