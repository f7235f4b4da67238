// Device and constant symbols: cudaMemcpyToSymbol / FromSymbol (whole, with offsets, device to
// device), their Async forms on a stream, cudaGetSymbolAddress / cudaGetSymbolSize, kernels that
// read constant memory and update device variables, and invalid symbols, offsets and directions.
#include <cstddef>
#include <cstring>
#include <vector>

#include "check.h"

struct Params {  // 24 bytes with padding
  int n;
  float scale;
  double offset;
  char tag[5];
};

__device__ int d_scalar;
__device__ float d_array[64];
__device__ Params d_params;
__device__ unsigned long long d_counter = 1000;  // statically initialised
__constant__ int c_table[256];
__constant__ Params c_params;
__constant__ double c_scalar;

static int host_variable = 5;  // not a symbol of any module

// out[i] = c_table[i] * c_params.n + c_params.scale * d_array[i % 64] + c_scalar (as double),
// and the device variables are updated.
__global__ void k_use(double* out) {
  const int i = threadIdx.x;
  out[i] = (double)c_table[i] * c_params.n + (double)(c_params.scale * d_array[i % 64]) + c_scalar;
  if (i == 0) {
    d_scalar += 7;
    d_params.n = c_params.n * 2;
    d_params.offset = c_params.offset + 1.0;
    for (int k = 0; k < 5; ++k) d_params.tag[k] = c_params.tag[k];
  }
  atomicAdd(&d_counter, 1ull);
}

// Reads a device variable through the address cudaGetSymbolAddress returned.
__global__ void k_double_array(float* p, int n) {
  if ((int)threadIdx.x < n) p[threadIdx.x] *= 2.0f;
}

int main() {
  std::printf("== whole symbols\n");
  const int scalar = 123456;
  int scalar_back = -1;
  if (OK(cudaMemcpyToSymbol(d_scalar, &scalar, sizeof scalar)) &&
      OK(cudaMemcpyFromSymbol(&scalar_back, d_scalar, sizeof scalar_back)))
    EXPECT(scalar_back == scalar);
  unsigned long long counter = 0;
  if (OK(cudaMemcpyFromSymbol(&counter, d_counter, sizeof counter))) EXPECT(counter == 1000);

  float array[64], array_back[64];
  for (int i = 0; i < 64; ++i) array[i] = (float)i * 0.5f - 3.0f;
  if (OK(cudaMemcpyToSymbol(d_array, array, sizeof array)) &&
      OK(cudaMemcpyFromSymbol(array_back, d_array, sizeof array_back)))
    EXPECT(std::memcmp(array, array_back, sizeof array) == 0);

  std::printf("== offsets\n");
  const float patch[8] = {100, 101, 102, 103, 104, 105, 106, 107};
  if (OK(cudaMemcpyToSymbol(d_array, patch, sizeof patch, 16 * sizeof(float)))) {
    for (int i = 0; i < 8; ++i) array[16 + i] = patch[i];
  }
  float middle[10];
  for (float& f : middle) f = -1;
  if (OK(cudaMemcpyFromSymbol(middle, d_array, sizeof middle, 15 * sizeof(float))))
    EXPECT(std::memcmp(middle, array + 15, sizeof middle) == 0);
  for (float& f : array_back) f = -1;
  if (OK(cudaMemcpyFromSymbol(array_back, d_array, sizeof array_back)))
    EXPECT(std::memcmp(array, array_back, sizeof array) == 0);
  // The last element alone: offset + size == the symbol's size.
  float last = -1;
  if (OK(cudaMemcpyFromSymbol(&last, d_array, sizeof last, 63 * sizeof(float))))
    EXPECT(last == array[63]);

  std::printf("== constant memory, structs, Async forms on a stream\n");
  cudaStream_t stream = nullptr;
  const bool have_stream = OK(cudaStreamCreate(&stream));
  std::vector<int> table(256), table_back(256, -1);
  for (int i = 0; i < 256; ++i) table[i] = (i * 37) % 101 - 50;
  Params params{};
  params.n = 3;
  params.scale = 0.25f;
  params.offset = -1.5;
  std::memcpy(params.tag, "gvrt", 5);
  const double constant = 0.125;
  SHOW(cudaMemcpyToSymbolAsync(c_table, table.data(), 128 * sizeof(int), 0, cudaMemcpyHostToDevice,
                               stream));
  SHOW(cudaMemcpyToSymbolAsync(c_table, table.data() + 128, 128 * sizeof(int), 128 * sizeof(int),
                               cudaMemcpyHostToDevice, stream));
  SHOW(
      cudaMemcpyToSymbolAsync(c_params, &params, sizeof params, 0, cudaMemcpyHostToDevice, stream));
  SHOW(cudaMemcpyToSymbolAsync(c_scalar, &constant, sizeof constant, 0, cudaMemcpyDefault, stream));
  Params params_back{};
  SHOW(cudaMemcpyFromSymbolAsync(table_back.data(), c_table, 256 * sizeof(int), 0,
                                 cudaMemcpyDeviceToHost, stream));
  SHOW(cudaMemcpyFromSymbolAsync(&params_back, c_params, sizeof params_back, 0,
                                 cudaMemcpyDeviceToHost, stream));
  if (OK(cudaStreamSynchronize(stream))) {
    EXPECT(table_back == table);
    EXPECT(params_back.n == 3 && params_back.scale == 0.25f && params_back.offset == -1.5);
    EXPECT(std::memcmp(params_back.tag, "gvrt", 5) == 0);
  }
  // Part of the struct, at the offset of its double.
  double offset_back = 0;
  if (OK(cudaMemcpyFromSymbol(&offset_back, c_params, sizeof(double), offsetof(Params, offset))))
    EXPECT(offset_back == -1.5);

  std::printf("== symbol addresses and sizes\n");
  size_t size = 0;
  if (OK(cudaGetSymbolSize(&size, d_array))) EXPECT(size == sizeof(float) * 64);
  if (OK(cudaGetSymbolSize(&size, c_table))) EXPECT(size == sizeof(int) * 256);
  if (OK(cudaGetSymbolSize(&size, c_params))) EXPECT(size == sizeof(Params));
  if (OK(cudaGetSymbolSize(&size, d_counter))) EXPECT(size == sizeof(unsigned long long));
  float* array_address = nullptr;
  if (OK(cudaGetSymbolAddress((void**)&array_address, d_array))) {
    std::printf("address of d_array: %s\n", array_address != nullptr ? "some" : "null");
    float through_address[64];
    if (OK(cudaMemcpy(through_address, array_address, sizeof through_address,
                      cudaMemcpyDeviceToHost)))
      EXPECT(std::memcmp(through_address, array, sizeof array) == 0);
    k_double_array<<<1, 64>>>(array_address, 64);
    if (ok_impl(cudaGetLastError(), "launch k_double_array") &&
        OK(cudaMemcpyFromSymbol(array_back, d_array, sizeof array_back))) {
      bool all = true;
      for (int i = 0; i < 64; ++i) all = all && array_back[i] == array[i] * 2.0f;
      EXPECT(all);
      for (int i = 0; i < 64; ++i) array[i] *= 2.0f;
    }
  }
  void* params_address = nullptr;
  SHOW(cudaGetSymbolAddress(&params_address, c_params));

  std::printf("== a kernel reading constant memory\n");
  double* out = nullptr;
  if (OK(cudaMalloc(&out, 256 * sizeof(double)))) {
    k_use<<<1, 256, 0, stream>>>(out);
    std::vector<double> got(256, -1);
    if (ok_impl(cudaGetLastError(), "launch k_use") && OK(cudaStreamSynchronize(stream)) &&
        OK(cudaMemcpy(got.data(), out, 256 * sizeof(double), cudaMemcpyDeviceToHost))) {
      int same = 0;
      for (int i = 0; i < 256; ++i) {
        const double want =
            (double)table[i] * params.n + (double)(params.scale * array[i % 64]) + constant;
        same += got[i] == want;
      }
      std::printf("k_use: %d of 256 results as expected\n", same);
      EXPECT(same == 256);
      int scalar_now = 0;
      if (OK(cudaMemcpyFromSymbol(&scalar_now, d_scalar, sizeof scalar_now)))
        EXPECT(scalar_now == scalar + 7);
      Params updated{};
      if (OK(cudaMemcpyFromSymbol(&updated, d_params, sizeof updated)))
        EXPECT(updated.n == 6 && updated.offset == -0.5 &&
               std::memcmp(updated.tag, "gvrt", 5) == 0);
      if (OK(cudaMemcpyFromSymbol(&counter, d_counter, sizeof counter))) EXPECT(counter == 1256);
    }
    std::printf("== device-to-device symbol copies\n");
    // d_array[0..32) -> memory -> d_array[32..64); c_table -> memory -> d_params (raw bytes).
    if (OK(cudaMemcpyFromSymbol(out, d_array, 32 * sizeof(float), 0, cudaMemcpyDeviceToDevice)) &&
        OK(cudaMemcpyToSymbol(d_array, out, 32 * sizeof(float), 32 * sizeof(float),
                              cudaMemcpyDeviceToDevice)) &&
        OK(cudaMemcpyFromSymbol(array_back, d_array, sizeof array_back))) {
      EXPECT(std::memcmp(array_back, array, 32 * sizeof(float)) == 0);
      EXPECT(std::memcmp(array_back + 32, array, 32 * sizeof(float)) == 0);
    }
    if (OK(cudaMemcpyFromSymbolAsync(out, c_table, 256 * sizeof(int), 0, cudaMemcpyDeviceToDevice,
                                     stream)) &&
        OK(cudaMemcpyToSymbolAsync(d_params, out, sizeof(Params), 0, cudaMemcpyDefault, stream)) &&
        OK(cudaMemcpyFromSymbolAsync(table_back.data(), c_table, 256 * sizeof(int), 0,
                                     cudaMemcpyDefault, stream)) &&
        OK(cudaStreamSynchronize(stream))) {
      std::vector<int> via_memory(256, -1);
      if (OK(cudaMemcpy(via_memory.data(), out, 256 * sizeof(int), cudaMemcpyDeviceToHost)))
        EXPECT(via_memory == table);
      int params_ints[sizeof(Params) / sizeof(int)];
      if (OK(cudaMemcpyFromSymbol(params_ints, d_params, sizeof params_ints)))
        EXPECT(std::memcmp(params_ints, table.data(), sizeof params_ints) == 0);
    }
    SHOW(cudaFree(out));
  } else {
    k_use<<<1, 256, 0, stream>>>(out);
    SHOW(cudaGetLastError());
  }

  std::printf("== invalid symbols, offsets and directions\n");
  int value = 1;
  SHOW(cudaMemcpyToSymbol(host_variable, &value, sizeof value));
  SHOW(cudaGetLastError());
  SHOW(cudaMemcpyFromSymbol(&value, host_variable, sizeof value));
  SHOW(cudaMemcpyToSymbolAsync(host_variable, &value, sizeof value, 0, cudaMemcpyHostToDevice,
                               stream));
  void* address = nullptr;
  SHOW(cudaGetSymbolAddress(&address, host_variable));
  std::printf("address of a host variable: %s\n", address == nullptr ? "null" : "some");
  size = 12345;
  SHOW(cudaGetSymbolSize(&size, host_variable));
  std::printf("size of a host variable: %s\n", size == 12345 ? "untouched" : "changed");
  SHOW(cudaMemcpyToSymbol(d_scalar, &value, sizeof value, sizeof(int)));   // past the end
  SHOW(cudaMemcpyToSymbol(d_array, table.data(), sizeof array + 4));       // too large
  SHOW(cudaMemcpyFromSymbol(array_back, d_array, 8, 63 * sizeof(float)));  // straddles the end
  SHOW(cudaMemcpyToSymbol(d_scalar, &value, sizeof value, 0, cudaMemcpyDeviceToHost));
  SHOW(cudaMemcpyFromSymbol(&value, d_scalar, sizeof value, 0, cudaMemcpyHostToDevice));
  SHOW(cudaGetLastError());
  SHOW(cudaGetLastError());
  // Nothing above changed the symbols.
  if (OK(cudaMemcpyFromSymbol(&scalar_back, d_scalar, sizeof scalar_back)))
    std::printf("d_scalar after the invalid calls: %d\n", scalar_back);

  std::printf("== graph copy nodes to and from a symbol\n");
  {
    // staging[0..4) -> c_table[8..12) -> staging[4..8), as two nodes of one graph.
    int* staging = nullptr;
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    cudaGraphNode_t to = nullptr, from = nullptr;
    const int sevens[4] = {7, 7, 7, 7};
    int got[4] = {};
    if (OK(cudaMalloc((void**)&staging, 8 * sizeof(int))) &&
        OK(cudaMemcpy(staging, sevens, sizeof sevens, cudaMemcpyHostToDevice)) &&
        OK(cudaGraphCreate(&graph, 0)) &&
        OK(cudaGraphAddMemcpyNodeToSymbol(&to, graph, nullptr, 0, c_table, staging, sizeof sevens,
                                          8 * sizeof(int), cudaMemcpyDeviceToDevice)) &&
        OK(cudaGraphAddMemcpyNodeFromSymbol(&from, graph, &to, 1, staging + 4, c_table, sizeof got,
                                            8 * sizeof(int), cudaMemcpyDefault)) &&
        OK(cudaGraphInstantiate(&exec, graph, 0)) && OK(cudaGraphLaunch(exec, stream)) &&
        OK(cudaStreamSynchronize(stream)) &&
        OK(cudaMemcpy(got, staging + 4, sizeof got, cudaMemcpyDeviceToHost))) {
      EXPECT(std::memcmp(got, sevens, sizeof got) == 0);
    }
    // New parameters in the executable graph and in the graph; one past the symbol's end.
    SHOW(cudaGraphExecMemcpyNodeSetParamsToSymbol(exec, to, c_table, staging, sizeof sevens,
                                                  12 * sizeof(int), cudaMemcpyDeviceToDevice));
    SHOW(cudaGraphExecMemcpyNodeSetParamsFromSymbol(exec, from, staging + 4, c_table, sizeof got,
                                                    12 * sizeof(int), cudaMemcpyDeviceToDevice));
    SHOW(cudaGraphMemcpyNodeSetParamsToSymbol(to, c_table, staging, sizeof sevens, 16 * sizeof(int),
                                              cudaMemcpyDeviceToDevice));
    SHOW(cudaGraphMemcpyNodeSetParamsFromSymbol(from, staging + 4, c_table, sizeof got,
                                                16 * sizeof(int), cudaMemcpyDeviceToDevice));
    SHOW(cudaGraphMemcpyNodeSetParamsToSymbol(to, c_table, staging, sizeof sevens,
                                              256 * sizeof(int), cudaMemcpyDeviceToDevice));
    if (exec != nullptr && OK(cudaGraphLaunch(exec, stream)) && OK(cudaStreamSynchronize(stream)) &&
        OK(cudaMemcpyFromSymbol(got, c_table, sizeof got, 12 * sizeof(int)))) {
      EXPECT(std::memcmp(got, sevens, sizeof got) == 0);
    }
    if (exec != nullptr) SHOW(cudaGraphExecDestroy(exec));
    if (graph != nullptr) SHOW(cudaGraphDestroy(graph));
    if (staging != nullptr) SHOW(cudaFree(staging));
  }

  if (have_stream) SHOW(cudaStreamDestroy(stream));
  SHOW(cudaDeviceSynchronize());
  SHOW(cudaGetLastError());
  return 0;
}
