// The client libcuda.so.1 (src/plugins/cuda, issue 19) as far as it is built: it exports every
// name of the CUDA driver (the toolkit's stubs/libcuda.so lists them), its coverage list is the
// committed one, and a backend machine without NVIDIA's libcuda.so.1 refuses the cuda plugin,
// naming the library, while the session goes on.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cctype>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cuda_calls.h"
#include "frontend/client.h"
#include "support/backend_process.h"
#include "support/core_calls.h"
#include "support/run_command.h"

namespace gvirtus::testing {
namespace {

std::string read(const char* path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), {}};
}

// The exports the coverage list names, from its table rows: | `name` | status |.
std::vector<std::string> listed_exports(const std::string& coverage) {
  std::vector<std::string> names;
  const std::regex row("^\\| `([A-Za-z_0-9]+)` \\|", std::regex::multiline);
  for (auto it = std::sregex_iterator(coverage.begin(), coverage.end(), row);
       it != std::sregex_iterator(); ++it) {
    names.push_back((*it)[1]);
  }
  return names;
}

TEST(DriverStub, exports_every_name_of_the_cuda_driver) {
  const std::string coverage = read(GVIRTUS_CUDA_COVERAGE_GENERATED);
  ASSERT_FALSE(coverage.empty()) << GVIRTUS_CUDA_COVERAGE_GENERATED;
  const std::vector<std::string> names = listed_exports(coverage);
  // The CUDA 13.0 toolkit's stubs/libcuda.so has 637; the list is read from the toolkit's at
  // build time, and a later toolkit's has more (679 on a GPU machine's, 2026-11-27).
  EXPECT_GE(names.size(), 637u);
  EXPECT_NE(coverage.find(std::to_string(names.size()) + " exports:"), std::string::npos);
  void* stub = ::dlopen(GVIRTUS_CUDA_STUB, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(stub, nullptr) << ::dlerror();
  for (const std::string& name : names) {
    EXPECT_NE(::dlsym(stub, name.c_str()), nullptr) << name;
  }
  for (const char* name : {"cuInit", "cuGetProcAddress_v2", "cuGetExportTable", "cuMemAlloc_v2",
                           "cuLaunchKernel", "cuLaunchKernel_ptsz"}) {
    EXPECT_NE(::dlsym(stub, name), nullptr) << name;
  }
  // The stub stays loaded: its state outlives every call (exit handlers use it).
}

// The export count a coverage doc states ("637 exports: ..."), or -1.
long exports_stated(const std::string& doc) {
  const size_t at = doc.find(" exports: ");
  if (at == std::string::npos) return -1;
  size_t begin = at;
  while (begin > 0 && std::isdigit(static_cast<unsigned char>(doc[begin - 1]))) --begin;
  return begin < at ? std::stol(doc.substr(begin, at - begin)) : -1;
}

TEST(DriverStub, committed_coverage_doc_is_current) {
  const std::string generated = read(GVIRTUS_CUDA_COVERAGE_GENERATED);
  ASSERT_FALSE(generated.empty());
  // The doc lists the exports of the toolkit's stubs/libcuda.so it was made with; another
  // toolkit's (a GPU machine's) lists others, and the doc is not this machine's to judge.
  const std::string committed = read(GVIRTUS_CUDA_COVERAGE_COMMITTED);
  if (exports_stated(committed) != exports_stated(generated)) {
    GTEST_SKIP() << GVIRTUS_CUDA_COVERAGE_COMMITTED << " was made from a toolkit whose driver "
                 << "stub exports " << exports_stated(committed) << " names; this one's exports "
                 << exports_stated(generated);
  }
  EXPECT_TRUE(read(GVIRTUS_CUDA_COVERAGE_COMMITTED) == generated)
      << GVIRTUS_CUDA_COVERAGE_COMMITTED << " is out of date; refresh it with\n"
      << "  cmake --build <build dir> --target gvirtus-cuda-coverage-update\nand commit it.";
}

// Error names and texts come from the stub itself, with no backend: cuda.h's names, the
// runtime's texts for the same codes, and the driver's answer to a code it does not know.
TEST(DriverStub, error_names_and_strings_are_answered_locally) {
  void* stub = ::dlopen(GVIRTUS_CUDA_STUB, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(stub, nullptr) << ::dlerror();
  using Lookup = CUresult (*)(CUresult, const char**);
  const auto name = reinterpret_cast<Lookup>(::dlsym(stub, "cuGetErrorName"));
  const auto text = reinterpret_cast<Lookup>(::dlsym(stub, "cuGetErrorString"));
  ASSERT_NE(name, nullptr);
  ASSERT_NE(text, nullptr);
  const char* out = nullptr;
  EXPECT_EQ(name(CUDA_ERROR_INVALID_VALUE, &out), CUDA_SUCCESS);
  EXPECT_STREQ(out, "CUDA_ERROR_INVALID_VALUE");
  EXPECT_EQ(text(CUDA_ERROR_INVALID_VALUE, &out), CUDA_SUCCESS);
  EXPECT_STREQ(out, "invalid argument");
  EXPECT_EQ(name(CUDA_ERROR_CONTEXT_ALREADY_CURRENT, &out), CUDA_SUCCESS)
      << "a code the runtime has no twin for";
  EXPECT_STREQ(out, "CUDA_ERROR_CONTEXT_ALREADY_CURRENT");
  EXPECT_EQ(text(CUDA_ERROR_CONTEXT_ALREADY_CURRENT, &out), CUDA_SUCCESS);
  EXPECT_NE(std::string(out).find("already the active context"), std::string::npos) << out;
  EXPECT_EQ(name(static_cast<CUresult>(123456), &out), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(out, nullptr);
  EXPECT_EQ(text(CUDA_SUCCESS, nullptr), CUDA_ERROR_INVALID_VALUE);
  // The stub stays loaded: its state outlives every call (exit handlers use it).
}

// cuMemcpy with unified addresses takes an address the stub does not know for the client's
// memory; one that is not mapped here (a device address from a path the stub never saw) is
// refused, never read or written. No backend is involved: the stub answers before any call.
TEST(DriverStub, unified_copies_refuse_unknown_addresses_not_mapped_here) {
  void* stub = ::dlopen(GVIRTUS_CUDA_STUB, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(stub, nullptr) << ::dlerror();
  using Memcpy = CUresult (*)(CUdeviceptr, CUdeviceptr, size_t);
  const auto memcpy_unified = reinterpret_cast<Memcpy>(::dlsym(stub, "cuMemcpy"));
  ASSERT_NE(memcpy_unified, nullptr);
  void* page = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(page, MAP_FAILED);
  ASSERT_EQ(::munmap(page, 4096), 0);  // an address certainly not mapped
  const auto gone = static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(page));
  char here[64] = {1, 2, 3};
  char there[64] = {};
  const auto mine = [](void* p) {
    return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(p));
  };
  EXPECT_EQ(memcpy_unified(mine(there), gone, sizeof there), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(memcpy_unified(gone, mine(here), sizeof here), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(memcpy_unified(mine(there), mine(here), sizeof here), CUDA_SUCCESS)
      << "host to host, in the caller";
  EXPECT_EQ(there[2], 3);
  EXPECT_EQ(memcpy_unified(mine(there), gone, 0), CUDA_SUCCESS) << "nothing to copy";
}

TEST(DriverPlugin, a_backend_without_the_driver_refuses_the_plugin_naming_libcuda) {
  if (void* driver = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
    ::dlclose(driver);
    GTEST_SKIP() << "this machine has NVIDIA's libcuda.so.1: the plugin opens here";
  }
  BackendProcess backend("", R"(["cuda"])");
  const std::string message = hello_refusal(backend, cuda::kIdentity);
  EXPECT_NE(message.find("plugin \"cuda\" cannot open a session"), std::string::npos) << message;
  EXPECT_NE(message.find("libcuda.so.1"), std::string::npos) << message;
  // The backend goes on serving other sessions.
  Client other(backend.client_config(), {});
  EXPECT_TRUE(ping(other));
}

// A program built as nvcc builds by default (NVIDIA's runtime linked in, loading only
// libcuda.so.1) runs on gvirtus's libcuda.so.1 against a backend whose machine has no driver, and
// reports the same CUDA error, with the same exit status, as natively without a driver.
TEST(DriverMode, a_static_runtime_program_without_a_driver_fails_as_natively) {
  if (void* driver = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
    ::dlclose(driver);
    GTEST_SKIP() << "this machine has NVIDIA's libcuda.so.1: the comparison needs a machine "
                    "without a driver (on a GPU the driver path is not complete yet, issue 19)";
  }
  BackendProcess backend("", R"(["cuda"])");
  const RunResult native =
      run(std::string("env -u LD_LIBRARY_PATH ") + GVIRTUS_SAXPY_STATIC + " 1024 2>/dev/null");
  // (A sanitizer build's stub needs the ASan runtime preloaded in the uninstrumented program.)
  const RunResult remoted =
      run("env " GVIRTUS_STUB_PROGRAM_ENV " GVIRTUS_CONFIG=" + backend.client_config_file() +
          " LD_LIBRARY_PATH=" + GVIRTUS_DRIVER_STUB_DIR + " " + GVIRTUS_SAXPY_STATIC +
          " 1024 2>/dev/null");
  EXPECT_NE(native.output.find("cudaErrorInsufficientDriver"), std::string::npos) << native.output;
  EXPECT_EQ(remoted.output, native.output) << backend.log();
  EXPECT_EQ(remoted.status, native.status);
  // It went through gvirtus: the backend was asked for the cuda plugin.
  EXPECT_TRUE(backend.logged("plugin \"cuda\" cannot open a session")) << backend.log();
}

}  // namespace
}  // namespace gvirtus::testing
