// cuGetProcAddress of the client libcuda.so.1 (frontend/proc_address.h): every request NVIDIA's
// runtimes 13.0 and 12.9 make at start-up (data/) resolves to an export of the stub as the driver
// resolves it, through the exported cuGetProcAddress_v2; and the driver's rules hold on chosen
// cases (where a real driver's answers differ from cuda.h's wording, the driver's).
#include <cuda.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "plugins/cuda/frontend/proc_address.h"

namespace gvirtus::cuda {
namespace {

struct Request {
  std::string name;
  int version;
  uint64_t flags;
};

std::vector<Request> captured(const std::string& file) {
  std::ifstream in(std::string(GVIRTUS_DRIVER_CAPTURES) + "/" + file);
  std::vector<Request> requests;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("proc ", 0) != 0) continue;
    // "proc NAME VERSION FLAGS"; the runtime's first request names no function ("proc  0 0").
    const std::string rest = line.substr(5);
    const size_t space = rest.find(' ');
    Request r;
    r.name = rest.substr(0, space);
    std::istringstream numbers(rest.substr(space + 1));
    numbers >> r.version >> r.flags;
    requests.push_back(r);
  }
  return requests;
}

using GetProcAddress = CUresult (*)(const char*, void**, int, cuuint64_t,
                                    CUdriverProcAddressQueryResult*);

// Every request of one capture, through the stub's export: the names a request does not resolve.
std::set<std::string> resolve_all(const std::vector<Request>& requests) {
  std::set<std::string> unresolved;
  void* stub = ::dlopen(GVIRTUS_CUDA_STUB, RTLD_NOW | RTLD_LOCAL);
  EXPECT_NE(stub, nullptr) << ::dlerror();
  if (stub == nullptr) return unresolved;
  auto get = reinterpret_cast<GetProcAddress>(::dlsym(stub, "cuGetProcAddress_v2"));
  EXPECT_NE(get, nullptr);
  for (const Request& r : requests) {
    if (get == nullptr) break;
    void* pfn = reinterpret_cast<void*>(1);
    auto status = static_cast<CUdriverProcAddressQueryResult>(-1);
    const CUresult result = get(r.name.c_str(), &pfn, r.version, r.flags, &status);
    const ProcAddress expected = resolve_proc_address(r.name, r.version, r.flags);
    EXPECT_EQ(status, expected.status) << r.name;
    if (status == CU_GET_PROC_ADDRESS_SUCCESS) {
      EXPECT_EQ(result, CUDA_SUCCESS) << r.name;
      EXPECT_EQ(pfn, ::dlsym(stub, expected.symbol)) << r.name << " -> " << expected.symbol;
    } else {
      EXPECT_EQ(result, CUDA_SUCCESS) << r.name;
      EXPECT_EQ(pfn, nullptr) << r.name;
      unresolved.insert(r.name);
    }
  }
  // The stub stays loaded: its state outlives every call (exit handlers use it).
  return unresolved;
}

// Only the empty name and graphics interop (EGL, GL, VDPAU), which the toolkit's stub, the
// export list, lacks.
void expect_only_interop_unresolved(const std::set<std::string>& unresolved) {
  auto interop = [](const std::string& name) {
    for (const char* prefix : {"cuEGL", "cuGL", "cuVDPAU", "cuGraphicsEGL", "cuGraphicsGL",
                               "cuGraphicsVDPAU", "cuGraphicsResourceGetMappedEgl"}) {
      if (name.rfind(prefix, 0) == 0) return true;
    }
    return false;
  };
  for (const std::string& name : unresolved) {
    EXPECT_TRUE(name.empty() || interop(name)) << name << " does not resolve";
  }
  EXPECT_EQ(unresolved.count(""), 1u);
}

TEST(ProcAddress, every_request_of_runtime_13_0s_start_resolves_through_the_stubs_export) {
  const std::vector<Request> requests = captured("runtime13_saxpy_start.txt");
  ASSERT_EQ(requests.size(), 440u);
  expect_only_interop_unresolved(resolve_all(requests));
}

TEST(ProcAddress, every_request_of_runtime_12_9s_start_resolves_through_the_stubs_export) {
  const std::vector<Request> requests = captured("runtime12_start.txt");
  ASSERT_EQ(requests.size(), 419u);
  expect_only_interop_unresolved(resolve_all(requests));
}

TEST(ProcAddress, versions_pick_the_abi_the_caller_was_built_for) {
  EXPECT_STREQ(resolve_proc_address("cuMemAlloc", 13000, 0).symbol, "cuMemAlloc_v2");
  EXPECT_STREQ(resolve_proc_address("cuMemAlloc", 3020, 0).symbol, "cuMemAlloc_v2");
  EXPECT_STREQ(resolve_proc_address("cuMemAlloc", 3010, 0).symbol, "cuMemAlloc");
  EXPECT_STREQ(resolve_proc_address("cuCtxCreate", 12000, 0).symbol, "cuCtxCreate_v3");
  EXPECT_STREQ(resolve_proc_address("cuCtxCreate", 12050, 0).symbol, "cuCtxCreate_v4");
  EXPECT_STREQ(resolve_proc_address("cuGetProcAddress", 12000, 0).symbol, "cuGetProcAddress_v2");
  EXPECT_STREQ(resolve_proc_address("cuGetProcAddress", 11030, 0).symbol, "cuGetProcAddress");
}

TEST(ProcAddress, per_thread_default_stream_variants_where_they_exist) {
  constexpr uint64_t kPerThread = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
  EXPECT_STREQ(resolve_proc_address("cuMemcpyHtoD", 13000, kPerThread).symbol,
               "cuMemcpyHtoD_v2_ptds");
  EXPECT_STREQ(resolve_proc_address("cuMemcpyHtoD", 13000, 0).symbol, "cuMemcpyHtoD_v2");
  EXPECT_STREQ(
      resolve_proc_address("cuMemcpyHtoD", 13000, CU_GET_PROC_ADDRESS_LEGACY_STREAM).symbol,
      "cuMemcpyHtoD_v2");
  EXPECT_STREQ(resolve_proc_address("cuStreamBeginCapture", 13000, kPerThread).symbol,
               "cuStreamBeginCapture_v2_ptsz");
  EXPECT_STREQ(resolve_proc_address("cuStreamBeginCapture", 10000, kPerThread).symbol,
               "cuStreamBeginCapture_ptsz");
  EXPECT_STREQ(resolve_proc_address("cuLaunchKernel", 13000, kPerThread).symbol,
               "cuLaunchKernel_ptsz");
  // Before the first per-thread variant, not an older legacy ABI but "version not sufficient", as
  // a real driver answers (cuda.h's wording suggests the legacy one).
  EXPECT_EQ(resolve_proc_address("cuLaunchKernel", 6050, kPerThread).status,
            CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
  EXPECT_EQ(resolve_proc_address("cuMemcpyHtoD", 3020, kPerThread).status,
            CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
  EXPECT_STREQ(resolve_proc_address("cuLaunchKernel", 6050, 0).symbol, "cuLaunchKernel");
  // A function with no stream has no per-thread variant: the legacy one.
  EXPECT_STREQ(resolve_proc_address("cuInit", 13000, kPerThread).symbol, "cuInit");
}

TEST(ProcAddress, unknown_names_and_too_old_versions_are_said_so) {
  EXPECT_EQ(resolve_proc_address("", 13000, 0).status, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
  EXPECT_EQ(resolve_proc_address("cuNoSuchFunction", 13000, 0).status,
            CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
  EXPECT_EQ(resolve_proc_address("cuMemAlloc_v2", 13000, 0).status,
            CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND)
      << "a request names the base, not a versioned export";
  EXPECT_EQ(resolve_proc_address("cuLaunchKernelEx", 11050, 0).status,
            CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
  EXPECT_EQ(resolve_proc_address("cuLaunchKernelEx", 11050, 0).symbol, nullptr);
}

TEST(ProcAddress, the_export_refuses_bad_arguments_and_versions_newer_than_itself) {
  void* stub = ::dlopen(GVIRTUS_CUDA_STUB, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(stub, nullptr) << ::dlerror();
  auto get = reinterpret_cast<GetProcAddress>(::dlsym(stub, "cuGetProcAddress_v2"));
  ASSERT_NE(get, nullptr);
  void* pfn = nullptr;
  EXPECT_EQ(get(nullptr, &pfn, 13000, 0, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(get("cuInit", nullptr, 13000, 0, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(get("cuInit", &pfn, CUDA_VERSION + 10, 0, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(get("cuInit", &pfn, 13000, 4, nullptr), CUDA_ERROR_INVALID_VALUE) << "unknown flags";
  // Not found: CUDA_SUCCESS, a null pointer and the status, as cuda.h says and a GPU's driver
  // answers (NVIDIA's runtime turns anything else into cudaErrorSymbolNotFound).
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SUCCESS;
  pfn = reinterpret_cast<void*>(1);
  EXPECT_EQ(get("cuNoSuchFunction", &pfn, 13000, 0, &status), CUDA_SUCCESS);
  EXPECT_EQ(pfn, nullptr);
  EXPECT_EQ(status, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
  EXPECT_EQ(get("cuLaunchKernelEx", &pfn, 11050, 0, &status), CUDA_SUCCESS);
  EXPECT_EQ(status, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
  // The old entry point (no status) resolves the same way.
  using OldGet = CUresult (*)(const char*, void**, int, cuuint64_t);
  auto old_get = reinterpret_cast<OldGet>(::dlsym(stub, "cuGetProcAddress"));
  ASSERT_NE(old_get, nullptr);
  EXPECT_EQ(old_get("cuMemAlloc", &pfn, 13000, 0), CUDA_SUCCESS);
  EXPECT_EQ(pfn, ::dlsym(stub, "cuMemAlloc_v2"));
  // The stub stays loaded: its state outlives every call (exit handlers use it).
}

}  // namespace
}  // namespace gvirtus::cuda
