// Registration of the program's device code, called by the exported __cudaRegister* entry points
// (registration.cpp) and kept by the registry (registry.cpp). Only records: nothing here talks to
// the backend, since nvcc's start-up code calls these before main.
#pragma once

#include <cstddef>

namespace gvirtus::cudart {

struct Module;

Module* register_module(const void* fatbin_wrapper);
void register_kernel(Module* module, const void* host_function, const char* device_name);
void register_variable(Module* module, const void* host_variable, const char* device_name,
                       size_t size);
// A managed variable: its host code reads the variable's address from `slot`.
void register_managed_variable(Module* module, void** slot, const char* device_name, size_t size);
// Forgets the module and its kernels and variables (the program unloads its device code).
void unregister_module(Module* module);

}  // namespace gvirtus::cudart
