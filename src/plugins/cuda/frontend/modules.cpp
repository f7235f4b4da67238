// Modules loaded from memory (modules.h), and the exports that load them.
#include "plugins/cuda/frontend/modules.h"

#include <atomic>
#include <cstring>
#include <fstream>
#include <type_traits>
#include <vector>

#include "common/call_marshal.h"
#include "common/content_hash.h"
#include "common/error.h"
#include "common/function_ref.h"
#include "common/log.h"
#include "common/wire_record.h"
#include "cuda_remote_calls.h"
#include "fatbin.h"
#include "fatbin_container.h"
#include "plugins/cuda/common/driver_wire.h"
#include "plugins/cuda/common/jit_options.h"
#include "plugins/cuda/common/module_image.h"
#include "plugins/cuda/frontend/images_for_devices.h"
#include "plugins/cuda/frontend/lazy_libraries.h"
#include "plugins/cuda/frontend/pool_routes.h"

namespace gvirtus::cuda {

namespace {

// Set when a backend said it keeps no module cache: images travel whole from then on, without a
// round trip that would only be answered "send the bytes" again.
std::atomic<bool> backend_keeps_no_cache{false};

// A load whose request begins with the image (common/driver_wire.h). A fatbinary is first cut
// down to what the backend's devices run (images_for_devices.h); then the image is named by its
// content hash, so that a backend whose module cache holds it loads it from there, and goes whole
// only when the backend asks for it. `rest` writes what follows the image; `outputs` reads what
// follows the handle in a reply that loaded it (or failed to).
template <typename Handle>
CUresult send_load(Fn fn, std::span<const std::byte> image, Handle* handle,
                   FunctionRef<void(WireWriter&)> rest, FunctionRef<void(WireReader&)> outputs) {
  const std::vector<std::byte> trimmed = trimmed_for_devices(image, backend_device_archs());
  if (!trimmed.empty()) image = trimmed;
  bool by_hash = !backend_keeps_no_cache.load(std::memory_order_relaxed);
  const ContentHash hash = by_hash ? content_hash(image) : ContentHash{};
  for (;;) {
    uint8_t answer = kImageLoaded;
    Handle loaded = nullptr;
    const CUresult result = remote_sync(
        fn,
        [&](WireWriter& w) {
          w.put<uint8_t>(by_hash ? kImageByHash : kImageBytes);
          if (by_hash) {
            put_record(w, ImageByHash{hash, image.size()});
          } else {
            w.put_blob(image.data(), image.size());
          }
          rest(w);
        },
        [&](WireReader& r) {
          answer = r.get<uint8_t>();
          if (answer == kImageLoaded) {
            loaded = marshal::get_value<Handle>(r);
            outputs(r);
          } else if (!by_hash || (answer != kImageUnknown && answer != kImageNoCache)) {
            raise(ErrorKind::kInvalidInput, "a module load came back in the wrong shape");
          }
        });
    if (answer == kImageLoaded || result != CUDA_SUCCESS) {
      if (result == CUDA_SUCCESS) {
        *handle = loaded;  // untouched on failure, as natively
        pool_note_handle("module", loaded);
      }
      return result;
    }
    if (answer == kImageNoCache) backend_keeps_no_cache.store(true, std::memory_order_relaxed);
    by_hash = false;  // the backend lacks it: the bytes go
  }
}

}  // namespace

CUresult load_module(std::span<const std::byte> image, CUmodule* module) {
  if (module == nullptr || image.empty() || image.size() > kMaxModuleImageBytes) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  return send_load(
      Fn::cuModuleLoadData, image, module, [](WireWriter&) {}, [](WireReader&) {});
}

CUresult load_library(std::span<const std::byte> image, CUlibrary* library) {
  if (library == nullptr || image.empty() || image.size() > kMaxModuleImageBytes) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  return send_load(
      Fn::cuLibraryLoadData, image, library,
      [](WireWriter& w) {
        put_jit_options(w, nullptr, nullptr, 0);
        w.put<uint32_t>(0);  // no library options
      },
      [](WireReader& r) { get_jit_outputs(r, nullptr, nullptr, 0); });
}

namespace {

// The image's bytes by its own headers, or an empty span when it has none readable. The driver
// also takes the wrapper nvcc puts around a fatbinary (what __cudaRegisterFatBinary gets, and
// what NVIDIA's runtime hands cuLibraryLoadData): the fatbinary it points to is the image.
std::span<const std::byte> image_bytes(const void* image) {
  if (image == nullptr) return {};
  uint32_t magic;
  std::memcpy(&magic, image, sizeof magic);
  if (magic == fatbin::kWrapperMagic) {
    try {
      return fatbin::fatbin_from_wrapper(image);
    } catch (const Error& e) {
      GVIRTUS_LOG(kError) << "libcuda.so.1: a fatbinary wrapper cannot be read: " << e.what();
      return {};
    } catch (...) {
      return {};
    }
  }
  return {static_cast<const std::byte*>(image), module_image_size(image, kMaxModuleImageBytes)};
}

CUresult load_image(CUmodule* module, const void* image) {
  if (module == nullptr || image == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const auto bytes = image_bytes(image);
  if (bytes.empty()) return CUDA_ERROR_INVALID_IMAGE;
  return load_module(bytes, module);
}

// Code loaded with JIT options: cuModuleLoadDataEx (a module) and cuLibraryLoadData (a library,
// with library options too). `handle` receives the new handle.
template <typename Handle>
CUresult load_with_options(Fn fn, Handle* handle, const void* image, CUjit_option* options,
                           void** values, unsigned count, CUlibraryOption* library_options,
                           void** library_values, unsigned library_count) {
  if (handle == nullptr || image == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (const CUresult r = check_jit_options(options, values, count); r != CUDA_SUCCESS) return r;
  // Values may be null: CU_LIBRARY_BINARY_IS_PRESERVED takes none (cuBLAS passes it so).
  if (library_count != 0 && library_options == nullptr) return CUDA_ERROR_INVALID_VALUE;
  for (unsigned i = 0; i < library_count; ++i) {
    // The host table of unified functions lives in this process: it means nothing to the
    // backend. Whether the image is preserved is the stub's business: the bytes are sent.
    if (library_options[i] == CU_LIBRARY_HOST_UNIVERSAL_FUNCTION_AND_DATA_TABLE) {
      return CUDA_ERROR_NOT_SUPPORTED;
    }
    if (library_options[i] != CU_LIBRARY_BINARY_IS_PRESERVED) return CUDA_ERROR_INVALID_VALUE;
  }
  const auto bytes = image_bytes(image);
  if (bytes.empty()) return CUDA_ERROR_INVALID_IMAGE;
  if constexpr (std::is_same_v<Handle, CUlibrary>) {
    // Without JIT options nothing is owed before the library is used: it is loaded then
    // (lazy_libraries.h). A file's bytes are never preserved (cuLibraryLoadFromFile refuses it).
    if (count == 0) {
      bool preserved = false;
      for (unsigned i = 0; i < library_count; ++i) {
        preserved = preserved || library_options[i] == CU_LIBRARY_BINARY_IS_PRESERVED;
      }
      *handle = defer_library(bytes, preserved);
      return CUDA_SUCCESS;
    }
  }
  return send_load(
      fn, bytes, handle,
      [&](WireWriter& w) {
        put_jit_options(w, options, values, count);
        if (fn == Fn::cuLibraryLoadData) {
          w.put<uint32_t>(library_count);
          for (unsigned i = 0; i < library_count; ++i) {
            w.put<uint32_t>(static_cast<uint32_t>(library_options[i]));
            w.put<uint64_t>(
                library_values != nullptr ? reinterpret_cast<uintptr_t>(library_values[i]) : 0);
          }
        }
      },
      [&](WireReader& r) { get_jit_outputs(r, options, values, count); });
}

}  // namespace
}  // namespace gvirtus::cuda

extern "C" __attribute__((visibility("default"))) CUresult cuModuleLoadData(CUmodule* module,
                                                                            const void* image) {
  return gvirtus::cuda::load_image(module, image);
}

extern "C" __attribute__((visibility("default"))) CUresult cuModuleLoadFatBinary(
    CUmodule* module, const void* fatCubin) {
  return gvirtus::cuda::load_image(module, fatCubin);
}

// The runtime is told that modules load eagerly, so that it loads each of its fatbinaries up
// front, as a library: the stub then defers each library until it is first used
// (lazy_libraries.h), the way the driver's lazy loading would.
extern "C" __attribute__((visibility("default"))) CUresult cuModuleGetLoadingMode(
    CUmoduleLoadingMode* mode) {
  if (mode == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *mode = CU_MODULE_EAGER_LOADING;
  return CUDA_SUCCESS;
}

extern "C" __attribute__((visibility("default"))) CUresult cuModuleLoadDataEx(
    CUmodule* module, const void* image, unsigned int numOptions, CUjit_option* options,
    void** optionValues) {
  return gvirtus::cuda::load_with_options(gvirtus::cuda::Fn::cuModuleLoadDataEx, module, image,
                                          options, optionValues, numOptions, nullptr, nullptr, 0);
}

extern "C" __attribute__((visibility("default"))) CUresult cuLibraryLoadData(
    CUlibrary* library, const void* code, CUjit_option* jitOptions, void** jitOptionsValues,
    unsigned int numJitOptions, CUlibraryOption* libraryOptions, void** libraryOptionValues,
    unsigned int numLibraryOptions) {
  return gvirtus::cuda::load_with_options(gvirtus::cuda::Fn::cuLibraryLoadData, library, code,
                                          jitOptions, jitOptionsValues, numJitOptions,
                                          libraryOptions, libraryOptionValues, numLibraryOptions);
}

namespace gvirtus::cuda {

// A module file's bytes, NUL-terminated (a PTX file's text has no NUL of its own; a fatbinary's or
// cubin's size comes from its headers), or the driver's error for a file it cannot load.
CUresult read_module_file(const char* path, std::vector<char>& bytes) {
  if (path == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::ifstream in(path, std::ios::binary);
  if (!in) return CUDA_ERROR_FILE_NOT_FOUND;
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size < 0) return CUDA_ERROR_FILE_NOT_FOUND;
  if (static_cast<uint64_t>(size) >= kMaxModuleImageBytes) return CUDA_ERROR_INVALID_IMAGE;
  bytes.assign(static_cast<size_t>(size) + 1, '\0');
  in.seekg(0);
  if (!in.read(bytes.data(), size)) return CUDA_ERROR_FILE_NOT_FOUND;
  return CUDA_SUCCESS;
}

}  // namespace gvirtus::cuda

// A module from a file on the client's machine: read here, sent as cuModuleLoadData sends an
// image (the backend's machine has no such file).
extern "C" __attribute__((visibility("default"))) CUresult cuModuleLoad(CUmodule* module,
                                                                        const char* fname) {
  if (module == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::vector<char> bytes;
  if (const CUresult r = gvirtus::cuda::read_module_file(fname, bytes); r != CUDA_SUCCESS) {
    return r;
  }
  return gvirtus::cuda::load_image(module, bytes.data());
}

extern "C" __attribute__((visibility("default"))) CUresult cuLibraryLoadFromFile(
    CUlibrary* library, const char* fileName, CUjit_option* jitOptions, void** jitOptionsValues,
    unsigned int numJitOptions, CUlibraryOption* libraryOptions, void** libraryOptionValues,
    unsigned int numLibraryOptions) {
  if (library == nullptr) return CUDA_ERROR_INVALID_VALUE;
  for (unsigned i = 0; i < numLibraryOptions; ++i) {
    // cuda.h: preserving the binary makes no sense for a file the driver reads itself.
    if (libraryOptions == nullptr || libraryOptions[i] == CU_LIBRARY_BINARY_IS_PRESERVED) {
      return CUDA_ERROR_INVALID_VALUE;
    }
  }
  std::vector<char> bytes;
  if (const CUresult r = gvirtus::cuda::read_module_file(fileName, bytes); r != CUDA_SUCCESS) {
    return r;
  }
  return gvirtus::cuda::load_with_options(gvirtus::cuda::Fn::cuLibraryLoadData, library,
                                          bytes.data(), jitOptions, jitOptionsValues, numJitOptions,
                                          libraryOptions, libraryOptionValues, numLibraryOptions);
}
