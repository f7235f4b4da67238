// Which calls print nothing themselves (the descriptors' quiet_calls, BackendPlugin::quiet), as
// the plugin libraries tell the backend through the plugin ABI: queries are quiet, and the calls
// where the CUDA driver flushes the device's printf (synchronisations, blocking copies, launches,
// module loads, context destruction) are not, so that their output is relayed before they return
// (backend/output_relay.h).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <stdexcept>
#include <string>

#include "backend/plugin_abi.h"
#include "plugins/cuda/cuda_calls.h"
#include "plugins/cudart/cudart_calls.h"

namespace gvirtus::testing {
namespace {

// A plugin library's table, as the backend loads it; the library stays loaded.
const gvirtus_plugin_table_v1& plugin_table(const char* path) {
  void* library = ::dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) throw std::runtime_error(std::string("dlopen: ") + ::dlerror());
  auto entry = reinterpret_cast<gvirtus_backend_plugin_entry_v1>(
      ::dlsym(library, GVIRTUS_BACKEND_PLUGIN_ENTRY_V1));
  if (entry == nullptr) throw std::runtime_error(std::string(path) + " has no plugin entry");
  const gvirtus_plugin_table_v1* table = entry();
  if (table->struct_size < offsetof(gvirtus_plugin_table_v1, quiet) + sizeof table->quiet ||
      table->quiet == nullptr) {
    throw std::runtime_error(std::string(path) + " does not say which calls are quiet");
  }
  return *table;
}

template <typename Fn>
bool quiet(const gvirtus_plugin_table_v1& table, Fn fn) {
  return table.quiet(static_cast<uint16_t>(fn)) != 0;
}

TEST(QuietCalls, the_drivers_queries_are_quiet_and_its_flushing_calls_are_not) {
  const gvirtus_plugin_table_v1& table = plugin_table(GVIRTUS_CUDA_PLUGIN);
  using cuda::Fn;
  for (Fn query : {Fn::cuStreamQuery, Fn::cuEventQuery, Fn::cuEventElapsedTime_v2,
                   Fn::cuDeviceGetAttribute, Fn::cuMemGetInfo_v2, Fn::cuGraphNodeGetType}) {
    EXPECT_TRUE(quiet(table, query)) << cuda::name_of(query);
  }
  for (Fn flushing : {Fn::cuCtxSynchronize, Fn::cuStreamSynchronize, Fn::cuEventSynchronize,
                      Fn::cuMemcpyDtoH_v2, Fn::cuLaunchKernel, Fn::cuModuleLoadData,
                      Fn::cuModuleUnload, Fn::cuDevicePrimaryCtxReset_v2, Fn::cuMemAlloc_v2}) {
    EXPECT_FALSE(quiet(table, flushing)) << cuda::name_of(flushing);
  }
}

TEST(QuietCalls, the_runtimes_queries_are_quiet_and_its_flushing_calls_are_not) {
  const gvirtus_plugin_table_v1& table = plugin_table(GVIRTUS_CUDART_PLUGIN);
  using cudart::Fn;
  for (Fn query : {Fn::cudaStreamQuery, Fn::cudaEventQuery, Fn::cudaGetLastError,
                   Fn::cudaPointerGetAttributes, Fn::cudaMemGetInfo}) {
    EXPECT_TRUE(quiet(table, query)) << cudart::name_of(query);
  }
  for (Fn flushing :
       {Fn::cudaDeviceSynchronize, Fn::cudaStreamSynchronize, Fn::cudaEventSynchronize,
        Fn::cudaMemcpy, Fn::cudaLaunch, Fn::cudaDeviceReset, Fn::cudaFuncGetAttributes}) {
    EXPECT_FALSE(quiet(table, flushing)) << cudart::name_of(flushing);
  }
}

}  // namespace
}  // namespace gvirtus::testing
