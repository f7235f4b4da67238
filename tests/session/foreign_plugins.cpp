// Two plugin libraries the backend must refuse, for plugin_abi_test.cpp: built with
// -DPROBE_NEXT, one for a backend plugin ABI newer than any backend speaks (it exports only
// gvirtus_backend_plugin_v2); without it, one built for the C++ plugin interface that preceded
// the C ABI (gvirtus_backend_plugin). Neither entry is ever called by a backend that refuses it.
#include <cstdint>

#ifdef PROBE_NEXT
struct NextTable {
  uint32_t abi_version;
  uint32_t struct_size;
};
extern "C" __attribute__((visibility("default"))) const NextTable* gvirtus_backend_plugin_v2() {
  static const NextTable table{2, sizeof(NextTable)};
  return &table;
}
#else
extern "C" __attribute__((visibility("default"))) void* gvirtus_backend_plugin() {
  return nullptr;
}
#endif
