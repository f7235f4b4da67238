// The driver's error log in the client libcuda.so.1 (rows 297-301; the backend's half:
// backend/logs.h). A registered callback runs on the session's callback thread, as a host
// function does (host_functions.h): the backend's driver logs on the backend, which relays each
// message; the callback thread fetches it by its sequence and runs the application's callback
// with its level and text, after the call that logged it returned (the driver runs it during that
// call). A message fetched too late (the backend keeps the last 256) is not delivered. A dump to
// a file is a dump to memory that the stub writes at the caller's path.
#include <cuda.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>

#include "common/log_dump_wire.h"
#include "cuda_remote_calls.h"
#include "frontend/frontend_abi.h"
#include "plugins/cuda/frontend/host_functions.h"

namespace gvirtus::cuda {
namespace {

// The callback thread's side: the message `sequence` names, handed to the application.
void run_log_callback(const gvirtus_host_callback* callback, int32_t sequence) {
  bool found = false;
  std::string payload;
  const CUresult result = remote_sync(
      Fn::gvirtusNotification,
      [&](WireWriter& w) { w.put<uint32_t>(static_cast<uint32_t>(sequence)); },
      [&](WireReader& r) {
        found = r.get<uint8_t>() != 0;
        if (found) payload = r.get_string(kMaxPayloadBytes);
      });
  int32_t level = 0;
  std::string text;
  if (result != CUDA_SUCCESS || !found || !read_log_message(payload, level, text)) return;
  reinterpret_cast<CUlogsCallback>(callback->function)(
      callback->data, static_cast<CUlogLevel>(level), text.data(), text.size());
}

// Each registration's handle (the backend's) and the token of its callback.
std::mutex& mutex = *new std::mutex;
auto& tokens = *new std::unordered_map<uint64_t, uint64_t>;

// One dump of at most `capacity` bytes, its NUL included: the text into `text`.
CUresult dump(CUlogIterator* iterator, std::string& text, uint64_t capacity, unsigned int flags) {
  uint32_t after = iterator != nullptr ? *iterator : 0;
  const CUresult result = remote_sync(
      Fn::cuLogsDumpToMemory,
      [&](WireWriter& w) {
        w.put<uint8_t>(iterator != nullptr ? 1 : 0);
        w.put<uint32_t>(after);
        w.put<uint64_t>(capacity);
        w.put<uint32_t>(flags);
      },
      [&](WireReader& r) {
        after = r.get<uint32_t>();
        text = r.get_string(capacity - 1);
      });
  if (result == CUDA_SUCCESS && iterator != nullptr) *iterator = after;
  return result;
}

}  // namespace
}  // namespace gvirtus::cuda

namespace cr = gvirtus::cuda;

#define GVIRTUS_EXPORT extern "C" __attribute__((visibility("default")))

GVIRTUS_EXPORT CUresult cuLogsRegisterCallback(CUlogsCallback callbackFunc, void* userData,
                                               CUlogsCallbackHandle* callback_out) {
  if (callbackFunc == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const gvirtus_host_callback callback{cr::run_log_callback, reinterpret_cast<void*>(callbackFunc),
                                       userData, nullptr};
  uint64_t token = 0;
  if (const CUresult r = cr::host_callback_token(callback, token); r != CUDA_SUCCESS) return r;
  uint64_t handle = 0;
  const CUresult result = cr::remote_sync(
      cr::Fn::cuLogsRegisterCallback, [&](gvirtus::WireWriter& w) { w.put<uint64_t>(token); },
      [&](gvirtus::WireReader& r) { handle = r.get<uint64_t>(); });
  if (result != CUDA_SUCCESS) {
    cr::drop_host_function(token);
    return result;
  }
  {
    std::lock_guard lock(cr::mutex);
    cr::tokens[handle] = token;
  }
  if (callback_out != nullptr) {
    *callback_out = reinterpret_cast<CUlogsCallbackHandle>(static_cast<uintptr_t>(handle));
  }
  return CUDA_SUCCESS;
}

GVIRTUS_EXPORT CUresult cuLogsUnregisterCallback(CUlogsCallbackHandle callback) {
  const auto handle = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(callback));
  const CUresult result = cr::remote_sync(
      cr::Fn::cuLogsUnregisterCallback, [&](gvirtus::WireWriter& w) { w.put<uint64_t>(handle); },
      [](gvirtus::WireReader&) {});
  if (result == CUDA_SUCCESS) {
    std::lock_guard lock(cr::mutex);
    if (const auto it = cr::tokens.find(handle); it != cr::tokens.end()) {
      cr::drop_host_function(it->second);
      cr::tokens.erase(it);
    }
  }
  return result;
}

GVIRTUS_EXPORT CUresult cuLogsDumpToMemory(CUlogIterator* iterator, char* buffer, size_t* size,
                                           unsigned int flags) {
  if (buffer == nullptr || size == nullptr || *size == 0) return CUDA_ERROR_INVALID_VALUE;
  std::string text;
  const CUresult result =
      cr::dump(iterator, text, std::min<uint64_t>(*size, gvirtus::kMaxLogDumpBytes), flags);
  if (result != CUDA_SUCCESS) {
    *size = 0;
    return result;
  }
  std::memcpy(buffer, text.data(), text.size());
  buffer[text.size()] = '\0';
  *size = text.size();
  return CUDA_SUCCESS;
}

GVIRTUS_EXPORT CUresult cuLogsDumpToFile(CUlogIterator* iterator, const char* pathToFile,
                                         unsigned int flags) {
  if (pathToFile == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::string text;
  const CUresult result = cr::dump(iterator, text, gvirtus::kMaxLogDumpBytes, flags);
  if (result != CUDA_SUCCESS) return result;
  std::FILE* file = std::fopen(pathToFile, "w");
  if (file == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const bool written = std::fwrite(text.data(), 1, text.size(), file) == text.size();
  return std::fclose(file) == 0 && written ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
