/* A logging stand-in for NVIDIA's libcuda.so.1: records what a CUDA runtime asks of the driver
 * at start-up, so that gvirtus's libcuda.so.1 can be tested against the real requests
 * (data/README.md says how the committed captures were made).
 *
 * Every cuGetProcAddress request is written to $GVIRTUS_DRIVER_CAPTURE (default
 * ./driver-capture.txt) as "proc NAME VERSION FLAGS", and answered with a function that returns
 * CUDA_ERROR_NOT_SUPPORTED, except the few the runtime needs to go on (cuGetProcAddress itself,
 * cuGetExportTable, cuDriverGetVersion, cuInit). cuGetExportTable logs "export_table UUID" and
 * refuses; cuInit returns $GVIRTUS_DRIVER_INIT_RESULT (default 0), so that what the runtime makes
 * of each driver error can be seen. Our own code, written for the tests. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
enum { kSuccess = 0, kNotSupported = 801, kNotFound = 500 };

static FILE* capture(void) {
  static FILE* file;
  if (file == NULL) {
    const char* path = getenv("GVIRTUS_DRIVER_CAPTURE");
    file = fopen(path != NULL ? path : "driver-capture.txt", "a");
  }
  return file;
}

static void record(const char* format, const char* text, int a, unsigned long long b) {
  FILE* file = capture();
  if (file == NULL) return;
  fprintf(file, format, text, a, b);
  fflush(file);
}

static CUresult not_supported(void) { return kNotSupported; }

CUresult cuDriverGetVersion(int* version) {
  record("call %s %d %llu\n", "cuDriverGetVersion", 0, 0);
  if (version != NULL) *version = 13000;
  return kSuccess;
}

CUresult cuInit(unsigned int flags) {
  record("call %s %d %llu\n", "cuInit", (int)flags, 0);
  const char* result = getenv("GVIRTUS_DRIVER_INIT_RESULT");
  return result != NULL ? atoi(result) : kSuccess;
}

CUresult cuGetExportTable(const void** table, const unsigned char* id) {
  char uuid[33] = {0};
  for (int i = 0; i < 16 && id != NULL; ++i) snprintf(uuid + 2 * i, 3, "%02x", id[i]);
  record("export_table %s %d %llu\n", uuid, 0, 0);
  if (table != NULL) *table = NULL;
  return kNotFound;
}

CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int version,
                             unsigned long long flags, int* status) {
  record("proc %s %d %llu\n", symbol != NULL ? symbol : "", version, flags);
  if (pfn == NULL || symbol == NULL) return 1; /* CUDA_ERROR_INVALID_VALUE */
  if (strcmp(symbol, "cuGetProcAddress") == 0) {
    *pfn = (void*)cuGetProcAddress_v2;
  } else if (strcmp(symbol, "cuGetExportTable") == 0) {
    *pfn = (void*)cuGetExportTable;
  } else if (strcmp(symbol, "cuDriverGetVersion") == 0) {
    *pfn = (void*)cuDriverGetVersion;
  } else if (strcmp(symbol, "cuInit") == 0) {
    *pfn = (void*)cuInit;
  } else {
    *pfn = (void*)not_supported;
  }
  if (status != NULL) *status = 0;
  return kSuccess;
}

CUresult cuGetProcAddress(const char* symbol, void** pfn, int version, unsigned long long flags) {
  return cuGetProcAddress_v2(symbol, pfn, version, flags, NULL);
}
