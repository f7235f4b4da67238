// The stub's record of the program's device code: the modules, kernels and variables that
// nvcc's start-up code registers (__cudaRegisterFatBinary, __cudaRegisterFunction,
// __cudaRegisterVar), and what the current backend session knows of them.
//
// Registration only records (it runs before main and must not touch the network). The first use
// of a kernel or variable prepares it: ships its module's fatbinary to the backend once per
// session, reads the kernel's parameter layout from the fatbinary, and has the backend resolve
// the name. Records live as long as their module (until __cudaUnregisterFatBinary); a Kernel's
// address is also the cudaKernel_t the stub hands out, and its id on the wire.
#pragma once

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "plugins/cudart/fatbin/fatbin.h"

namespace gvirtus::cudart {

struct Module;

struct Kernel {
  Module* module;
  const void* host_function;  // the program's host stub, what <<<>>> and cudaLaunchKernel name
  std::string name;           // the device (mangled) name
  const fatbin::KernelLayout* layout = nullptr;  // set by prepare()
  // The largest dynamic shared memory a launch may use without an error: 48 KiB unless the
  // program raised it with cudaFuncSetAttribute(cudaFuncAttributeMaxDynamicSharedMemorySize).
  std::atomic<int> max_dynamic_shared{48 << 10};
  std::atomic<const void*> resolved_in{nullptr};  // the session that resolved it
  uint64_t id() const { return reinterpret_cast<uintptr_t>(this); }
};

struct Variable {
  Module* module;
  std::string name;
  size_t size;           // as registered by the program
  uint64_t address = 0;  // on the backend, set by prepare()
  uint64_t bytes = 0;    // as the backend's runtime reports it
  // A managed variable (__managed__, or a library's asked with cudaLibraryGetManaged): resolved
  // as one, and mirrored in this process (managed_variables.h). A registered one's host code
  // reads its address from `slot`, which __cudaInitModule fills.
  bool managed = false;
  void** slot = nullptr;
  std::atomic<const void*> resolved_in{nullptr};  // the session that resolved it
};

// The kernel for a host function or a handle from cudaGetKernel; null if neither.
Kernel* find_kernel(const void* function);
// The variable registered for a host shadow variable; null if none.
Variable* find_variable(const void* host_variable);

// The kernel's function in the backend's current context (cudaGetFuncBySymbol): the driver's
// CUfunction, which names the kernel in the stub's calls from then on (find_kernel), as the
// runtime's cudaFunction_t does.
cudaError_t function_of(Kernel& kernel, cudaFunction_t& out);

// Makes a kernel or variable usable in the current session (see above). Returns the error that
// prevents it: the backend's (a module that does not load, a name it does not find, an
// uninitialisable runtime) or cudaErrorInvalidKernelImage for a fatbinary the stub cannot read.
cudaError_t prepare(Kernel& kernel);
cudaError_t prepare(Variable& variable);

// Modules the program loads itself (cudaLibraryLoadData and the rest: libraries.cpp). A library
// is loaded into the session at once (its errors are the load's); its cudaLibrary_t is the
// Module's address. Its kernels are records like a registered module's, with no host function:
// their handles (cudaKernel_t) launch as cudaGetKernel's do. An unloaded library keeps its
// records, so that no later module or kernel takes its ids.
// `jit`: the load's JIT options (cudaLibraryLoadData's), their outputs written back; they apply to
// this first load (a later session's load of the library compiles with the defaults).
struct JitRequest {
  const cudaJitOption* options = nullptr;
  void** values = nullptr;
  unsigned count = 0;
};
Module* load_library(std::vector<std::byte> image, cudaError_t& result, const JitRequest& jit = {});
// The library `handle` names, if it is one loaded and not unloaded; else null.
Module* find_library(const void* handle);
// The names of the library's kernels (as their layouts were read from its image).
cudaError_t library_kernel_names(Module& module, std::vector<std::string>& names);
// The library's kernel of that (mangled) name: cudaErrorSymbolNotFound when it has none.
cudaError_t library_kernel(Module& module, const char* name, Kernel*& out);
// The library's global variable of that name (`managed`: its managed variable), resolved in the
// session.
cudaError_t library_variable(Module& module, const char* name, Variable*& out,
                             bool managed = false);
// The module's managed variables that nvcc's start-up code registered (__cudaRegisterManagedVar).
std::vector<Variable*> registered_managed_variables(Module& module);
cudaError_t unload_library(Module& module);

}  // namespace gvirtus::cudart
