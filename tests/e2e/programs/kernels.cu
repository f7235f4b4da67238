// Kernel launches, with <<<>>> and with cudaLaunchKernel, on the default stream, created streams
// and the per-thread stream: parameters of every width, structs by value with padding, packing
// and over-alignment, vector types, a 1 KiB struct, twenty parameters, none at all, a template
// and an extern "C" kernel, static and dynamic shared memory (above 48 KiB after
// cudaFuncSetAttribute). Each kernel writes what it received into device memory; the copy back
// is compared with what the CPU expects. Then function attributes, cache configuration,
// occupancy, and invalid launch configurations with what the last-error calls report afterwards.
#include <cstring>
#include <vector>

#include "check.h"

// ---- parameter types ---------------------------------------------------------------------

struct Scalars {
  char c;
  double d;
  short s;
  long long ll;
  signed char c2;
  float f;
  int i;
  unsigned char uc;
  unsigned short us;
  unsigned u;
  unsigned long long ull;
};

struct Odd {  // 24 bytes: padding after c and after s
  char c;
  double d;
  short s;
};
struct Mixed {  // 16 bytes
  char a;
  int b;
  char c[3];
  short d;
};
struct __attribute__((packed)) Packed {  // 7 bytes, byte-aligned
  char a;
  int b;
  short c;
};
struct alignas(16) Wide {  // 16 bytes, 16-aligned
  float x;
  char tag;
};
struct StructsOut {
  char pre;
  Odd o;
  short mid;
  Mixed m;
  char pre2;
  Packed p;
  char pre3;
  Wide w;
  int post;
};

struct Vecs {
  char3 c3;
  float4 f4;
  uchar2 u2;
  double2 d2;
  short3 s3;
  int2 i2;
};

struct Big {  // 1 KiB by value
  int v[256];
};

// ---- kernels -------------------------------------------------------------------------------

__global__ void k_scalars(char c, double d, short s, long long ll, signed char c2, float f, int i,
                          unsigned char uc, unsigned short us, unsigned u, unsigned long long ull,
                          Scalars* out) {
  out->c = c;
  out->d = d;
  out->s = s;
  out->ll = ll;
  out->c2 = c2;
  out->f = f;
  out->i = i;
  out->uc = uc;
  out->us = us;
  out->u = u;
  out->ull = ull;
}

__global__ void k_structs(char pre, Odd o, short mid, Mixed m, char pre2, Packed p, char pre3,
                          Wide w, int post, StructsOut* out) {
  out->pre = pre;
  out->o = o;
  out->mid = mid;
  out->m = m;
  out->pre2 = pre2;
  out->p = p;
  out->pre3 = pre3;
  out->w = w;
  out->post = post;
}

__global__ void k_vectors(char3 c3, float4 f4, uchar2 u2, double2 d2, short3 s3, int2 i2,
                          Vecs* out) {
  out->c3 = c3;
  out->f4 = f4;
  out->u2 = u2;
  out->d2 = d2;
  out->s3 = s3;
  out->i2 = i2;
}

__global__ void k_big(char pre, Big b, int post, int* out) {
  out[threadIdx.x] = b.v[threadIdx.x];
  if (threadIdx.x == 0) {
    out[256] = pre;
    out[257] = post;
  }
}

__global__ void k_many(int p0, double p1, char p2, float p3, long long p4, short p5, int p6,
                       double p7, unsigned char p8, float p9, int p10, long long p11, char p12,
                       double p13, short p14, float p15, int p16, unsigned p17, double p18,
                       double* out) {
  out[0] = p0;
  out[1] = p1;
  out[2] = p2;
  out[3] = p3;
  out[4] = (double)p4;
  out[5] = p5;
  out[6] = p6;
  out[7] = p7;
  out[8] = p8;
  out[9] = p9;
  out[10] = p10;
  out[11] = (double)p11;
  out[12] = p12;
  out[13] = p13;
  out[14] = p14;
  out[15] = p15;
  out[16] = p16;
  out[17] = p17;
  out[18] = p18;
}

__device__ unsigned g_zero_hits;  // zero when the module loads
__global__ void k_zero() {
  atomicAdd(&g_zero_hits, 1u);
}
__global__ void k_read_zero(unsigned* out) {
  *out = g_zero_hits;
}

template <typename T, int N>
__global__ void k_scale(T* data, T factor, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = data[i] * factor + T(N);
}

extern "C" __global__ void gvirtus_e2e_c_kernel(int* out, int a, int b) {
  out[threadIdx.x] = a * (int)threadIdx.x + b;
}

__global__ void k_static_shared(int* out) {
  __shared__ int tile[256];
  tile[threadIdx.x] = (int)threadIdx.x * 2 + 1;
  __syncthreads();
  out[threadIdx.x] = tile[255 - threadIdx.x];
}

// Reverses data[0..n) through dynamic shared memory (one block).
__global__ void k_reverse(int* data, int n) {
  extern __shared__ int buf[];
  for (int i = threadIdx.x; i < n; i += blockDim.x) buf[i] = data[i];
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x) data[i] = buf[n - 1 - i];
}
// The same, for the launch above 48 KiB (its own function, so that the attribute set on it
// affects only it).
__global__ void k_reverse_big(int* data, int n) {
  extern __shared__ int buf[];
  for (int i = threadIdx.x; i < n; i += blockDim.x) buf[i] = data[i];
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x) data[i] = buf[n - 1 - i];
}

static int host_function(int x) {
  return x + 1;
}

// ---- launching -------------------------------------------------------------------------------

// nvcc's default dialect is C++17: no std::type_identity.
template <typename T>
struct same_type {
  using type = T;
};

// Launches `kernel` either with <<<>>> (the host stub nvcc generates) or with cudaLaunchKernel
// and an argument array, and prints the result under `name`.
template <typename... Args>
bool launch(bool via_api, const char* name, void (*kernel)(Args...), dim3 grid, dim3 block,
            size_t shared, cudaStream_t stream, typename same_type<Args>::type... args) {
  cudaError_t rc;
  if (via_api) {
    void* pointers[sizeof...(Args) + 1] = {(void*)&args..., nullptr};
    rc = cudaLaunchKernel((const void*)kernel, grid, block, pointers, shared, stream);
  } else {
    kernel<<<grid, block, shared, stream>>>(args...);
    rc = cudaGetLastError();
  }
  char text[128];
  std::snprintf(text, sizeof text, "launch %s %s", name, via_api ? "(cudaLaunchKernel)" : "<<<>>>");
  return ok_impl(rc, text);
}

struct Context {
  bool via_api;
  cudaStream_t stream;
  void* out;  // device scratch, kScratch bytes
};
constexpr size_t kScratch = 1 << 16;

bool clear(const Context& c, size_t bytes) {
  return OK(cudaMemsetAsync(c.out, 0, bytes, c.stream));
}
bool fetch(const Context& c, void* host, size_t bytes) {
  return OK(cudaStreamSynchronize(c.stream)) &&
         OK(cudaMemcpy(host, c.out, bytes, cudaMemcpyDeviceToHost));
}

void test_scalars(const Context& c) {
  Scalars want{};
  want.c = 'x';
  want.d = -6.02214076e23;
  want.s = -12345;
  want.ll = -0x123456789abcdefLL;
  want.c2 = -3;
  want.f = 3.25f;
  want.i = -2000000000;
  want.uc = 0xa5;
  want.us = 0xbeef;
  want.u = 0xdeadbeefu;
  want.ull = 0xfedcba9876543210ull;
  clear(c, sizeof(Scalars));
  if (launch(c.via_api, "k_scalars", k_scalars, 1, 1, 0, c.stream, want.c, want.d, want.s, want.ll,
             want.c2, want.f, want.i, want.uc, want.us, want.u, want.ull, (Scalars*)c.out)) {
    Scalars got;
    std::memset(&got, 0x77, sizeof got);
    if (fetch(c, &got, sizeof got)) {
      EXPECT(got.c == want.c && got.c2 == want.c2 && got.uc == want.uc);
      EXPECT(got.s == want.s && got.us == want.us);
      EXPECT(got.i == want.i && got.u == want.u);
      EXPECT(got.ll == want.ll && got.ull == want.ull);
      EXPECT(got.f == want.f && got.d == want.d);
    }
  }
}

void test_structs(const Context& c) {
  StructsOut want;
  std::memset(&want, 0, sizeof want);
  want.pre = 'p';
  want.o.c = 'o';
  want.o.d = 1.0 / 3.0;
  want.o.s = -31000;
  want.mid = 0x1234;
  want.m.a = 'm';
  want.m.b = -77777777;
  want.m.c[0] = 1;
  want.m.c[1] = 2;
  want.m.c[2] = 3;
  want.m.d = -2;
  want.pre2 = 'q';
  want.p.a = 'k';
  want.p.b = 0x0badf00d;
  want.p.c = -4321;
  want.pre3 = 'r';
  want.w.x = -0.125f;
  want.w.tag = 'w';
  want.post = 987654321;
  clear(c, sizeof(StructsOut));
  if (launch(c.via_api, "k_structs", k_structs, 1, 1, 0, c.stream, want.pre, want.o, want.mid,
             want.m, want.pre2, want.p, want.pre3, want.w, want.post, (StructsOut*)c.out)) {
    StructsOut got;
    std::memset(&got, 0x77, sizeof got);
    if (fetch(c, &got, sizeof got)) {
      EXPECT(got.pre == want.pre && got.mid == want.mid && got.post == want.post);
      EXPECT(got.o.c == want.o.c && got.o.d == want.o.d && got.o.s == want.o.s);
      EXPECT(got.m.a == want.m.a && got.m.b == want.m.b && got.m.d == want.m.d);
      EXPECT(std::memcmp(got.m.c, want.m.c, 3) == 0);
      const char got_pa = got.p.a;
      const int got_pb = got.p.b;
      const short got_pc = got.p.c;
      EXPECT(got_pa == 'k' && got_pb == 0x0badf00d && got_pc == -4321);
      EXPECT(got.pre2 == want.pre2 && got.pre3 == want.pre3);
      EXPECT(got.w.x == want.w.x && got.w.tag == want.w.tag);
    }
  }
}

void test_vectors(const Context& c) {
  Vecs want;
  std::memset(&want, 0, sizeof want);
  want.c3 = make_char3(-1, 2, -3);
  want.f4 = make_float4(1.5f, -2.25f, 1e30f, -0.0f);
  want.u2 = make_uchar2(200, 7);
  want.d2 = make_double2(3.141592653589793, -2.718281828459045e-200);
  want.s3 = make_short3(-32768, 32767, 12);
  want.i2 = make_int2(-123456789, 2147483647);
  clear(c, sizeof(Vecs));
  if (launch(c.via_api, "k_vectors", k_vectors, 1, 1, 0, c.stream, want.c3, want.f4, want.u2,
             want.d2, want.s3, want.i2, (Vecs*)c.out)) {
    Vecs got;
    std::memset(&got, 0x77, sizeof got);
    if (fetch(c, &got, sizeof got)) {
      EXPECT(got.c3.x == -1 && got.c3.y == 2 && got.c3.z == -3);
      EXPECT(std::memcmp(&got.f4, &want.f4, sizeof(float4)) == 0);
      EXPECT(got.u2.x == 200 && got.u2.y == 7);
      EXPECT(got.d2.x == want.d2.x && got.d2.y == want.d2.y);
      EXPECT(got.s3.x == -32768 && got.s3.y == 32767 && got.s3.z == 12);
      EXPECT(got.i2.x == -123456789 && got.i2.y == 2147483647);
    }
  }
}

void test_big(const Context& c) {
  Big b;
  for (int i = 0; i < 256; ++i) b.v[i] = i * 1000003 - 500000;
  clear(c, 258 * sizeof(int));
  if (launch(c.via_api, "k_big", k_big, 1, 256, 0, c.stream, (char)'<', b, -99, (int*)c.out)) {
    std::vector<int> got(258, 0x77777777);
    if (fetch(c, got.data(), 258 * sizeof(int))) {
      EXPECT(std::memcmp(got.data(), b.v, sizeof b.v) == 0);
      EXPECT(got[256] == '<' && got[257] == -99);
    }
  }
}

void test_many(const Context& c) {
  const double want[19] = {-5,     0.5,   'a',  1.75f,       -(1ll << 52), -300, 6,
                           -7.125, 255,   0.1f, -10,         1ll << 40,    'z',  13e-3,
                           14,     15.5f, -16,  4000000000u, 1e300};
  clear(c, 19 * sizeof(double));
  if (launch(c.via_api, "k_many", k_many, 1, 1, 0, c.stream, -5, 0.5, (char)'a', 1.75f,
             -(1ll << 52), (short)-300, 6, -7.125, (unsigned char)255, 0.1f, -10, 1ll << 40,
             (char)'z', 13e-3, (short)14, 15.5f, -16, 4000000000u, 1e300, (double*)c.out)) {
    double got[19];
    for (double& g : got) g = 12345;
    if (fetch(c, got, sizeof got)) {
      int same = 0;
      for (int i = 0; i < 19; ++i) same += got[i] == want[i];
      std::printf("k_many: %d of 19 parameters as sent\n", same);
      EXPECT(same == 19);
    }
  }
}

void test_zero(const Context& c, unsigned& expected_hits) {
  if (launch(c.via_api, "k_zero", k_zero, 4, 64, 0, c.stream)) expected_hits += 256;
  clear(c, sizeof(unsigned));
  if (launch(c.via_api, "k_read_zero", k_read_zero, 1, 1, 0, c.stream, (unsigned*)c.out)) {
    unsigned got = 0;
    if (fetch(c, &got, sizeof got)) EXPECT(got == expected_hits);
  }
}

void test_templates(const Context& c) {
  const int n = 1000;
  std::vector<int> ints(n), ints_back(n);
  for (int i = 0; i < n; ++i) ints[i] = i - 300;
  if (OK(cudaMemcpyAsync(c.out, ints.data(), n * sizeof(int), cudaMemcpyHostToDevice, c.stream)) &&
      launch(c.via_api, "k_scale<int, 3>", k_scale<int, 3>, (n + 127) / 128, 128, 0, c.stream,
             (int*)c.out, -7, n) &&
      fetch(c, ints_back.data(), n * sizeof(int))) {
    bool all = true;
    for (int i = 0; i < n; ++i) all = all && ints_back[i] == ints[i] * -7 + 3;
    EXPECT(all);
  }
  std::vector<double> doubles(n), doubles_back(n);
  for (int i = 0; i < n; ++i) doubles[i] = i * 0.25;
  if (OK(cudaMemcpyAsync(c.out, doubles.data(), n * sizeof(double), cudaMemcpyHostToDevice,
                         c.stream)) &&
      launch(c.via_api, "k_scale<double, 2>", k_scale<double, 2>, (n + 255) / 256, 256, 0, c.stream,
             (double*)c.out, 4.0, n) &&
      fetch(c, doubles_back.data(), n * sizeof(double))) {
    bool all = true;
    for (int i = 0; i < n; ++i) all = all && doubles_back[i] == doubles[i] * 4.0 + 2.0;
    EXPECT(all);
  }
}

void test_extern_c(const Context& c) {
  clear(c, 64 * sizeof(int));
  if (launch(c.via_api, "gvirtus_e2e_c_kernel", gvirtus_e2e_c_kernel, 1, 64, 0, c.stream,
             (int*)c.out, 5, -11)) {
    std::vector<int> got(64, -1);
    if (fetch(c, got.data(), 64 * sizeof(int))) {
      bool all = true;
      for (int i = 0; i < 64; ++i) all = all && got[i] == 5 * i - 11;
      EXPECT(all);
    }
  }
}

void test_shared(const Context& c) {
  clear(c, 256 * sizeof(int));
  if (launch(c.via_api, "k_static_shared", k_static_shared, 1, 256, 0, c.stream, (int*)c.out)) {
    std::vector<int> got(256, -1);
    if (fetch(c, got.data(), 256 * sizeof(int))) {
      bool all = true;
      for (int i = 0; i < 256; ++i) all = all && got[i] == (255 - i) * 2 + 1;
      EXPECT(all);
    }
  }
  const int n = 1000;  // 4000 bytes of dynamic shared memory
  std::vector<int> data(n), back(n, -1);
  for (int i = 0; i < n; ++i) data[i] = i * i;
  if (OK(cudaMemcpyAsync(c.out, data.data(), n * sizeof(int), cudaMemcpyHostToDevice, c.stream)) &&
      launch(c.via_api, "k_reverse", k_reverse, 1, 256, n * sizeof(int), c.stream, (int*)c.out,
             n) &&
      fetch(c, back.data(), n * sizeof(int))) {
    bool all = true;
    for (int i = 0; i < n; ++i) all = all && back[i] == data[n - 1 - i];
    EXPECT(all);
  }
}

void run_all(const Context& c, unsigned& expected_hits) {
  test_scalars(c);
  test_structs(c);
  test_vectors(c);
  test_big(c);
  test_many(c);
  test_zero(c, expected_hits);
  test_templates(c);
  test_extern_c(c);
  test_shared(c);
}

int main() {
  std::printf("sizes: Scalars %zu Odd %zu Mixed %zu Packed %zu Wide %zu StructsOut %zu Vecs %zu\n",
              sizeof(Scalars), sizeof(Odd), sizeof(Mixed), sizeof(Packed), sizeof(Wide),
              sizeof(StructsOut), sizeof(Vecs));
  void* out = nullptr;
  const bool have_out = OK(cudaMalloc(&out, kScratch));
  if (have_out) SHOW(cudaMemset(out, 0, kScratch));
  cudaStream_t blocking = nullptr, nonblocking = nullptr;
  const bool have_blocking = OK(cudaStreamCreate(&blocking));
  const bool have_nonblocking = OK(cudaStreamCreateWithFlags(&nonblocking, cudaStreamNonBlocking));
  unsigned expected_hits = 0;

  struct Variant {
    const char* name;
    bool via_api;
    cudaStream_t stream;
  };
  const Variant variants[] = {
      {"<<<>>> on the default stream", false, nullptr},
      {"cudaLaunchKernel on the default stream", true, nullptr},
      {"<<<>>> on a created stream", false, blocking},
      {"cudaLaunchKernel on a created non-blocking stream", true, nonblocking},
      {"<<<>>> on cudaStreamPerThread", false, cudaStreamPerThread},
      {"cudaLaunchKernel on cudaStreamLegacy", true, cudaStreamLegacy},
  };
  for (const Variant& v : variants) {
    std::printf("== %s\n", v.name);
    run_all(Context{v.via_api, v.stream, out}, expected_hits);
  }

  std::printf("== function attributes\n");
  cudaFuncAttributes attr;
  std::memset(&attr, 0, sizeof attr);
  if (OK(cudaFuncGetAttributes(&attr, k_static_shared))) {
    EXPECT(attr.maxThreadsPerBlock > 0);
    EXPECT(attr.binaryVersion > 0 && attr.ptxVersion > 0);
    EXPECT(attr.sharedSizeBytes >= 1024);
    std::printf("k_static_shared sharedSizeBytes %zu\n", attr.sharedSizeBytes);
  }
  std::memset(&attr, 0, sizeof attr);
  if (OK(cudaFuncGetAttributes(&attr, k_big))) {
    EXPECT(attr.maxThreadsPerBlock >= 256);
    EXPECT(attr.sharedSizeBytes == 0);
  }
  if (OK(cudaFuncGetAttributes(&attr, gvirtus_e2e_c_kernel))) EXPECT(attr.maxThreadsPerBlock > 0);
  if (OK(cudaFuncGetAttributes(&attr, k_scale<double, 2>))) EXPECT(attr.maxThreadsPerBlock > 0);
  SHOW(cudaFuncGetAttributes(&attr, (const void*)host_function));
  SHOW(cudaGetLastError());
  const char* name = nullptr;
  if (OK(cudaFuncGetName(&name, (const void*)k_big))) std::printf("k_big is %s\n", name);
  SHOW(cudaFuncGetName(&name, (const void*)host_function));
  SHOW(cudaGetLastError());
  SHOW(cudaFuncSetCacheConfig(k_static_shared, cudaFuncCachePreferShared));
  SHOW(cudaFuncSetCacheConfig(k_reverse, cudaFuncCachePreferL1));
  SHOW(cudaFuncSetAttribute(k_static_shared, cudaFuncAttributePreferredSharedMemoryCarveout, 50));
  SHOW(cudaFuncSetCacheConfig((const void*)host_function, cudaFuncCachePreferShared));
  SHOW(cudaGetLastError());
  // Deprecated since CUDA 12.4, and still answered.
  SHOW(cudaFuncSetSharedMemConfig(k_static_shared, cudaSharedMemBankSizeFourByte));
  SHOW(cudaFuncSetSharedMemConfig((const void*)host_function, cudaSharedMemBankSizeFourByte));
  SHOW(cudaGetLastError());

  std::printf("== occupancy\n");
  size_t available = 0;
  if (OK(cudaOccupancyAvailableDynamicSMemPerBlock(&available, k_reverse, 1, 256))) {
    EXPECT(available > 0);
  }
  int blocks = -1;
  if (OK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, k_reverse, 256, 4000)))
    std::printf("active blocks per multiprocessor positive: %s\n", blocks > 0 ? "yes" : "no");
  blocks = -1;
  if (OK(cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&blocks, k_scale<int, 3>, 128, 0,
                                                                cudaOccupancyDefault)))
    EXPECT(blocks > 0);
  int min_grid = -1, block_size = -1;
  if (OK(cudaOccupancyMaxPotentialBlockSize(&min_grid, &block_size, k_scale<int, 3>)))
    EXPECT(min_grid > 0 && block_size > 0 && block_size <= 1024);
  SHOW(cudaGetLastError());

  std::printf("== more than 48 KiB of dynamic shared memory\n");
  const int big_n = 15 * 1024;  // 60 KiB
  const size_t big_bytes = big_n * sizeof(int);
  std::vector<int> big_data(big_n), big_back(big_n, -1);
  for (int i = 0; i < big_n; ++i) big_data[i] = i * 3 - 7;
  // Without the attribute, the launch is refused (not a sticky error).
  k_reverse_big<<<1, 1024, big_bytes>>>((int*)out, big_n);
  SHOW(cudaPeekAtLastError());
  SHOW(cudaGetLastError());
  SHOW(cudaGetLastError());
  SHOW(cudaFuncSetAttribute(k_reverse_big, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            (int)big_bytes));
  std::memset(&attr, 0, sizeof attr);
  if (OK(cudaFuncGetAttributes(&attr, k_reverse_big)))
    EXPECT(attr.maxDynamicSharedSizeBytes == (int)big_bytes);
  if (OK(cudaMemcpy(out, big_data.data(), big_bytes, cudaMemcpyHostToDevice))) {
    k_reverse_big<<<1, 1024, big_bytes>>>((int*)out, big_n);
    if (ok_impl(cudaGetLastError(), "launch k_reverse_big 60 KiB <<<>>>") &&
        OK(cudaDeviceSynchronize()) &&
        OK(cudaMemcpy(big_back.data(), out, big_bytes, cudaMemcpyDeviceToHost))) {
      bool all = true;
      for (int i = 0; i < big_n; ++i) all = all && big_back[i] == big_data[big_n - 1 - i];
      EXPECT(all);
    }
  } else {
    k_reverse_big<<<1, 1024, big_bytes>>>((int*)out, big_n);
    SHOW(cudaGetLastError());
  }

  // A kernel's function in the current context (the driver's CUfunction).
  cudaFunction_t function = nullptr;
  if (OK(cudaGetFuncBySymbol(&function, (const void*)k_zero))) EXPECT(function != nullptr);
  SHOW(cudaGetFuncBySymbol(&function, (const void*)&expected_hits));  // no kernel
  SHOW(cudaGetLastError());

  std::printf("== invalid launch configurations\n");
  k_zero<<<1, 2048>>>();  // more threads than a block may have
  SHOW(cudaPeekAtLastError());
  SHOW(cudaPeekAtLastError());
  SHOW(cudaGetLastError());
  SHOW(cudaGetLastError());
  k_zero<<<0, 32>>>();  // empty grid
  SHOW(cudaGetLastError());
  k_zero<<<1, dim3(1, 1, 65)>>>();  // block z above 64
  SHOW(cudaGetLastError());
  k_zero<<<dim3(1, 70000), 1>>>();  // grid y above 65535
  SHOW(cudaGetLastError());
  SHOW(cudaLaunchKernel((const void*)k_zero, dim3(1), dim3(2048), nullptr, 0, nullptr));
  SHOW(cudaGetLastError());
  SHOW(cudaGetLastError());
  SHOW(cudaLaunchKernel((const void*)host_function, dim3(1), dim3(1), nullptr, 0, nullptr));
  SHOW(cudaGetLastError());
  // The errors above were not sticky: a valid launch afterwards works.
  if (have_out) {
    Context c{false, nullptr, out};
    test_extern_c(c);
    unsigned got = 0;
    if (launch(false, "k_read_zero", k_read_zero, 1, 1, 0, nullptr, (unsigned*)out) &&
        OK(cudaMemcpy(&got, out, sizeof got, cudaMemcpyDeviceToHost)))
      EXPECT(got == expected_hits);  // none of the refused k_zero launches ran
  } else {
    k_zero<<<1, 32>>>();
    SHOW(cudaGetLastError());
  }

  SHOW(cudaDeviceSynchronize());
  if (have_blocking) SHOW(cudaStreamDestroy(blocking));
  if (have_nonblocking) SHOW(cudaStreamDestroy(nonblocking));
  if (have_out) SHOW(cudaFree(out));
  SHOW(cudaGetLastError());
  return 0;
}
