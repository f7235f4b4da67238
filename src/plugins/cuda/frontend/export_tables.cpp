// The private export tables (export_tables.h).
#include "plugins/cuda/frontend/export_tables.h"

#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"
#include "common/log.h"
#include "cuda_remote_calls.h"
#include "fatbin.h"
#include "plugins/cuda/common/driver_wire.h"
#include "plugins/cuda/frontend/context_answers.h"
#include "plugins/cuda/frontend/contexts.h"
#include "plugins/cuda/frontend/integrity_check.h"
#include "plugins/cuda/frontend/modules.h"

namespace gvirtus::cuda {
namespace {

using Slot = const void*;

std::string uuid_text(const CUuuid& id) {
  char text[37];
  const auto* b = reinterpret_cast<const unsigned char*>(id.bytes);
  std::snprintf(text, sizeof text,
                "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
                b[15]);
  return text;
}

// A slot whose meaning is unknown: says once which one was called, with the first arguments it
// got (as integers: what they are is unknown too), and the library that called it.
template <int kTable, int kSlot>
CUresult unknown_slot(uintptr_t a, uintptr_t b, uintptr_t c) {
  static std::atomic<bool> logged{false};
  if (!logged.exchange(true)) {
    Dl_info info{};
    const void* caller = __builtin_return_address(0);
    GVIRTUS_LOG(kWarning) << "libcuda.so.1: slot " << kSlot << " of private export table " << kTable
                          << " was called by "
                          << (::dladdr(caller, &info) != 0 && info.dli_fname != nullptr
                                  ? info.dli_fname
                                  : "an unknown library")
                          << " (arguments 0x" << std::hex << a << ", 0x" << b << ", 0x" << c
                          << std::dec << "), which the gvirtus stub does not implement";
  }
  return CUDA_ERROR_NOT_SUPPORTED;
}

template <int kTable, size_t kSize, size_t... kSlots>
constexpr std::array<Slot, kSize> unknown_slots(std::index_sequence<kSlots...>) {
  return {reinterpret_cast<Slot>(&unknown_slot<kTable, static_cast<int>(kSlots)>)...};
}

// A table of kSize slots, each unknown until set; `sized` puts the table's size in bytes in slot 0.
template <int kTable, size_t kSize>
std::array<Slot, kSize> table(bool sized) {
  auto slots = unknown_slots<kTable, kSize>(std::make_index_sequence<kSize>());
  if (sized) slots[0] = reinterpret_cast<Slot>(kSize * sizeof(Slot));
  return slots;
}

// CUDART_INTERFACE: modules from the runtime's fatbinaries, the primary context

// The fatbinary a __cudaRegisterFatBinary wrapper points to, loaded as a module.
CUresult module_from_wrapper(CUmodule* module, const void* wrapper) {
  if (module == nullptr || wrapper == nullptr) return CUDA_ERROR_INVALID_VALUE;
  try {
    return load_module(fatbin::fatbin_from_wrapper(wrapper), module);
  } catch (const Error& e) {
    GVIRTUS_LOG(kError) << "libcuda.so.1: the runtime's fatbinary cannot be read: " << e.what();
    return CUDA_ERROR_INVALID_IMAGE;
  } catch (...) {
    return CUDA_ERROR_INVALID_IMAGE;
  }
}

CUresult get_module_from_cubin(CUmodule* module, const void* wrapper) {
  return module_from_wrapper(module, wrapper);
}

// The extended forms take three more arguments, always null and zero from the runtimes seen;
// what they mean otherwise is unknown, so other values are refused rather than ignored.
CUresult get_module_from_cubin_ext1(CUmodule* module, const void* wrapper, void* a3, void* a4,
                                    unsigned a5) {
  if (a3 != nullptr || a4 != nullptr || a5 != 0) return CUDA_ERROR_NOT_SUPPORTED;
  return module_from_wrapper(module, wrapper);
}

// ext2 takes the fatbinary itself (its header first), not the wrapper.
CUresult get_module_from_cubin_ext2(const void* fatbin, CUmodule* module, void* a3, void* a4,
                                    unsigned a5) {
  if (a3 != nullptr || a4 != nullptr || a5 != 0) return CUDA_ERROR_NOT_SUPPORTED;
  if (module == nullptr || fatbin == nullptr) return CUDA_ERROR_INVALID_VALUE;
  struct {
    uint32_t magic, version;
    const void* data;
    const void* filename_or_fatbins;
  } wrapper{0x466243b1, 1, fatbin, nullptr};  // the wrapper __cudaRegisterFatBinary would get
  return module_from_wrapper(module, &wrapper);
}

// The device's primary context, without retaining it for the caller.
CUresult primary_context_of(CUcontext* context, CUdevice device) {
  return primary_context(device, context);
}

void cudart_interface_fn7(uintptr_t) {}  // observed to do nothing a caller can see

CUresult load_compilers() {
  return CUDA_SUCCESS;
}  // the driver loads its JIT compilers here

// TOOLS_RUNTIME_CALLBACK_HOOKS: two buffers the runtime writes into

uint32_t hooks_buffer1[1024];
uint32_t hooks_buffer2[14];

void hooks_get_buffer1(void** buffer, size_t* size) {
  *buffer = hooks_buffer1;
  *size = std::size(hooks_buffer1);
}

void hooks_get_buffer2(void** buffer, size_t* size) {
  *buffer = hooks_buffer2;
  *size = std::size(hooks_buffer2);
}

// CONTEXT_LOCAL_STORAGE_INTERFACE_V0301: key/value per context

using StorageDestructor = void (*)(CUcontext, void*, void*);

struct Stored {
  void* value;
  StorageDestructor destructor;
};

// Never destroyed: NVIDIA's runtime deletes its entries from its exit handlers, which may run
// after this library's static objects are gone.
std::mutex& storage_mutex = *new std::mutex;
std::map<std::pair<CUcontext, void*>, Stored>& storage =
    *new std::map<std::pair<CUcontext, void*>, Stored>;

CUcontext context_or_current(CUcontext context) {
  return context != nullptr ? context : current_context();
}

CUresult storage_put(CUcontext context, void* key, void* value, StorageDestructor destructor) {
  context = context_or_current(context);
  if (context == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  std::lock_guard lock(storage_mutex);
  storage[{context, key}] = {value, destructor};
  return CUDA_SUCCESS;
}

CUresult storage_delete(CUcontext context, void* key) {
  context = context_or_current(context);
  if (context == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  std::lock_guard lock(storage_mutex);
  storage.erase({context, key});
  return CUDA_SUCCESS;
}

CUresult storage_get(void** value, CUcontext context, void* key) {
  if (value == nullptr) return CUDA_ERROR_INVALID_VALUE;
  context = context_or_current(context);
  if (context == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  std::lock_guard lock(storage_mutex);
  const auto it = storage.find({context, key});
  if (it == storage.end()) return CUDA_ERROR_INVALID_HANDLE;
  *value = it->second.value;
  return CUDA_SUCCESS;
}

// CONTEXT_CHECKS

CUresult context_check(CUcontext, uint32_t* result1, const void**) {
  if (result1 != nullptr) *result1 = 0;
  return CUDA_SUCCESS;
}

uint32_t check_fn3() {
  return 0;
}

// INTEGRITY_CHECK: the runtime checks that it talks to a driver that knows the shared secret.

// The tables the check names by address (defined below).
extern const std::array<Slot, 13> cudart_interface;
extern const std::array<Slot, 3> integrity_table;

CUresult integrity_check(uint32_t version, uint64_t unix_seconds, uint64_t* result) {
  if (result == nullptr) return CUDA_ERROR_INVALID_VALUE;
  int driver_version = 0;
  int count = 0;
  if (CUresult r = cuDriverGetVersion(&driver_version); r != CUDA_SUCCESS) return r;
  if (CUresult r = cuDeviceGetCount(&count); r != CUDA_SUCCESS) return r;
  std::vector<DeviceIdentity> devices(static_cast<size_t>(count));
  for (int dev = 0; dev < count; ++dev) {
    DeviceIdentity& d = devices[static_cast<size_t>(dev)];
    CUuuid uuid;
    if (CUresult r = cuDeviceGetUuid_v2(&uuid, dev); r != CUDA_SUCCESS) return r;
    std::memcpy(d.uuid, uuid.bytes, sizeof d.uuid);
    for (auto [attribute, value] : {std::pair{CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, &d.pci_domain},
                                    std::pair{CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, &d.pci_bus},
                                    std::pair{CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, &d.pci_device}}) {
      if (CUresult r = cuDeviceGetAttribute(value, attribute, dev); r != CUDA_SUCCESS) return r;
    }
  }
  const IntegrityInputs inputs{version,
                               unix_seconds,
                               static_cast<uint32_t>(driver_version),
                               static_cast<uint32_t>(::getpid()),
                               static_cast<uint32_t>(::pthread_self()),
                               cudart_interface.data(),
                               integrity_table.data(),
                               reinterpret_cast<const void*>(&integrity_check)};
  integrity_answer(inputs, devices, result);
  return CUDA_SUCCESS;
}

// The tables, by UUID

struct Known {
  const char* uuid;
  const char* name;
  const Slot* slots;
};

const std::array<Slot, 13> cudart_interface = [] {
  auto t = table<1, 13>(true);
  t[1] = reinterpret_cast<Slot>(&get_module_from_cubin);
  t[2] = reinterpret_cast<Slot>(&primary_context_of);
  t[6] = reinterpret_cast<Slot>(&get_module_from_cubin_ext1);
  t[7] = reinterpret_cast<Slot>(&cudart_interface_fn7);
  t[8] = reinterpret_cast<Slot>(&get_module_from_cubin_ext2);
  t[12] = reinterpret_cast<Slot>(&load_compilers);
  return t;
}();

// TOOLS_TLS slot 2: the calling thread's current context, as cuCtxGetCurrent gives it (public
// profiling of the driver established the equivalence; cuBLASLt and cuSOLVER ask it before their
// launches).
CUresult thread_context(CUcontext* context) {
  return cuCtxGetCurrent(context);
}

const auto tools_tls = [] {
  auto t = table<2, 4>(true);
  t[2] = reinterpret_cast<Slot>(&thread_context);
  return t;
}();

const auto tools_runtime_callback_hooks = [] {
  auto t = table<3, 7>(true);
  t[2] = reinterpret_cast<Slot>(&hooks_get_buffer1);
  t[6] = reinterpret_cast<Slot>(&hooks_get_buffer2);
  return t;
}();

const auto context_local_storage = [] {
  auto t = table<4, 4>(false);  // no size slot: the functions start at 0
  t[0] = reinterpret_cast<Slot>(&storage_put);
  t[1] = reinterpret_cast<Slot>(&storage_delete);
  t[2] = reinterpret_cast<Slot>(&storage_get);
  return t;
}();

const auto context_checks = [] {
  auto t = table<5, 4>(true);
  t[2] = reinterpret_cast<Slot>(&context_check);
  t[3] = reinterpret_cast<Slot>(&check_fn3);
  return t;
}();

// TOOLS_CONTEXT slot 51 (cuBLAS 13.0 calls it before its first launch, with a null context and a
// null key): an object of the context's that the library keeps and passes back to slot 39. What
// the driver keeps in it is not public; a zeroed block per context is what the library reads
// successfully (the public SCUDA project's observation, confirmed here by cuBLAS's and cuSOLVER's
// runs). An all-ones key is refused, as the driver refuses it.
CUresult context_object(CUcontext context, uint64_t key, void** object) {
  if (object == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (key == UINT64_MAX) return CUDA_ERROR_INVALID_HANDLE;
  static std::mutex mutex;
  static auto& objects = *new std::map<CUcontext, std::array<uint64_t, 64>>;  // outlives exit
  std::lock_guard lock(mutex);
  *object = objects[context].data();  // a map's elements never move
  return CUDA_SUCCESS;
}

// TOOLS_CONTEXT slot 39: a value read from slot 51's object; 0 for the zeroed object.
CUresult context_object_value(CUcontext context, const void* object, uint64_t* value) {
  (void)context;
  if (object == nullptr || value == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *value = 0;
  return CUDA_SUCCESS;
}

// TOOLS_CONTEXT slot 4: a context's unique number (null: the current context's), as cuCtxGetId
// gives it (the same public profiling).
CUresult context_number(CUcontext context, unsigned long long* number) {
  if (number == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return cuCtxGetId(context, number);
}

const auto tools_context = [] {
  auto t = table<7, 95>(true);
  t[4] = reinterpret_cast<Slot>(&context_number);
  t[39] = reinterpret_cast<Slot>(&context_object_value);
  t[51] = reinterpret_cast<Slot>(&context_object);
  return t;
}();

// TOOLS_MODULE slot 7: calls `each(user, function)` for every function of `module` and returns
// how many there were (0 when the module cannot be enumerated). cuFFT finds the one kernel of
// each module it builds this way, and goes on only when the count is 1. The context is the
// module's (the backend's driver knows it): not needed here.
unsigned module_functions(CUcontext context, CUmodule module, void (*each)(void*, CUfunction),
                          void* user) {
  (void)context;
  if (each == nullptr) return 0;
  unsigned count = 0;
  if (cuModuleGetFunctionCount(&count, module) != CUDA_SUCCESS || count == 0 ||
      count > kMaxEnumerated) {
    return 0;
  }
  try {
    std::vector<CUfunction> functions(count);
    if (cuModuleEnumerateFunctions(functions.data(), count, module) != CUDA_SUCCESS) return 0;
    for (CUfunction function : functions) each(user, function);
  } catch (const std::bad_alloc&) {
    return 0;
  }
  return count;
}

const auto tools_module = [] {
  auto t = table<8, 64>(true);
  t[7] = reinterpret_cast<Slot>(&module_functions);
  return t;
}();

// cuBLASLt's table (1734dc26-..., CUDA 13's libcublasLt.so.13, asked for at its first heuristic
// query): what it holds is not known. cuBLASLt does not check that the table was found - it
// calls slot 4 through it (seen: a null table crashed PyTorch's first bf16 matmul) - and takes
// its other path when that slot fails, so every slot answers CUDA_ERROR_NOT_SUPPORTED, logged.
const auto cublaslt_table = table<9, 32>(true);

const std::array<Slot, 3> integrity_table = [] {
  auto t = table<6, 3>(true);
  t[1] = reinterpret_cast<Slot>(&integrity_check);
  return t;
}();

const Known kKnown[] = {
    {"d4082055-bde6-704b-8d34-ba123c66e1f2", "INTEGRITY_CHECK", integrity_table.data()},
    {"6bd5fb6c-5bf4-e74a-8987-d93912fd9df9", "CUDART_INTERFACE", cudart_interface.data()},
    {"42d85a81-23f6-cb47-8298-f6e78a3aecdc", "TOOLS_TLS", tools_tls.data()},
    {"a094798c-2e74-2e74-93f2-0800200c0a66", "TOOLS_RUNTIME_CALLBACK_HOOKS",
     tools_runtime_callback_hooks.data()},
    {"c693336e-1121-df11-a8c3-68f355d89593", "CONTEXT_LOCAL_STORAGE_INTERFACE_V0301",
     context_local_storage.data()},
    {"263e8860-7cd2-6143-92f6-bbd5006dfa7e", "CONTEXT_CHECKS", context_checks.data()},
    {"21318c60-9714-3248-8ca6-41ff7324c8f2", "TOOLS_CONTEXT", tools_context.data()},
    {"6e163fbe-b958-444d-835c-e182aff1991e", "TOOLS_MODULE", tools_module.data()},
    {"1734dc26-800d-4745-8726-c0f1e7dd8bca", "CUBLASLT (unknown slots)", cublaslt_table.data()},
};

// Logs an unknown table once per UUID, with the library that asked, at info level: the caller is
// told the table does not exist, as a driver older than it says, and copes (NVIDIA's runtime asks
// for several on every start); a program's output stays as it is natively. What does need
// attention, a slot of a known table called but not implemented, is a warning.
void log_unknown(const std::string& uuid, const void* caller) {
  static std::mutex mutex;
  static std::set<std::string> logged;
  {
    std::lock_guard lock(mutex);
    if (!logged.insert(uuid).second) return;
  }
  Dl_info info{};
  const char* who = ::dladdr(caller, &info) != 0 && info.dli_fname != nullptr
                        ? info.dli_fname
                        : "an unknown library";
  GVIRTUS_LOG(kInfo) << "libcuda.so.1: " << who << " asked for private export table " << uuid
                     << ", which the gvirtus stub does not implement";
}

}  // namespace

void destroy_context_storage(CUcontext context) {
  std::vector<std::pair<void*, Stored>> dropped;
  {
    std::lock_guard lock(storage_mutex);
    for (auto it = storage.begin(); it != storage.end();) {
      if (it->first.first == context) {
        dropped.emplace_back(it->first.second, it->second);
        it = storage.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (const auto& [key, stored] : dropped) {  // unlocked: a destructor may use the storage
    if (stored.destructor != nullptr) stored.destructor(context, key, stored.value);
  }
}

}  // namespace gvirtus::cuda

namespace cr = gvirtus::cuda;

extern "C" __attribute__((visibility("default"))) CUresult cuGetExportTable(
    const void** ppExportTable, const CUuuid* pExportTableId) {
  if (ppExportTable == nullptr || pExportTableId == nullptr) return CUDA_ERROR_INVALID_VALUE;
  try {
    const std::string uuid = cr::uuid_text(*pExportTableId);
    for (const cr::Known& known : cr::kKnown) {
      if (uuid == known.uuid) {
        GVIRTUS_LOG(kDebug) << "libcuda.so.1: export table " << known.name;
        *ppExportTable = known.slots;
        return CUDA_SUCCESS;
      }
    }
    cr::log_unknown(uuid, __builtin_return_address(0));
  } catch (...) {
    // Only the log line is lost.
  }
  *ppExportTable = nullptr;
  return CUDA_ERROR_NOT_FOUND;
}

extern "C" __attribute__((visibility("default"))) CUresult cuDevicePrimaryCtxReset_v2(
    CUdevice dev) {
  CUcontext primary = nullptr;
  if (cr::primary_context(dev, &primary) == CUDA_SUCCESS) cr::destroy_context_storage(primary);
  const CUresult result = cr::remote::cuDevicePrimaryCtxReset_v2(dev);
  if (result == CUDA_SUCCESS) {
    cr::forget_launch_facts();
    cr::forget_context_answers();
  }
  return result;
}
