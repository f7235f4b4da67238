// The real gvtest library (gvtest.h): what the backend plugin calls, and what the application
// links when it runs natively. Like a real library, it trusts its handles and pointers: a made-up
// one is undefined behaviour here, which is why the backend vets them first.
#include "gvtest.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <vector>

struct gvtBag_st {
  size_t capacity;
  std::vector<int> values;
};

struct gvtLabel_st {
  std::string text;
};

namespace {

thread_local gvtStatus_t t_last_error = GVT_SUCCESS;
std::mutex streams_mutex;
std::set<gvtStream_t> own_streams;  // the streams this library created and has not freed

gvtStatus_t failed(gvtStatus_t status) {
  t_last_error = status;
  return status;
}

// The library's fault (gvtInjectFault), GVT_SUCCESS when it has none.
std::atomic<gvtStatus_t> g_fault{GVT_SUCCESS};

}  // namespace

// Every call that needs the library fails with its fault first.
#define GVT_NEEDS_LIBRARY()                                               \
  if (const gvtStatus_t fault_ = g_fault.load(); fault_ != GVT_SUCCESS) { \
    return failed(fault_);                                                \
  }

namespace {}  // namespace

extern "C" {

gvtStatus_t gvtGetVersion(int* version) {
  if (version == nullptr) return failed(GVT_ERROR_INVALID_VALUE);
  *version = 1003;
  return GVT_SUCCESS;
}

gvtStatus_t gvtBagCreate(gvtBag_t* bag, size_t capacity) {
  GVT_NEEDS_LIBRARY();
  if (bag == nullptr || capacity == 0 || capacity > (1u << 20)) {
    return failed(GVT_ERROR_INVALID_VALUE);
  }
  *bag = new gvtBag_st{capacity, {}};
  return GVT_SUCCESS;
}

gvtStatus_t gvtBagDestroy(gvtBag_t bag) {
  GVT_NEEDS_LIBRARY();
  if (bag == nullptr) return failed(GVT_ERROR_INVALID_HANDLE);
  delete bag;
  return GVT_SUCCESS;
}

gvtStatus_t gvtBagAdd(gvtBag_t bag, const int* values, size_t count) {
  GVT_NEEDS_LIBRARY();
  if (bag == nullptr) return failed(GVT_ERROR_INVALID_HANDLE);
  if (values == nullptr && count != 0) return failed(GVT_ERROR_INVALID_VALUE);
  if (count > bag->capacity - bag->values.size()) return failed(GVT_ERROR_FULL);
  bag->values.insert(bag->values.end(), values, values + count);
  return GVT_SUCCESS;
}

gvtStatus_t gvtBagSum(gvtBag_t bag, long long* sum) {
  GVT_NEEDS_LIBRARY();
  if (bag == nullptr) return failed(GVT_ERROR_INVALID_HANDLE);
  if (sum == nullptr) return failed(GVT_ERROR_INVALID_VALUE);
  long long total = 0;
  for (int v : bag->values) total += v;
  *sum = total;
  return GVT_SUCCESS;
}

gvtStatus_t gvtBagSorted(gvtBag_t bag, gvtOrder_t order, int* values, size_t capacity,
                         size_t* count) {
  GVT_NEEDS_LIBRARY();
  if (bag == nullptr) return failed(GVT_ERROR_INVALID_HANDLE);
  if (count == nullptr || (values == nullptr && capacity != 0)) {
    return failed(GVT_ERROR_INVALID_VALUE);
  }
  std::vector<int> sorted = bag->values;
  if (order == GVT_ORDER_DESCENDING) {
    std::sort(sorted.begin(), sorted.end(), std::greater<>());
  } else {
    std::sort(sorted.begin(), sorted.end());
  }
  const size_t n = std::min(capacity, sorted.size());
  std::copy_n(sorted.begin(), n, values);
  *count = n;
  return GVT_SUCCESS;
}

gvtStatus_t gvtBagPush(gvtBag_t bag, int value) {
  GVT_NEEDS_LIBRARY();
  if (bag == nullptr) return failed(GVT_ERROR_INVALID_HANDLE);
  if (bag->values.size() == bag->capacity) return failed(GVT_ERROR_FULL);
  bag->values.push_back(value);
  return GVT_SUCCESS;
}

gvtStatus_t gvtGetLastError(void) {
  const gvtStatus_t last = t_last_error;
  t_last_error = GVT_SUCCESS;
  return last;
}

gvtStatus_t gvtPeekAtLastError(void) {
  return t_last_error;
}

gvtStatus_t gvtLabelCreate(gvtLabel_t* label, const char* text) {
  GVT_NEEDS_LIBRARY();
  if (label == nullptr || text == nullptr) return failed(GVT_ERROR_INVALID_VALUE);
  *label = new gvtLabel_st{text};
  return GVT_SUCCESS;
}

gvtStatus_t gvtLabelDestroy(gvtLabel_t label) {
  GVT_NEEDS_LIBRARY();
  if (label == nullptr) return failed(GVT_ERROR_INVALID_HANDLE);
  delete label;
  return GVT_SUCCESS;
}

gvtStatus_t gvtLabelGet(gvtLabel_t label, char* text, size_t capacity) {
  GVT_NEEDS_LIBRARY();
  if (label == nullptr) return failed(GVT_ERROR_INVALID_HANDLE);
  if (text == nullptr || capacity == 0) return failed(GVT_ERROR_INVALID_VALUE);
  const size_t n = std::min(capacity - 1, label->text.size());
  std::memcpy(text, label->text.data(), n);
  text[n] = '\0';
  return GVT_SUCCESS;
}

gvtStatus_t gvtLabelFind(gvtLabel_t label, const char* needle, int* offset) {
  GVT_NEEDS_LIBRARY();
  if (label == nullptr) return failed(GVT_ERROR_INVALID_HANDLE);
  if (needle == nullptr || offset == nullptr) return failed(GVT_ERROR_INVALID_VALUE);
  const size_t at = label->text.find(needle);
  if (at == std::string::npos) return failed(GVT_ERROR_NOT_FOUND);
  *offset = static_cast<int>(at);
  return GVT_SUCCESS;
}

gvtStatus_t gvtMalloc(void** ptr, size_t rows, size_t row_bytes) {
  GVT_NEEDS_LIBRARY();
  size_t bytes = 0;
  if (ptr == nullptr || __builtin_mul_overflow(rows, row_bytes, &bytes) || bytes == 0 ||
      bytes > (size_t{1} << 30)) {
    return failed(GVT_ERROR_INVALID_VALUE);
  }
  *ptr = std::calloc(1, bytes);
  return *ptr != nullptr ? GVT_SUCCESS : failed(GVT_ERROR_INVALID_VALUE);
}

gvtStatus_t gvtFree(void* ptr) {
  GVT_NEEDS_LIBRARY();
  std::free(ptr);
  return GVT_SUCCESS;
}

gvtStatus_t gvtMemset(void* ptr, int value, size_t bytes) {
  GVT_NEEDS_LIBRARY();
  if (ptr == nullptr) return failed(GVT_ERROR_INVALID_VALUE);
  std::memset(ptr, value, bytes);
  return GVT_SUCCESS;
}

gvtStatus_t gvtMemRead(const void* ptr, unsigned char* host, size_t bytes) {
  GVT_NEEDS_LIBRARY();
  if (ptr == nullptr || host == nullptr) return failed(GVT_ERROR_INVALID_VALUE);
  std::memcpy(host, ptr, bytes);
  return GVT_SUCCESS;
}

gvtStatus_t gvtStreamCreate(gvtStream_t* stream) {
  GVT_NEEDS_LIBRARY();
  if (stream == nullptr) return failed(GVT_ERROR_INVALID_VALUE);
  std::lock_guard lock(streams_mutex);
  *stream = reinterpret_cast<gvtStream_t>(new char);
  own_streams.insert(*stream);
  return GVT_SUCCESS;
}

gvtStatus_t gvtStreamDestroy(gvtStream_t stream) {
  GVT_NEEDS_LIBRARY();
  if (stream == nullptr) return failed(GVT_ERROR_INVALID_HANDLE);
  std::lock_guard lock(streams_mutex);
  if (own_streams.erase(stream) != 0) delete reinterpret_cast<char*>(stream);
  return GVT_SUCCESS;
}

gvtStatus_t gvtStreamQuery(gvtStream_t stream) {
  GVT_NEEDS_LIBRARY();
  return stream != nullptr ? GVT_SUCCESS : failed(GVT_ERROR_INVALID_HANDLE);
}

gvtStatus_t gvtInjectFault(gvtFault_t fault) {
  if (fault != GVT_FAULT_STICKY && fault != GVT_FAULT_UNAVAILABLE) {
    return failed(GVT_ERROR_INVALID_VALUE);
  }
  g_fault = fault == GVT_FAULT_STICKY ? GVT_ERROR_FAULTED : GVT_ERROR_UNAVAILABLE;
  return failed(g_fault);
}

gvtStatus_t gvtReset(void) {
  g_fault = GVT_SUCCESS;
  return GVT_SUCCESS;
}

}  // extern "C"
