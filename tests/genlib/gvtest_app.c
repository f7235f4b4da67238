/* An application of the gvtest library: run natively (the real libgvtest.so.1) and remoted (the
 * generated stub of the same name, through a gvirtus backend), it must print the same lines.
 * Every call's status is printed, except gvtBagPush's: it is sent ahead when remoted, so its
 * error comes from the next gvtGetLastError, as the library's asynchronous errors do. */
#include <stdio.h>
#include <string.h>

#include "gvtest.h"

static int failures = 0;

static void expect(const char* what, gvtStatus_t got, gvtStatus_t want) {
  printf("%s: %d\n", what, (int)got);
  if (got != want) {
    printf("  unexpected: wanted %d\n", (int)want);
    ++failures;
  }
}

int main(void) {
  int version = 0;
  expect("version", gvtGetVersion(&version), GVT_SUCCESS);
  printf("version is %d\n", version);

  /* Two handle kinds, created and used. */
  gvtBag_t bag = NULL;
  expect("bag create", gvtBagCreate(&bag, 8), GVT_SUCCESS);
  const int values[] = {5, -3, 12, 7, 0};
  expect("bag add (an array of 5)", gvtBagAdd(bag, values, 5), GVT_SUCCESS);
  expect("bag add beyond capacity", gvtBagAdd(bag, values, 5), GVT_ERROR_FULL);
  expect("last error after it", gvtGetLastError(), GVT_ERROR_FULL);
  long long sum = 0;
  expect("bag sum", gvtBagSum(bag, &sum), GVT_SUCCESS);
  printf("sum is %lld\n", sum);

  int sorted[8] = {99, 99, 99, 99, 99, 99, 99, 99};
  size_t count = 0;
  expect("bag sorted descending, room for 3",
         gvtBagSorted(bag, GVT_ORDER_DESCENDING, sorted, 3, &count), GVT_SUCCESS);
  printf("%zu sorted:", count);
  for (int i = 0; i < 8; ++i) printf(" %d", sorted[i]); /* the untouched stay 99 */
  printf("\n");

  /* Asynchronous: the bag holds 5 of 8, so the fourth push overflows. */
  for (int i = 0; i < 4; ++i) (void)gvtBagPush(bag, 100 + i);
  expect("peek after pushes", gvtPeekAtLastError(), GVT_ERROR_FULL);
  expect("last error after pushes", gvtGetLastError(), GVT_ERROR_FULL);
  expect("last error again", gvtGetLastError(), GVT_SUCCESS);
  expect("bag sum after pushes", gvtBagSum(bag, &sum), GVT_SUCCESS);
  printf("sum is %lld\n", sum);

  /* Strings in and out. */
  gvtLabel_t label = NULL;
  expect("label create", gvtLabelCreate(&label, "hello, gvirtus"), GVT_SUCCESS);
  char text[32];
  memset(text, '#', sizeof text);
  expect("label get", gvtLabelGet(label, text, sizeof text), GVT_SUCCESS);
  printf("label is '%s'\n", text);
  char small[6];
  memset(small, '#', sizeof small);
  expect("label get into 6 bytes", gvtLabelGet(label, small, sizeof small), GVT_SUCCESS);
  printf("truncated to '%s'\n", small);
  int offset = -1;
  expect("label find", gvtLabelFind(label, "gvirtus", &offset), GVT_SUCCESS);
  printf("found at %d\n", offset);
  expect("label find nothing", gvtLabelFind(label, "cuda", &offset), GVT_ERROR_NOT_FOUND);
  expect("label create from null", gvtLabelCreate(&label, NULL), GVT_ERROR_INVALID_VALUE);

  /* The library's memory: allocated, written, read, freed. */
  void* memory = NULL;
  expect("malloc 4 x 16", gvtMalloc(&memory, 4, 16), GVT_SUCCESS);
  expect("memset", gvtMemset(memory, 0x5a, 64), GVT_SUCCESS);
  unsigned char bytes[64];
  memset(bytes, 0, sizeof bytes);
  expect("read", gvtMemRead(memory, bytes, sizeof bytes), GVT_SUCCESS);
  printf("bytes 0 and 63 are 0x%02x 0x%02x\n", bytes[0], bytes[63]);
  expect("free", gvtFree(memory), GVT_SUCCESS);

  /* Faults. A sticky one: every call that needs the library fails with it, the asynchronous
   * push too (through gvirtus: answered at once, without the backend), until gvtReset. */
  gvtBag_t spare = NULL;
  expect("spare bag create", gvtBagCreate(&spare, 8), GVT_SUCCESS);
  expect("inject a sticky fault", gvtInjectFault(GVT_FAULT_STICKY), GVT_ERROR_FAULTED);
  expect("push while faulted", gvtBagPush(spare, 1), GVT_ERROR_FAULTED);
  expect("sum while faulted", gvtBagSum(spare, &sum), GVT_ERROR_FAULTED);
  expect("version while faulted", gvtGetVersion(&version), GVT_SUCCESS);
  expect("push while faulted, after a call that succeeded", gvtBagPush(spare, 1),
         GVT_ERROR_FAULTED);
  expect("reset", gvtReset(), GVT_SUCCESS);
  expect("push after the reset", gvtBagPush(spare, 1), GVT_SUCCESS);
  /* A library that cannot be had: each call fails while it lasts, pushes too (through gvirtus:
   * sent and waited for), and a call that needs no library says nothing of it. */
  expect("inject unavailability", gvtInjectFault(GVT_FAULT_UNAVAILABLE), GVT_ERROR_UNAVAILABLE);
  expect("push while unavailable", gvtBagPush(spare, 2), GVT_ERROR_UNAVAILABLE);
  expect("version while unavailable", gvtGetVersion(&version), GVT_SUCCESS);
  expect("push still unavailable", gvtBagPush(spare, 2), GVT_ERROR_UNAVAILABLE);
  expect("reset", gvtReset(), GVT_SUCCESS);
  expect("push once available", gvtBagPush(spare, 3), GVT_SUCCESS);
  expect("sum of what the pushes added", gvtBagSum(spare, &sum), GVT_SUCCESS);
  printf("sum after the faults %lld\n", sum);
  expect("last error after all", gvtGetLastError(), GVT_ERROR_UNAVAILABLE);
  expect("spare bag destroy", gvtBagDestroy(spare), GVT_SUCCESS);

  expect("label destroy", gvtLabelDestroy(label), GVT_SUCCESS);
  expect("bag destroy", gvtBagDestroy(bag), GVT_SUCCESS);
  printf("%s\n", failures == 0 ? "all as expected" : "SOME UNEXPECTED");
  return failures == 0 ? 0 : 1;
}
