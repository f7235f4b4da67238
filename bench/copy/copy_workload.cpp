// gvirtus-copy-workload: cudaMemcpy bandwidth, host to device and device to host, from pageable
// (malloc) and pinned (cudaMallocHost) memory, for sizes from 4 KiB up to --max-bytes. Built like
// any application against the CUDA runtime (shared), so that `gvirtus-bench copy` runs the same
// binary natively and through gvirtus-run. Prints one JSON object on stdout:
//   {"points": [{"direction": "h2d", "memory": "pageable", "bytes": N, "mbps": median,
//                "mbps_max": best, "copies": per batch}, ...]}
// Each point is two warm-up copies (the second timed to size the batches), then three batches sized
// to take about --seconds together; the bandwidth of a batch is bytes times copies over its wall
// time (1e6 bytes per second), and the median batch is reported. Exit 2 with "no CUDA device:
// <why>" on stderr when there is no device to allocate on (the convention of the bench's
// workloads), 1 when a copy fails.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace {

struct Options {
  size_t min_bytes = size_t{4} << 10;
  size_t max_bytes = size_t{1} << 30;
  double seconds = 0.3;  // per point, all three batches
};

size_t parse_bytes(const char* text) {
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text, &end, 10);
  size_t scale = 1;
  if (*end == 'K') scale = size_t{1} << 10;
  if (*end == 'M') scale = size_t{1} << 20;
  if (*end == 'G') scale = size_t{1} << 30;
  return static_cast<size_t>(value) * scale;
}

[[noreturn]] void fail(const char* what, cudaError_t rc) {
  std::fprintf(stderr, "gvirtus-copy-workload: %s: %s (%s)\n", what, cudaGetErrorName(rc),
               cudaGetErrorString(rc));
  std::exit(1);
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Point {
  const char* direction;
  const char* memory;
  size_t bytes;
  double mbps;
  double mbps_max;
  unsigned copies;
};

// Times `copy` as described at the top of the file.
template <typename Copy>
Point measure(const char* direction, const char* memory, size_t bytes, double seconds, Copy copy) {
  copy();  // the first of a size may set things up (a connection's buffer grows)
  double start = now_s();
  copy();
  const double one = std::max(now_s() - start, 1e-7);
  const unsigned copies = static_cast<unsigned>(std::clamp(seconds / 3 / one, 1.0, 100000.0));
  std::vector<double> mbps;
  for (int batch = 0; batch < 3; ++batch) {
    start = now_s();
    for (unsigned i = 0; i < copies; ++i) copy();
    mbps.push_back(static_cast<double>(bytes) * copies / (now_s() - start) / 1e6);
  }
  std::sort(mbps.begin(), mbps.end());
  return Point{direction, memory, bytes, mbps[1], mbps[2], copies};
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (i + 1 < argc && arg == "--max-bytes") {
      options.max_bytes = parse_bytes(argv[++i]);
    } else if (i + 1 < argc && arg == "--min-bytes") {
      options.min_bytes = parse_bytes(argv[++i]);
    } else if (i + 1 < argc && arg == "--seconds") {
      options.seconds = std::strtod(argv[++i], nullptr);
    } else {
      std::fprintf(stderr,
                   "usage: gvirtus-copy-workload [--min-bytes N] [--max-bytes N] [--seconds S]\n"
                   "  sizes take suffixes K, M, G; defaults 4K, 1G and 0.3 s per point\n");
      return 2;
    }
  }
  if (options.min_bytes == 0 || options.min_bytes > options.max_bytes || options.seconds <= 0) {
    std::fprintf(stderr, "gvirtus-copy-workload: bad sizes or seconds\n");
    return 2;
  }
  void* device = nullptr;
  if (const cudaError_t rc = cudaMalloc(&device, options.max_bytes); rc != cudaSuccess) {
    if (rc == cudaErrorMemoryAllocation) fail("cudaMalloc", rc);
    std::fprintf(stderr, "no CUDA device: cudaMalloc: %s\n", cudaGetErrorName(rc));
    return 2;
  }
  std::vector<Point> points;
  for (size_t bytes = options.min_bytes; bytes <= options.max_bytes;
       bytes = bytes > options.max_bytes / 4 && bytes < options.max_bytes ? options.max_bytes
                                                                          : bytes * 4) {
    for (const bool pinned : {false, true}) {
      void* host = nullptr;
      if (pinned) {
        if (const cudaError_t rc = cudaMallocHost(&host, bytes); rc != cudaSuccess) {
          fail("cudaMallocHost", rc);
        }
      } else {
        host = std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
        if (host == nullptr) {
          std::fprintf(stderr, "gvirtus-copy-workload: out of host memory\n");
          return 1;
        }
      }
      std::memset(host, 0x5a, bytes);  // faulted in before it is timed
      const char* memory = pinned ? "pinned" : "pageable";
      points.push_back(measure("h2d", memory, bytes, options.seconds, [&] {
        if (const cudaError_t rc = cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice);
            rc != cudaSuccess) {
          fail("cudaMemcpy host to device", rc);
        }
      }));
      points.push_back(measure("d2h", memory, bytes, options.seconds, [&] {
        if (const cudaError_t rc = cudaMemcpy(host, device, bytes, cudaMemcpyDeviceToHost);
            rc != cudaSuccess) {
          fail("cudaMemcpy device to host", rc);
        }
      }));
      if (pinned) {
        cudaFreeHost(host);
      } else {
        std::free(host);
      }
    }
    if (bytes == options.max_bytes) break;
  }
  cudaFree(device);
  std::printf("{\"points\": [");
  for (size_t i = 0; i < points.size(); ++i) {
    const Point& p = points[i];
    std::printf(
        "%s\n  {\"direction\": \"%s\", \"memory\": \"%s\", \"bytes\": %zu, \"mbps\": %.1f, "
        "\"mbps_max\": %.1f, \"copies\": %u}",
        i == 0 ? "" : ",", p.direction, p.memory, p.bytes, p.mbps, p.mbps_max, p.copies);
  }
  std::printf("\n]}\n");
  return 0;
}
