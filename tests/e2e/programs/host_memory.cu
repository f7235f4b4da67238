// Host memory: pinned allocations with every flag, registration of malloc'd memory (and its
// errors), pointer attributes, cudaMemcpyDefault in every direction, 2D copies between pitched
// device memory and host rows with larger pitches (every direction, sync and async), and invalid
// pitches: what behaves the same over every transport. Device pointers of host memory and kernels
// using it need a transport that shares memory: mapped_memory.cu.
#include <cstdlib>
#include <cstring>
#include <vector>

#include "check.h"

static unsigned char pattern_byte(size_t i, int seed) {
  return (unsigned char)((i * 131 + seed * 17 + (i >> 9)) & 0xff);
}
static void fill(void* p, size_t n, int seed) {
  unsigned char* bytes = (unsigned char*)p;
  for (size_t i = 0; i < n; ++i) bytes[i] = pattern_byte(i, seed);
}
static bool matches(const void* p, size_t n, int seed) {
  const unsigned char* bytes = (const unsigned char*)p;
  for (size_t i = 0; i < n; ++i)
    if (bytes[i] != pattern_byte(i, seed)) return false;
  return true;
}

// How a pointer in the attributes relates to the pointer asked about (never its value).
static const char* relation(const void* attribute, const void* input) {
  return attribute == nullptr ? "null" : attribute == input ? "input" : "other";
}
static void describe(const char* what, const void* p) {
  cudaPointerAttributes a;
  std::memset(&a, 0, sizeof a);
  char text[96];
  std::snprintf(text, sizeof text, "cudaPointerGetAttributes(%s)", what);
  // The device pointer of host memory is the GPU's view of client memory: only a transport that
  // shares memory has one (mapped_memory.cu); here only device memory's is shown.
  if (ok_impl(cudaPointerGetAttributes(&a, p), text))
    std::printf("  type %d device %d devicePointer %s hostPointer %s\n", (int)a.type, a.device,
                a.type == cudaMemoryTypeDevice ? relation(a.devicePointer, p) : "-",
                relation(a.hostPointer, p));
}

// Checks a 2D copy's destination: `height` rows of `width` bytes at `pitch`, row r equal to the
// source rows (pattern `seed` laid out at `source_pitch`), and the bytes between rows untouched.
static bool rows_match(const unsigned char* dst, size_t pitch, const unsigned char* src,
                       size_t source_pitch, size_t width, size_t height, unsigned char untouched) {
  for (size_t r = 0; r < height; ++r) {
    if (std::memcmp(dst + r * pitch, src + r * source_pitch, width) != 0) return false;
    if (r + 1 < height)
      for (size_t c = width; c < pitch; ++c)
        if (dst[r * pitch + c] != untouched) return false;
  }
  return true;
}

int main() {
  SHOW(cudaSetDeviceFlags(cudaDeviceMapHost));
  const size_t n = 1 << 20;
  void* dev = nullptr;
  const bool have_dev = OK(cudaMalloc(&dev, n));
  cudaStream_t stream = nullptr;
  SHOW(cudaStreamCreate(&stream));
  std::vector<unsigned char> back(n);

  std::printf("== pinned allocations\n");
  struct Kind {
    const char* name;
    int flags;  // -1: cudaMallocHost
  };
  const Kind kinds[] = {
      {"cudaMallocHost", -1},
      {"cudaHostAlloc(cudaHostAllocDefault)", cudaHostAllocDefault},
      {"cudaHostAlloc(cudaHostAllocPortable)", cudaHostAllocPortable},
      {"cudaHostAlloc(cudaHostAllocMapped)", cudaHostAllocMapped},
      {"cudaHostAlloc(cudaHostAllocWriteCombined)", cudaHostAllocWriteCombined},
      {"cudaHostAlloc(Portable | Mapped)", cudaHostAllocPortable | cudaHostAllocMapped},
  };
  int seed = 1;
  for (const Kind& kind : kinds) {
    void* h = nullptr;
    const cudaError_t rc =
        kind.flags < 0 ? cudaMallocHost(&h, n) : cudaHostAlloc(&h, n, (unsigned)kind.flags);
    if (!ok_impl(rc, kind.name)) {
      std::printf("  pointer: %s\n", h == nullptr ? "null" : "some");
      continue;
    }
    unsigned flags = 0;
    if (OK(cudaHostGetFlags(&flags, h)) && kind.flags > 0)
      EXPECT((flags & (unsigned)kind.flags) == (unsigned)kind.flags);
    fill(h, n, ++seed);
    if (have_dev && OK(cudaMemcpy(dev, h, n, cudaMemcpyHostToDevice)) &&
        OK(cudaMemcpy(back.data(), dev, n, cudaMemcpyDeviceToHost)))
      EXPECT(matches(back.data(), n, seed));
    std::memset(h, 0, n);
    if (have_dev && OK(cudaMemcpyAsync(h, dev, n, cudaMemcpyDeviceToHost, stream)) &&
        OK(cudaStreamSynchronize(stream)))
      EXPECT(matches(h, n, seed));
    SHOW(cudaFreeHost(h));
  }
  void* plain = std::malloc(4096);
  void* none = nullptr;
  SHOW(cudaHostAlloc(&none, 4096, 0x100));  // no such flag
  unsigned flags = 0;
  SHOW(cudaHostGetFlags(&flags, plain));
  SHOW(cudaFreeHost(nullptr));
  SHOW(cudaGetLastError());

  std::printf("== registered memory\n");
  unsigned char* registered = (unsigned char*)std::malloc(n);
  fill(registered, n, 50);
  if (OK(cudaHostRegister(registered, n, cudaHostRegisterDefault))) {
    SHOW(cudaHostRegister(registered, n, cudaHostRegisterDefault));            // already registered
    SHOW(cudaHostRegister(registered + 8192, 4096, cudaHostRegisterDefault));  // overlaps
    // Page-locked memory is copied truly asynchronously: wait before overwriting the source (a
    // real GPU read the zeros otherwise).
    if (have_dev && OK(cudaMemcpyAsync(dev, registered, n, cudaMemcpyHostToDevice, stream)) &&
        OK(cudaStreamSynchronize(stream))) {
      std::memset(registered, 0, n);
      if (OK(cudaMemcpyAsync(registered, dev, n, cudaMemcpyDeviceToHost, stream)) &&
          OK(cudaStreamSynchronize(stream)))
        EXPECT(matches(registered, n, 50));
      else
        fill(registered, n, 50);
    }
    describe("registered host", registered);
    describe("registered host + 100", registered + 100);
    SHOW(cudaHostUnregister(registered));
    SHOW(cudaHostUnregister(registered));  // no longer registered
  } else {
    SHOW(cudaHostUnregister(registered));
  }
  SHOW(cudaHostUnregister(plain));  // never registered
  SHOW(cudaHostRegister(nullptr, 4096, cudaHostRegisterDefault));
  SHOW(cudaHostRegister(plain, 0, cudaHostRegisterDefault));
  SHOW(cudaGetLastError());

  std::printf("== pointer attributes\n");
  if (have_dev) {
    describe("device", dev);
    describe("device + 100", (char*)dev + 100);
  }
  void* pinned = nullptr;
  const bool have_pinned = OK(cudaMallocHost(&pinned, 4096));
  if (have_pinned) describe("cudaMallocHost", pinned);
  void* mapped = nullptr;
  const bool have_mapped = OK(cudaHostAlloc(&mapped, 4096, cudaHostAllocMapped));
  if (have_mapped) describe("cudaHostAllocMapped", mapped);
  describe("malloc", plain);
  int on_stack = 0;
  describe("stack", &on_stack);
  describe("nullptr", nullptr);
  SHOW(cudaGetLastError());

  std::printf("== cudaMemcpyDefault in every direction\n");
  {
    std::vector<unsigned char> a(n), b(n, 0), c(n, 0);
    fill(a.data(), n, 60);
    void* dev2 = nullptr;
    if (have_dev && OK(cudaMalloc(&dev2, n))) {
      if (OK(cudaMemcpy(dev, a.data(), n, cudaMemcpyDefault)) &&
          OK(cudaMemcpy(dev2, dev, n, cudaMemcpyDefault)) &&
          OK(cudaMemcpy(b.data(), dev2, n, cudaMemcpyDefault)))
        EXPECT(matches(b.data(), n, 60));
      // Async, on a stream, with offsets.
      std::vector<unsigned char> d(n / 2, 0);
      if (OK(cudaMemsetAsync(dev2, 0, n, stream)) &&
          OK(cudaMemcpyAsync((char*)dev2 + 1000, (char*)dev + 1000, n / 2, cudaMemcpyDefault,
                             stream)) &&
          OK(cudaMemcpyAsync(d.data(), (char*)dev2 + 1000, n / 2, cudaMemcpyDefault, stream)) &&
          OK(cudaStreamSynchronize(stream)))
        EXPECT(std::memcmp(d.data(), a.data() + 1000, n / 2) == 0);
      SHOW(cudaFree(dev2));
    } else {
      SHOW(cudaMemcpy(b.data(), dev, 64, cudaMemcpyDefault));
    }
    if (OK(cudaMemcpy(c.data(), a.data(), n, cudaMemcpyDefault))) EXPECT(c == a);
    if (have_pinned) {
      fill(pinned, 4096, 61);
      std::vector<unsigned char> e(4096, 0);
      if (OK(cudaMemcpy(e.data(), pinned, 4096, cudaMemcpyDefault)))
        EXPECT(matches(e.data(), 4096, 61));
      if (have_dev && OK(cudaMemcpyAsync(dev, pinned, 4096, cudaMemcpyDefault, stream)) &&
          OK(cudaMemcpyAsync(e.data(), dev, 4096, cudaMemcpyDefault, stream)) &&
          OK(cudaStreamSynchronize(stream)))
        EXPECT(matches(e.data(), 4096, 61));
    }
  }

  std::printf("== 2D copies\n");
  {
    const size_t width = 300, height = 17, src_pitch = 320, dst_pitch = 400, h2h_pitch = 310;
    std::vector<unsigned char> src(src_pitch * height), dst(dst_pitch * height),
        h2h(h2h_pitch * height);
    fill(src.data(), src.size(), 70);
    void *p1 = nullptr, *p2 = nullptr;
    size_t pitch1 = 0, pitch2 = 0;
    const bool have_p1 = OK(cudaMallocPitch(&p1, &pitch1, width, height));
    const bool have_p2 = OK(cudaMallocPitch(&p2, &pitch2, width, height));
    if (have_p1 && have_p2) {
      EXPECT(pitch1 >= width && pitch2 == pitch1);
      std::memset(dst.data(), 0xee, dst.size());
      if (OK(cudaMemcpy2D(p1, pitch1, src.data(), src_pitch, width, height,
                          cudaMemcpyHostToDevice)) &&
          OK(cudaMemcpy2D(p2, pitch2, p1, pitch1, width, height, cudaMemcpyDeviceToDevice)) &&
          OK(cudaMemcpy2D(dst.data(), dst_pitch, p2, pitch2, width, height,
                          cudaMemcpyDeviceToHost)))
        EXPECT(rows_match(dst.data(), dst_pitch, src.data(), src_pitch, width, height, 0xee));
      // A sub-rectangle: 100 x 5 bytes from source (row 3, column 7) to device (row 2, column 10),
      // then the whole pitched allocation back.
      std::vector<unsigned char> whole(pitch1 * height, 0);
      if (OK(cudaMemcpy2D((char*)p1 + 2 * pitch1 + 10, pitch1, src.data() + 3 * src_pitch + 7,
                          src_pitch, 100, 5, cudaMemcpyHostToDevice)) &&
          OK(cudaMemcpy(whole.data(), p1, pitch1 * height, cudaMemcpyDeviceToHost))) {
        bool all = true;
        for (size_t r = 0; r < height; ++r)
          for (size_t c = 0; c < width; ++c) {
            const bool inside = r >= 2 && r < 7 && c >= 10 && c < 110;
            const unsigned char want =
                inside ? src[(r - 2 + 3) * src_pitch + (c - 10 + 7)] : src[r * src_pitch + c];
            all = all && whole[r * pitch1 + c] == want;
          }
        EXPECT(all);
      }
    } else {
      SHOW(cudaMemcpy2D(p1, 512, src.data(), src_pitch, width, height, cudaMemcpyHostToDevice));
      SHOW(cudaMemcpy2D(dst.data(), dst_pitch, p2, 512, width, height, cudaMemcpyDeviceToHost));
    }
    std::memset(h2h.data(), 0xee, h2h.size());
    if (OK(cudaMemcpy2D(h2h.data(), h2h_pitch, src.data(), src_pitch, width, height,
                        cudaMemcpyHostToHost)))
      EXPECT(rows_match(h2h.data(), h2h_pitch, src.data(), src_pitch, width, height, 0xee));

    std::printf("-- async, on a stream\n");
    fill(src.data(), src.size(), 71);
    unsigned char* pinned_dst = nullptr;
    const bool have_pinned_dst = OK(cudaMallocHost((void**)&pinned_dst, dst_pitch * height));
    if (have_p1 && have_p2 && have_pinned_dst) {
      std::memset(pinned_dst, 0xdd, dst_pitch * height);
      if (OK(cudaMemset2DAsync(p1, pitch1, 0, width, height, stream)) &&
          OK(cudaMemcpy2DAsync(p1, pitch1, src.data(), src_pitch, width, height,
                               cudaMemcpyHostToDevice, stream)) &&
          OK(cudaMemcpy2DAsync(p2, pitch2, p1, pitch1, width, height, cudaMemcpyDefault, stream)) &&
          OK(cudaMemcpy2DAsync(pinned_dst, dst_pitch, p2, pitch2, width, height,
                               cudaMemcpyDeviceToHost, stream)) &&
          OK(cudaStreamSynchronize(stream)))
        EXPECT(rows_match(pinned_dst, dst_pitch, src.data(), src_pitch, width, height, 0xdd));
    }
    std::memset(h2h.data(), 0xcc, h2h.size());
    if (OK(cudaMemcpy2DAsync(h2h.data(), h2h_pitch, src.data(), src_pitch, width, height,
                             cudaMemcpyDefault, stream)) &&
        OK(cudaStreamSynchronize(stream)))
      EXPECT(rows_match(h2h.data(), h2h_pitch, src.data(), src_pitch, width, height, 0xcc));

    std::printf("-- invalid pitches, empty copies\n");
    SHOW(cudaMemcpy2D(p1, pitch1, src.data(), 100, width, height, cudaMemcpyHostToDevice));
    SHOW(cudaGetLastError());
    SHOW(cudaMemcpy2D(dst.data(), 200, p1, pitch1, width, height, cudaMemcpyDeviceToHost));
    SHOW(cudaMemcpy2D(p2, 64, p1, pitch1, width, height, cudaMemcpyDeviceToDevice));
    SHOW(cudaMemcpy2DAsync(p1, pitch1, src.data(), 299, width, height, cudaMemcpyHostToDevice,
                           stream));
    SHOW(cudaMemcpy2DAsync(dst.data(), 100, p1, pitch1, width, height, cudaMemcpyDeviceToHost,
                           stream));
    SHOW(cudaMemcpy2D(dst.data(), dst_pitch, p1, pitch1, 0, height, cudaMemcpyDeviceToHost));
    SHOW(cudaMemcpy2D(dst.data(), dst_pitch, p1, pitch1, width, 0, cudaMemcpyDeviceToHost));
    SHOW(cudaStreamSynchronize(stream));
    SHOW(cudaGetLastError());
    if (have_pinned_dst) SHOW(cudaFreeHost(pinned_dst));
    if (have_p1) SHOW(cudaFree(p1));
    if (have_p2) SHOW(cudaFree(p2));
  }

  void* view = nullptr;
  SHOW(cudaHostGetDevicePointer(&view, plain, 0));  // not pinned
  std::printf("device pointer of malloc'd memory: %s\n", view == nullptr ? "null" : "some");
  if (have_mapped) SHOW(cudaHostGetDevicePointer(&view, mapped, 1));  // flags must be 0
  SHOW(cudaGetLastError());

  if (have_pinned) SHOW(cudaFreeHost(pinned));
  if (have_mapped) SHOW(cudaFreeHost(mapped));
  SHOW(cudaFreeHost(plain));  // not pinned
  SHOW(cudaGetLastError());
  std::free(plain);
  std::free(registered);
  if (have_dev) SHOW(cudaFree(dev));
  SHOW(cudaStreamDestroy(stream));
  SHOW(cudaDeviceSynchronize());
  SHOW(cudaGetLastError());
  return 0;
}
