// The call rate through a stub library, for before/after comparisons of the stub and plugin
// layers (issue 18): N synchronous cudaDeviceSynchronize calls through the cudart stub (a
// generated "auto" row: stub encoding, frontend library, transport, the plugin's generated
// handler and shared services, the real runtime). Without a GPU the runtime answers at once
// (no driver), so the figure is the gvirtus path alone.
//   stub_call_rate [N]   prints: sync_us_per_call=<median of 5 rounds>
// Build: c++ -O2 -std=c++20 stub_call_rate.cpp -I/usr/local/cuda/include \
//          -L<build>/lib/stub -l:libcudart.so.13 -o stub_call_rate
// Run through a backend: GVIRTUS_CONFIG=<client config> LD_LIBRARY_PATH=<build>/lib/stub ...
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 20000;
  (void)cudaDeviceSynchronize();  // connects
  std::vector<double> rounds;
  for (int round = 0; round < 5; ++round) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) (void)cudaDeviceSynchronize();
    const std::chrono::duration<double, std::micro> took = std::chrono::steady_clock::now() - start;
    rounds.push_back(took.count() / n);
  }
  std::sort(rounds.begin(), rounds.end());
  std::printf("sync_us_per_call=%.3f\n", rounds[2]);
  return 0;
}
