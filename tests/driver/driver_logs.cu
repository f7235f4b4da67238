// The driver's error log through gvirtus (cuda rows 297-301), each call printed with its result for
// the test to find (simulated_mode_test.cpp): a registered callback receives the message of a
// failed call (on the session's callback thread, after the call returned: waited for here); a
// dump from an iterator taken before a failure holds that failure's message and advances the
// iterator; a dump to a file holds every message; an unregistered callback receives no more. And a
// device's asynchronous notification: over the memory budget the test gives the simulated device
// (1 MiB), a registered callback is told by how much, with its own handle.
#include <cuda.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>

#include "show_calls.h"

namespace {

struct Received {
  std::mutex mutex;
  std::atomic<int> count{0};
  std::string last;
  int level = -1;
};

void on_message(void* data, CUlogLevel level, char* message, size_t length) {
  auto* received = static_cast<Received*>(data);
  std::lock_guard lock(received->mutex);
  received->last.assign(message, length);
  received->level = static_cast<int>(level);
  ++received->count;
}

// Waits up to two seconds for the callback to have run `count` times.
bool received_by(Received& received, int count) {
  for (int i = 0; i < 200 && received.count.load() < count; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return received.count.load() >= count;
}

struct Notified {
  std::atomic<int> count{0};
  std::atomic<int> type{-1};
  std::atomic<unsigned long long> over{0};
  std::atomic<CUasyncCallbackHandle> handle{nullptr};
};

void on_notification(CUasyncNotificationInfo* info, void* data, CUasyncCallbackHandle handle) {
  auto* notified = static_cast<Notified*>(data);
  notified->type = static_cast<int>(info->type);
  notified->over = info->info.overBudget.bytesOverBudget;
  notified->handle = handle;
  ++notified->count;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  CUdevice device = 0;
  show_primary_context(device);
  Received received;
  CUlogsCallbackHandle handle = nullptr;
  SHOW(cuLogsRegisterCallback(on_message, &received, &handle));
  CUdeviceptr memory = 0;
  SHOW(cuMemAlloc(&memory, 0));  // refused: a message
  const bool first = received_by(received, 1);
  {
    std::lock_guard lock(received.mutex);
    std::printf("callback received the failure: %s, level %d, \"%s\"\n", first ? "yes" : "no",
                received.level, received.last.c_str());
  }

  CUlogIterator iterator = 0;
  SHOW(cuLogsCurrent(&iterator, 0));
  SHOW(cuMemAllocManaged(&memory, 0, CU_MEM_ATTACH_GLOBAL));  // refused: another message
  char buffer[4096];
  size_t size = sizeof buffer;
  const CUlogIterator before = iterator;
  SHOW(cuLogsDumpToMemory(&iterator, buffer, &size, 0));
  std::printf("dump since the iterator: %zu bytes, one line %s, iterator advanced %s\n", size,
              size > 0 && std::count(buffer, buffer + size, '\n') == 1 ? "yes" : "no",
              iterator != before ? "yes" : "no");
  size = sizeof buffer;
  SHOW(cuLogsDumpToMemory(&iterator, buffer, &size, 0));
  std::printf("nothing new: %zu bytes\n", size);
  size_t tiny = 2;
  SHOW(cuLogsDumpToMemory(nullptr, buffer, &tiny, 0));

  SHOW(cuLogsDumpToFile(nullptr, argv[1], 0));
  std::ifstream file(argv[1]);
  std::stringstream text;
  text << file.rdbuf();
  const std::string all = text.str();
  std::printf("file holds both failures: %s, the callback received both: %s\n",
              std::count(all.begin(), all.end(), '\n') == 2 ? "yes" : "no",
              received_by(received, 2) ? "yes" : "no");
  SHOW(cuLogsDumpToFile(nullptr, "/nonexistent/dir/log.txt", 0));

  SHOW(cuLogsUnregisterCallback(handle));
  const int count = received.count.load();
  SHOW(cuMemAlloc(&memory, 0));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  std::printf("no message after unregistering: %s\n",
              received.count.load() == count ? "yes" : "no");
  SHOW(cuLogsUnregisterCallback(handle));
  SHOW(cuLogsRegisterCallback(nullptr, nullptr, nullptr));

  Notified notified;
  CUasyncCallbackHandle registration = nullptr;
  SHOW(cuDeviceRegisterAsyncNotification(device, on_notification, &notified, &registration));
  CUdeviceptr big = 0;
  SHOW(cuMemAlloc(&big, 2 << 20));  // 1 MiB over the budget
  for (int i = 0; i < 200 && notified.count.load() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::printf("notified: %s, type %d, over by at least 1 MiB %s, its own handle %s\n",
              notified.count.load() > 0 ? "yes" : "no", notified.type.load(),
              notified.over.load() >= (1u << 20) ? "yes" : "no",
              notified.handle.load() == registration ? "yes" : "no");
  SHOW(cuMemFree(big));
  SHOW(cuDeviceUnregisterAsyncNotification(device, registration));
  SHOW(cuDeviceUnregisterAsyncNotification(device, registration));
  SHOW(cuDeviceRegisterAsyncNotification(device, nullptr, nullptr, &registration));
  return 0;
}
