// The runtime's error log on the backend (cudart rows 306-310; wire: src/common/log_dump_wire.h),
// as the driver plugin's (plugins/cuda/backend/logs.h): callbacks relayed to the client through
// the plugin's notification relay (services/notification_relay.h), dumps to memory bounded by the
// runtime's own buffer.
#include <mutex>
#include <string>
#include <vector>

#include "backend/services/notification_relay.h"
#include "common/error.h"
#include "common/log_dump_wire.h"
#include "plugins/cudart/backend/handlers.h"

namespace gvirtus::cudart {
namespace {

void relay_message(void*, cudaLogLevel level, char* message, size_t length) {
  services::notification_relay().deliver(
      log_message_payload(static_cast<int32_t>(level), message, length));
}

// The plugin's own callback, registered with the runtime once, at the first registration.
cudaError_t register_with_runtime() {
  static std::mutex mutex;
  static bool registered = false;
  std::lock_guard lock(mutex);
  if (registered) return cudaSuccess;
  cudaLogsCallbackHandle handle = nullptr;
  const cudaError_t result = ::cudaLogsRegisterCallback(relay_message, nullptr, &handle);
  registered = result == cudaSuccess;
  return result;
}

void register_callback(WireReader& in, WireWriter& out, cudaError_t& result) {
  const auto token = in.get<uint64_t>();
  in.expect_end();
  if (token == 0) raise(ErrorKind::kInvalidInput, "a log callback without a token");
  services::Gate* gate = nullptr;
  result = register_with_runtime();
  if (result == cudaSuccess) {
    gate = services::notification_relay().add(token);
    if (gate == nullptr) result = cudaErrorMemoryAllocation;
  }
  out.put<int32_t>(result);
  out.put<uint64_t>(result == cudaSuccess ? reinterpret_cast<uintptr_t>(gate) : 0);
}

void dump_to_memory(WireReader& in, WireWriter& out, cudaError_t& result) {
  const bool has_iterator = in.get<uint8_t>() != 0;
  cudaLogIterator iterator = in.get<uint32_t>();
  const auto capacity = in.get<uint64_t>();
  const auto flags = in.get<uint32_t>();
  in.expect_end();
  if (capacity == 0 || capacity > kMaxLogDumpBytes) {
    raise(ErrorKind::kInvalidInput, "a log dump of " + std::to_string(capacity) + " bytes");
  }
  std::vector<char> text(capacity, '\0');
  size_t size = capacity;
  result = ::cudaLogsDumpToMemory(has_iterator ? &iterator : nullptr, text.data(), &size, flags);
  if (result != cudaSuccess || size >= capacity) size = 0;  // never more than was given
  out.put<int32_t>(result);
  out.put<uint32_t>(iterator);
  out.put_blob(text.data(), size);
}

}  // namespace

bool run_logs(Fn fn, WireReader& in, WireWriter& out, cudaError_t& result) {
  switch (fn) {
    case Fn::cudaLogsRegisterCallback:
      register_callback(in, out, result);
      return true;
    case Fn::cudaLogsUnregisterCallback: {
      const auto handle = in.get<uint64_t>();
      in.expect_end();
      result = services::notification_relay().remove(
                   reinterpret_cast<const void*>(static_cast<uintptr_t>(handle)))
                   ? cudaSuccess
                   : cudaErrorInvalidValue;
      out.put<int32_t>(result);
      return true;
    }
    case Fn::cudaLogsDumpToMemory:
      dump_to_memory(in, out, result);
      return true;
    case Fn::gvirtusNotification:
      services::serve_notification(services::notification_relay(), in, out);
      result = cudaSuccess;
      return true;
    default:
      return false;
  }
}

}  // namespace gvirtus::cudart
