/* nvml_probe: asks NVML what PyTorch, JAX, pynvml and monitoring tools ask, and prints every
 * answer, status included (nvmlErrorString's text), so that a test compares the lines. Linked
 * with "libnvidia-ml.so.1": NVIDIA's, or gvirtus's stub through LD_LIBRARY_PATH.
 * Exits 0 when nvmlInit_v2 succeeded, 1 when it did not (having printed its status). */
#ifndef NVML_NO_UNVERSIONED_FUNC_DEFS
#define NVML_NO_UNVERSIONED_FUNC_DEFS
#endif
#include <nvml.h>
#include <stdio.h>
#include <string.h>

static void said(const char* what, nvmlReturn_t r) { printf("%s: %s\n", what, nvmlErrorString(r)); }

int main(void) {
  nvmlReturn_t r = nvmlInit_v2();
  said("init", r);
  if (r != NVML_SUCCESS) return 1;
  char text[96];
  if ((r = nvmlSystemGetDriverVersion(text, sizeof text)) == NVML_SUCCESS) printf("driver %s\n", text);
  else said("driver version", r);
  int cuda = 0;
  if ((r = nvmlSystemGetCudaDriverVersion_v2(&cuda)) == NVML_SUCCESS) printf("cuda %d\n", cuda);
  else said("cuda version", r);
  unsigned count = 0;
  r = nvmlDeviceGetCount_v2(&count);
  printf("count %u (%s)\n", count, nvmlErrorString(r));
  nvmlDevice_t first = NULL;
  for (unsigned i = 0; i < count; ++i) {
    nvmlDevice_t d = NULL;
    if ((r = nvmlDeviceGetHandleByIndex_v2(i, &d)) != NVML_SUCCESS) { said("handle", r); continue; }
    if (i == 0) first = d;
    char name[96] = "", uuid[96] = "";
    nvmlDeviceGetName(d, name, sizeof name);
    nvmlDeviceGetUUID(d, uuid, sizeof uuid);
    nvmlPciInfo_t pci;
    memset(&pci, 0, sizeof pci);
    nvmlDeviceGetPciInfo_v3(d, &pci);
    unsigned index = 99, minor = 99;
    nvmlDeviceGetIndex(d, &index);
    nvmlDeviceGetMinorNumber(d, &minor);
    int major = 0, minor_cc = 0;
    nvmlDeviceGetCudaComputeCapability(d, &major, &minor_cc);
    printf("device %u: %s, %s, bus %s, index %u, minor %u, cc %d.%d\n", i, name, uuid, pci.busId,
           index, minor, major, minor_cc);
    nvmlMemory_t memory;
    if ((r = nvmlDeviceGetMemoryInfo(d, &memory)) == NVML_SUCCESS)
      printf("  memory total %llu free %llu used %llu\n", memory.total, memory.free, memory.used);
    else said("  memory", r);
    nvmlMemory_v2_t memory2;
    memset(&memory2, 0, sizeof memory2);
    memory2.version = nvmlMemory_v2;
    if ((r = nvmlDeviceGetMemoryInfo_v2(d, &memory2)) == NVML_SUCCESS)
      printf("  memory v2 total %llu reserved %llu\n", memory2.total, memory2.reserved);
    else said("  memory v2", r);
    nvmlUtilization_t use;
    if ((r = nvmlDeviceGetUtilizationRates(d, &use)) == NVML_SUCCESS)
      printf("  utilization gpu %u memory %u\n", use.gpu, use.memory);
    else said("  utilization", r);
    unsigned processes = 0;  /* the count alone first, as torch asks */
    r = nvmlDeviceGetComputeRunningProcesses_v3(d, &processes, NULL);
    printf("  processes %u (%s)\n", processes, nvmlErrorString(r));
    unsigned clock = 0;
    if ((r = nvmlDeviceGetClockInfo(d, NVML_CLOCK_SM, &clock)) == NVML_SUCCESS) printf("  sm clock %u MHz\n", clock);
    else said("  sm clock", r);
    unsigned temperature = 0;
    said("  temperature", nvmlDeviceGetTemperature(d, NVML_TEMPERATURE_GPU, &temperature));
    nvmlDevice_t again = NULL;
    r = nvmlDeviceGetHandleByUUID(uuid, &again);
    printf("  by uuid: %s, %s\n", nvmlErrorString(r), again == d ? "the same device" : "another device");
    again = NULL;
    r = nvmlDeviceGetHandleByPciBusId_v2(pci.busId, &again);
    printf("  by bus id: %s, %s\n", nvmlErrorString(r), again == d ? "the same device" : "another device");
    nvmlFieldValue_t fields[2];
    memset(fields, 0, sizeof fields);
    fields[0].fieldId = NVML_FI_DEV_ECC_CURRENT;
    fields[1].fieldId = NVML_FI_DEV_POWER_INSTANT;
    r = nvmlDeviceGetFieldValues(d, 2, fields);
    printf("  fields: %s, %s and %s\n", nvmlErrorString(r), nvmlErrorString(fields[0].nvmlReturn),
           nvmlErrorString(fields[1].nvmlReturn));
  }
  if (count > 1) {
    nvmlDevice_t second = NULL;
    nvmlDeviceGetHandleByIndex_v2(1, &second);
    nvmlGpuP2PStatus_t p2p = NVML_P2P_STATUS_OK;
    r = nvmlDeviceGetP2PStatus(first, second, NVML_P2P_CAPS_INDEX_READ, &p2p);
    printf("p2p 0-1: %s, %s\n", nvmlErrorString(r), p2p == NVML_P2P_STATUS_OK ? "ok" : "not ok");
  }
  /* NVML's own refusals. */
  nvmlDevice_t none = NULL;
  said("index past the end", nvmlDeviceGetHandleByIndex_v2(count, &none));
  said("unknown uuid", nvmlDeviceGetHandleByUUID("GPU-00000000-0000-0000-0000-000000000000", &none));
  if (first != NULL) {
    char small[4];
    said("name into 4 bytes", nvmlDeviceGetName(first, small, sizeof small));
    said("count pointer null", nvmlDeviceGetComputeRunningProcesses_v3(first, NULL, NULL));
    said("set persistence mode", nvmlDeviceSetPersistenceMode(first, NVML_FEATURE_ENABLED));
  }
  said("shutdown", nvmlShutdown());
  said("count after shutdown", nvmlDeviceGetCount_v2(&count));
  return 0;
}
