#include "fatbin/fake_cudart.h"

#include <cstddef>

namespace {
// Written by the registration calls during static initialisation; a function-local static so
// that it exists before kernels_registered.o's constructor runs, whatever the link order.
std::vector<std::string>& kernels() {
  static std::vector<std::string> names;
  return names;
}
const void* g_wrapper = nullptr;  // constant-initialised
void* g_handle = nullptr;
}  // namespace

namespace gvirtus::fatbin::test {
const void* registered_wrapper() {
  return g_wrapper;
}
const std::vector<std::string>& registered_kernels() {
  return kernels();
}
}  // namespace gvirtus::fatbin::test

// The signatures follow crt/host_runtime.h; the ones the test never calls only need to link.
extern "C" {
void** __cudaRegisterFatBinary(void* wrapper) {
  g_wrapper = wrapper;
  return &g_handle;
}
void __cudaRegisterFatBinaryEnd(void**) {}
void __cudaUnregisterFatBinary(void**) {}
void __cudaRegisterFunction(void**, const char*, char*, const char* device_name, int, void*, void*,
                            void*, void*, int*) {
  kernels().emplace_back(device_name);
}
char __cudaInitModule(void**) {
  return 0;
}
int __cudaGetKernel(void**, const void*) {
  return 1;
}
int __cudaLaunchKernel(...) {
  return 1;
}
int __cudaPopCallConfiguration(void*, void*, size_t*, void*) {
  return 1;
}
}
