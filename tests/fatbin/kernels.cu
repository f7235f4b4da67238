// Kernels with varied signatures, compiled by nvcc into several fatbin variants; the fatbin tests
// compare the parser's layouts for them with cuobjdump's.
#include <cuda_fp16.h>

struct Odd {  // padding after c and after s: size 24, align 8
  char c;
  double d;
  short s;
};
struct __align__(16) Aligned16 {
  int a;
  char b;
};
struct Packed3 {
  char a, b, c;
};
struct Big {  // over 4 KiB: the pre-12.1 parameter limit
  char bytes[5000];
};
struct Huge {  // sizes above 16383 need EIATTR_KPARAM_INFO_V2
  int words[7000];
};

__global__ void no_params() {}

__global__ void scalars(char a, signed char b, unsigned char c, short d, unsigned short e, int f,
                        unsigned g, long long h, unsigned long long i, float j, double k, bool l,
                        __half m) {}

__global__ void pointers(int* a, const float* __restrict__ b, void* c, Odd* d) {
  if (a) *a = 1;
}

__global__ void structs(char c, Odd o, Packed3 p, Aligned16 a, short s) {}

__global__ void vectors(float4 f4, char c, double2 d2, short3 s3, char1 c1, int2 i2, uchar3 u3,
                        float3 f3) {}

__global__ void grid_constant(const __grid_constant__ Huge h, int tail) {}

__global__ void big_by_value(Big b, char tail) {}

__global__ void many(char p0, int p1, double p2, char p3, short p4, float p5, long long p6,
                     char p7, int* p8, Packed3 p9, double2 p10, char p11, short3 p12, int p13,
                     Odd p14, unsigned char p15, float4 p16, char p17, double p18, short p19,
                     int p20, char p21, void* p22, Aligned16 p23, char p24, long long p25,
                     float p26, char p27, int p28, short p29, char p30, double p31) {}

template <typename T, int N>
__global__ void templated(T value, T* out) {
  if (out) out[N] = value;
}
template __global__ void templated<double, 3>(double, double*);
template __global__ void templated<char, 1>(char, char*);
template __global__ void templated<Odd, 2>(Odd, Odd*);

extern "C" __global__ void c_kernel(int n, const double* x, double* y) {
  if (n > 0) y[0] = x[0];
}
