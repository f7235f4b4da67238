/* gvtest: a small C library of gvirtus's own, remoted by a stub and a backend plugin that are
 * both generated whole from this header and gvtest_descriptor.json (tests/genlib). It has what a
 * real library's calls have: its own status type, three handle kinds with create and destroy
 * (streams shared with other libraries), an array argument whose length is another argument,
 * strings in and out, memory it allocates
 * ("device" memory, vetted and counted by the backend), an asynchronous call whose error is
 * reported later, by the library's last error, and faults as a GPU library has them: a sticky
 * one, and a library that cannot be had for a while. gvtest.cpp is the real library. */
#ifndef GVTEST_H
#define GVTEST_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gvtStatus {
  GVT_SUCCESS = 0,
  GVT_ERROR_INVALID_VALUE = 1,
  GVT_ERROR_INVALID_HANDLE = 2,
  GVT_ERROR_FULL = 3,
  GVT_ERROR_NOT_FOUND = 4,
  GVT_ERROR_BACKEND_LOST = 5,
  GVT_ERROR_FAULTED = 6,    /* sticky: until gvtReset */
  GVT_ERROR_UNAVAILABLE = 7 /* the library cannot be had, until gvtReset */
} gvtStatus_t;

typedef enum gvtFault { GVT_FAULT_STICKY = 0, GVT_FAULT_UNAVAILABLE = 1 } gvtFault_t;

typedef enum gvtOrder { GVT_ORDER_ASCENDING = 0, GVT_ORDER_DESCENDING = 1 } gvtOrder_t;

typedef struct gvtBag_st* gvtBag_t;     /* a bag of at most `capacity` ints */
typedef struct gvtLabel_st* gvtLabel_t; /* a piece of text */
/* A stream: a token that every library of a process shares, as CUDA's streams are (a stream one
 * library created is another's to use and destroy). */
typedef struct gvtStream_st* gvtStream_t;

gvtStatus_t gvtGetVersion(int* version);

gvtStatus_t gvtBagCreate(gvtBag_t* bag, size_t capacity);
gvtStatus_t gvtBagDestroy(gvtBag_t bag);
/* Adds all `count` values, or none (GVT_ERROR_FULL). */
gvtStatus_t gvtBagAdd(gvtBag_t bag, const int* values, size_t count);
gvtStatus_t gvtBagSum(gvtBag_t bag, long long* sum);
/* The bag's values in `order`: at most `capacity` of them into `values`, their number in `count`.
 */
gvtStatus_t gvtBagSorted(gvtBag_t bag, gvtOrder_t order, int* values, size_t capacity,
                         size_t* count);
/* Asynchronous: a full bag is reported by gvtGetLastError (and returned here natively). */
gvtStatus_t gvtBagPush(gvtBag_t bag, int value);

/* The calling thread's last error: taken (reset to GVT_SUCCESS) or peeked at. */
gvtStatus_t gvtGetLastError(void);
gvtStatus_t gvtPeekAtLastError(void);

gvtStatus_t gvtLabelCreate(gvtLabel_t* label, const char* text);
gvtStatus_t gvtLabelDestroy(gvtLabel_t label);
/* The text, truncated to `capacity` - 1 bytes and NUL-terminated. */
gvtStatus_t gvtLabelGet(gvtLabel_t label, char* text, size_t capacity);
/* Where `needle` first occurs in the label's text (GVT_ERROR_NOT_FOUND if nowhere). */
gvtStatus_t gvtLabelFind(gvtLabel_t label, const char* needle, int* offset);

/* Memory of the library's own: rows * row_bytes bytes, zeroed. */
gvtStatus_t gvtMalloc(void** ptr, size_t rows, size_t row_bytes);
gvtStatus_t gvtFree(void* ptr);
gvtStatus_t gvtMemset(void* ptr, int value, size_t bytes);
gvtStatus_t gvtMemRead(const void* ptr, unsigned char* host, size_t bytes);

gvtStatus_t gvtStreamCreate(gvtStream_t* stream);
/* Ends a stream of this library's (freed) or another's (released: its creator frees it). */
gvtStatus_t gvtStreamDestroy(gvtStream_t stream);
gvtStatus_t gvtStreamQuery(gvtStream_t stream);

/* Puts the library in a fault (and returns it): every later call but gvtGetVersion, the
 * last-error calls and these two fails with it, as a GPU library does after a kernel fault
 * (GVT_ERROR_FAULTED) or while its device cannot be had (GVT_ERROR_UNAVAILABLE). gvtReset ends
 * either. */
gvtStatus_t gvtInjectFault(gvtFault_t fault);
gvtStatus_t gvtReset(void);

#ifdef __cplusplus
}
#endif

#endif /* GVTEST_H */
