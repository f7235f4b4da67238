// The runtime's error log through the runtime stub, against the accepting device (which logs an
// invalid cudaSetDevice): a registered callback receives the message of a failed call on the
// session's callback thread (waited for here); a dump from an iterator taken before a failure
// holds that failure's line and advances the iterator; a dump to a file holds every line; an
// unregistered callback receives no more; a second unregistration is refused. And a device's
// asynchronous notification: an allocation over the budget the test gives the accepting device
// (1 MiB) reaches the registered callback with its handle. Prints
// "logs: ok" and exits 0, or says what was wrong and exits 1. argv[1]: the file to dump to.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>

namespace {

struct Received {
  std::mutex mutex;
  std::atomic<int> count{0};
  std::string last;
};

void on_message(void* data, cudaLogLevel, char* message, size_t length) {
  auto* received = static_cast<Received*>(data);
  std::lock_guard lock(received->mutex);
  received->last.assign(message, length);
  ++received->count;
}

bool received_by(Received& received, int count) {
  for (int i = 0; i < 200 && received.count.load() < count; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return received.count.load() >= count;
}

struct Notified {
  std::atomic<int> count{0};
  std::atomic<unsigned long long> over{0};
  std::atomic<cudaAsyncCallbackHandle_t> handle{nullptr};
};

void on_notification(cudaAsyncNotificationInfo_t* info, void* data,
                     cudaAsyncCallbackHandle_t handle) {
  auto* notified = static_cast<Notified*>(data);
  if (info->type == cudaAsyncNotificationTypeOverBudget) {
    notified->over = info->info.overBudget.bytesOverBudget;
  }
  notified->handle = handle;
  ++notified->count;
}

int fail(const char* what) {
  std::printf("logs: %s\n", what);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  Received received;
  cudaLogsCallbackHandle handle = nullptr;
  if (cudaLogsRegisterCallback(on_message, &received, &handle) != cudaSuccess) {
    return fail("cudaLogsRegisterCallback failed");
  }
  if (const cudaError_t rc = cudaSetDevice(5); rc != cudaErrorInvalidDevice) {
    return fail(("cudaSetDevice(5) answered " + std::to_string(rc)).c_str());
  }
  if (!received_by(received, 1)) return fail("the callback received nothing");
  {
    std::lock_guard lock(received.mutex);
    if (received.last.find("cudaSetDevice(5)") == std::string::npos) {
      return fail(("the callback received \"" + received.last + "\"").c_str());
    }
  }
  cudaLogIterator iterator = 0;
  if (cudaLogsCurrent(&iterator, 0) != cudaSuccess) return fail("cudaLogsCurrent failed");
  (void)cudaSetDevice(6);
  char buffer[1024];
  size_t size = sizeof buffer;
  const cudaLogIterator before = iterator;
  if (cudaLogsDumpToMemory(&iterator, buffer, &size, 0) != cudaSuccess || iterator == before ||
      std::string(buffer, size).find("cudaSetDevice(6)") == std::string::npos ||
      std::count(buffer, buffer + size, '\n') != 1) {
    return fail("the dump since the iterator is not the one new line");
  }
  if (cudaLogsDumpToFile(nullptr, argv[1], 0) != cudaSuccess) return fail("no dump to the file");
  std::ifstream file(argv[1]);
  std::stringstream text;
  text << file.rdbuf();
  if (text.str().find("cudaSetDevice(5)") == std::string::npos ||
      text.str().find("cudaSetDevice(6)") == std::string::npos) {
    return fail("the file does not hold both lines");
  }
  if (!received_by(received, 2)) return fail("the callback missed the second failure");
  if (cudaLogsUnregisterCallback(handle) != cudaSuccess) return fail("unregistering failed");
  const int count = received.count.load();
  (void)cudaSetDevice(7);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  if (received.count.load() != count) return fail("a message after unregistering");
  if (cudaLogsUnregisterCallback(handle) != cudaErrorInvalidValue) {
    return fail("a second unregistration was not refused");
  }
  Notified notified;
  cudaAsyncCallbackHandle_t registration = nullptr;
  if (cudaDeviceRegisterAsyncNotification(0, on_notification, &notified, &registration) !=
      cudaSuccess) {
    return fail("cudaDeviceRegisterAsyncNotification failed");
  }
  void* big = nullptr;
  if (cudaMalloc(&big, 2 << 20) != cudaSuccess) return fail("cudaMalloc failed");
  for (int i = 0; i < 200 && notified.count.load() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (notified.count.load() == 0 || notified.over.load() < (1u << 20) ||
      notified.handle.load() != registration) {
    return fail("no over-budget notification with its handle");
  }
  if (cudaDeviceUnregisterAsyncNotification(0, registration) != cudaSuccess ||
      cudaDeviceUnregisterAsyncNotification(0, registration) != cudaErrorInvalidValue) {
    return fail("unregistering the notification");
  }
  std::printf("logs: ok\n");
  return 0;
}
