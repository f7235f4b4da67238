// IPC between two applications: this program exports device memory and an interprocess event,
// then runs itself again as a second application (a process of its own, so through gvirtus a
// session of its own on the same backend) that opens both, checks the memory, writes new values,
// records the event and closes the memory; the first then waits for the event and checks.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "check.h"

// Outside the anonymous namespace: its name is then the same wherever the file is compiled (the
// simulated device's record names it: tests/driver/data/simulated_launches.txt).
__global__ void rewrite(int* values, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) values[i] = values[i] * 5 + 1;
}

namespace {

constexpr int kCount = 4096;

std::string hex(const void* data, size_t bytes) {
  std::string text;
  char byte[3];
  for (size_t i = 0; i < bytes; ++i) {
    std::snprintf(byte, sizeof byte, "%02x", static_cast<const unsigned char*>(data)[i]);
    text += byte;
  }
  return text;
}

bool unhex(const char* text, void* data, size_t bytes) {
  if (std::strlen(text) != 2 * bytes) return false;
  for (size_t i = 0; i < bytes; ++i) {
    unsigned value = 0;
    if (std::sscanf(text + 2 * i, "%2x", &value) != 1) return false;
    static_cast<unsigned char*>(data)[i] = static_cast<unsigned char>(value);
  }
  return true;
}

int second_application(const char* memory_text, const char* event_text) {
  cudaIpcMemHandle_t memory{};
  cudaIpcEventHandle_t event_handle{};
  if (!unhex(memory_text, &memory, sizeof memory) ||
      !unhex(event_text, &event_handle, sizeof event_handle)) {
    std::printf("bad handles\n");
    return 2;
  }
  int* values = nullptr;
  if (OK(cudaIpcOpenMemHandle((void**)&values, memory, cudaIpcMemLazyEnablePeerAccess))) {
    std::vector<int> seen(kCount, 0);
    if (OK(cudaMemcpy(seen.data(), values, kCount * sizeof(int), cudaMemcpyDefault))) {
      bool all = true;
      for (int i = 0; i < kCount; ++i) all = all && seen[i] == i * 3;
      EXPECT(all);
    }
    rewrite<<<kCount / 256, 256>>>(values, kCount);
    cudaEvent_t done = nullptr;
    if (OK(cudaIpcOpenEventHandle(&done, event_handle))) {
      SHOW(cudaEventRecord(done, 0));
      SHOW(cudaEventSynchronize(done));
    }
    SHOW(cudaIpcCloseMemHandle(values));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], "second") == 0) {
    return second_application(argv[2], argv[3]);
  }
  std::vector<int> values(kCount);
  for (int i = 0; i < kCount; ++i) values[i] = i * 3;
  int* device = nullptr;
  cudaIpcMemHandle_t memory{};
  cudaIpcEventHandle_t event_handle{};
  cudaEvent_t done = nullptr;
  const bool ready =
      OK(cudaMalloc((void**)&device, kCount * sizeof(int))) &&
      OK(cudaMemcpy(device, values.data(), kCount * sizeof(int), cudaMemcpyHostToDevice)) &&
      OK(cudaIpcGetMemHandle(&memory, device)) &&
      OK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming | cudaEventInterprocess)) &&
      OK(cudaIpcGetEventHandle(&event_handle, done));
  if (!ready) {
    // Without a device nothing can be exported: what the calls answer, natively and remotely.
    SHOW(cudaIpcGetMemHandle(&memory, device));
    SHOW(cudaIpcOpenMemHandle((void**)&device, memory, cudaIpcMemLazyEnablePeerAccess));
    SHOW(cudaIpcCloseMemHandle(nullptr));
    SHOW(cudaIpcGetEventHandle(&event_handle, done));
    return 0;
  }
  const std::string command = std::string(argv[0]) + " second " + hex(&memory, sizeof memory) +
                              " " + hex(&event_handle, sizeof event_handle) + " 2>&1";
  std::fflush(stdout);
  FILE* second = ::popen(command.c_str(), "r");
  if (second != nullptr) {
    char line[512];
    while (std::fgets(line, sizeof line, second) != nullptr) std::printf("second: %s", line);
    std::printf("second exited %d\n", ::pclose(second));
  }
  SHOW(cudaEventSynchronize(done));
  std::vector<int> back(kCount, 0);
  if (OK(cudaMemcpy(back.data(), device, kCount * sizeof(int), cudaMemcpyDeviceToHost))) {
    bool all = true;
    for (int i = 0; i < kCount; ++i) all = all && back[i] == i * 15 + 1;
    EXPECT(all);
  }
  SHOW(cudaEventDestroy(done));
  SHOW(cudaFree(device));
  return 0;
}
