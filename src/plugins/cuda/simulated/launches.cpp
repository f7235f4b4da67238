// Launches on the simulated device: checked as the driver checks them, then recorded - never
// executed. Each launch is logged (info) and, when GVIRTUS_SIMULATED_LAUNCHES names a file,
// appended to it as one JSON line:
//   {"simulated":true,"kernel":"_Z5saxpyifPKfPf","grid":[4,1,1],"block":[256,1,1],"shared":0,
//    "stream":0,"params":"00040000..."}
// where stream is 0 for the null (or a predefined) stream, else the stream's number in creation
// order, and params is the parameter buffer in lowercase hex, laid out as the kernel's layout.
// A launch on a capturing stream is kept by the capture instead, as a kernel node, and recorded
// each time a graph made of it is launched, on that launch's stream, marked "graph":true
// (graph_launch.cpp). kernel_launch.h says how a launch is kept.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/log.h"
#include "kernel_launch.h"
#include "state.h"

namespace sim = gvirtus::simulated;

namespace {

constexpr unsigned kMaxThreadsPerBlock = 1024;
constexpr unsigned kMaxBlock[3] = {1024, 1024, 64};
constexpr unsigned kMaxGrid[3] = {2147483647u, 65535, 65535};
constexpr unsigned kMaxSharedBytes = 232448;

// The parameter buffer from the `extra` form: CU_LAUNCH_PARAM_BUFFER_POINTER and _SIZE.
CUresult extra_buffer(void** extra, const std::byte*& buffer, size_t& bytes) {
  buffer = nullptr;
  bytes = SIZE_MAX;
  for (size_t i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
    if (i >= 64) return CUDA_ERROR_INVALID_VALUE;
    if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) {
      buffer = static_cast<const std::byte*>(extra[i + 1]);
    } else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE && extra[i + 1] != nullptr) {
      std::memcpy(&bytes, extra[i + 1], sizeof bytes);
    } else {
      return CUDA_ERROR_INVALID_VALUE;
    }
  }
  return buffer != nullptr && bytes != SIZE_MAX ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

std::string hex(const std::vector<std::byte>& bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text;
  text.reserve(bytes.size() * 2);
  for (std::byte b : bytes) {
    text += kDigits[std::to_integer<unsigned>(b) >> 4];
    text += kDigits[std::to_integer<unsigned>(b) & 15];
  }
  return text;
}

// Appends one line to the launch records; one that cannot be written fails the launch.
CUresult append(const std::string& line) {
  GVIRTUS_LOG(kInfo) << "simulated launch " << line;
  const char* file = std::getenv("GVIRTUS_SIMULATED_LAUNCHES");
  if (file == nullptr || *file == '\0') return CUDA_SUCCESS;
  FILE* out = std::fopen(file, "a");
  const bool written = out != nullptr && std::fprintf(out, "%s\n", line.c_str()) > 0;
  const bool closed = out != nullptr && std::fclose(out) == 0;
  if (written && closed) return CUDA_SUCCESS;
  GVIRTUS_LOG(kError) << "simulated device: cannot append a launch record to " << file;
  return CUDA_ERROR_OPERATING_SYSTEM;
}

// A refused launch, said why (info: a client's mistake is not the daemon's problem).
CUresult refused(CUresult status, const char* why) {
  GVIRTUS_LOG(kInfo) << "simulated launch refused: " << why;
  return status;
}

}  // namespace

namespace gvirtus::simulated {

CUresult record_launch(State& s, CUstream stream, const KernelLaunch& launch, bool from_graph) {
  if (const auto capture = s.capturing.find(stream); capture != s.capturing.end()) {
    return capture_launch(s, capture->second, launch);
  }
  const auto number = s.streams.find(stream);
  char dims[192];
  std::snprintf(dims, sizeof dims,
                "\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u],\"shared\":%u,\"stream\":%u",
                launch.grid[0], launch.grid[1], launch.grid[2], launch.block[0], launch.block[1],
                launch.block[2], launch.shared, number != s.streams.end() ? number->second : 0);
  return append("{\"simulated\":true,\"kernel\":\"" + launch.layout.name + "\"," + dims +
                ",\"params\":\"" + hex(launch.params) + "\"" + launch.fields +
                (from_graph ? ",\"graph\":true}" : "}"));
}

CUresult pack_launch(const Function& function, const std::array<unsigned, 3>& grid,
                     const std::array<unsigned, 3>& block, unsigned shared, void** kernelParams,
                     void** extra, KernelLaunch& out) {
  for (int i = 0; i < 3; ++i) {
    if (grid[i] == 0 || block[i] == 0 || grid[i] > kMaxGrid[i] || block[i] > kMaxBlock[i]) {
      return refused(CUDA_ERROR_INVALID_VALUE, "grid or block dimensions out of range");
    }
  }
  if (uint64_t{block[0]} * block[1] * block[2] > kMaxThreadsPerBlock) {
    return refused(CUDA_ERROR_INVALID_VALUE, "more threads than a block may have");
  }
  if (shared > kMaxSharedBytes) {
    return refused(CUDA_ERROR_INVALID_VALUE, "more shared memory than a block may have");
  }
  const auto& layout = *function.layout;
  std::vector<std::byte> params(layout.param_bytes);
  if (kernelParams != nullptr && extra != nullptr) {
    return refused(CUDA_ERROR_INVALID_VALUE, "both kernelParams and extra");
  }
  if (extra != nullptr) {
    const std::byte* buffer = nullptr;
    size_t bytes = 0;
    if (extra_buffer(extra, buffer, bytes) != CUDA_SUCCESS) {
      return refused(CUDA_ERROR_INVALID_VALUE, "a malformed extra array");
    }
    if (bytes < layout.param_bytes) {
      return refused(CUDA_ERROR_INVALID_VALUE, "a parameter buffer shorter than the kernel's");
    }
    std::memcpy(params.data(), buffer, params.size());
  } else if (!layout.params.empty()) {
    if (kernelParams == nullptr) {
      return refused(CUDA_ERROR_INVALID_VALUE, "no parameters for a kernel that takes some");
    }
    for (size_t i = 0; i < layout.params.size(); ++i) {
      if (kernelParams[i] == nullptr) return refused(CUDA_ERROR_INVALID_VALUE, "a null parameter");
      std::memcpy(params.data() + layout.params[i].offset, kernelParams[i], layout.params[i].size);
    }
  }
  out.layout = layout;
  out.grid = grid;
  out.block = block;
  out.shared = shared;
  out.params = std::move(params);
  return CUDA_SUCCESS;
}

CUresult not_captured(const State& s, CUstream stream) {
  return s.capturing.count(stream) != 0 ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : CUDA_SUCCESS;
}

CUresult waited_for(State& s, CUstream stream) {
  if (s.capturing.count(stream) == 0) return CUDA_SUCCESS;
  s.invalidated_captures.insert(stream);
  return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
}

}  // namespace gvirtus::simulated

namespace {

// extra_fields: what a configuration's attributes add to the record (",\"cooperative\":true", ...).
CUresult launch(const std::string& extra_fields, CUfunction f, unsigned int gridDimX,
                unsigned int gridDimY, unsigned int gridDimZ, unsigned int blockDimX,
                unsigned int blockDimY, unsigned int blockDimZ, unsigned int sharedMemBytes,
                CUstream hStream, void** kernelParams, void** extra) {
  return sim::guarded([&](sim::State& s) {
    const sim::Function* function = sim::function_of(s, f);  // a function or a kernel
    if (function == nullptr) return refused(CUDA_ERROR_INVALID_HANDLE, "unknown function");
    if (!sim::known_stream(s, hStream)) return refused(CUDA_ERROR_INVALID_HANDLE, "unknown stream");
    sim::KernelLaunch packed;
    if (const CUresult r = sim::pack_launch(*function, {gridDimX, gridDimY, gridDimZ},
                                            {blockDimX, blockDimY, blockDimZ}, sharedMemBytes,
                                            kernelParams, extra, packed);
        r != CUDA_SUCCESS) {
      return r;
    }
    packed.function = f;
    packed.fields = extra_fields;
    return sim::record_launch(s, hStream, packed);
  });
}

}  // namespace

GVIRTUS_SIMULATED_EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX,
                                                 unsigned int gridDimY, unsigned int gridDimZ,
                                                 unsigned int blockDimX, unsigned int blockDimY,
                                                 unsigned int blockDimZ,
                                                 unsigned int sharedMemBytes, CUstream hStream,
                                                 void** kernelParams, void** extra) {
  return launch("", f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                sharedMemBytes, hStream, kernelParams, extra);
}

// Recorded like any launch, marked cooperative.
GVIRTUS_SIMULATED_EXPORT CUresult cuLaunchCooperativeKernel(
    CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
    unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
    unsigned int sharedMemBytes, CUstream hStream, void** kernelParams) {
  return launch(",\"cooperative\":true", f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY,
                blockDimZ, sharedMemBytes, hStream, kernelParams, nullptr);
}

// Recorded like any launch, with what its attributes say that the record shows: cooperative, and
// the cluster shape. Attributes the simulated device does not know are refused, as a driver that
// predates them does.
GVIRTUS_SIMULATED_EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction f,
                                                   void** kernelParams, void** extra) {
  if (config == nullptr || (config->numAttrs != 0 && config->attrs == nullptr)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  std::string fields;
  for (unsigned i = 0; i < config->numAttrs; ++i) {
    const CUlaunchAttribute& a = config->attrs[i];
    if (a.id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE && a.value.cooperative != 0) {
      fields += ",\"cooperative\":true";
    } else if (a.id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
      const auto& c = a.value.clusterDim;
      if (c.x == 0 || c.y == 0 || c.z == 0 || config->gridDimX % c.x != 0 ||
          config->gridDimY % c.y != 0 || config->gridDimZ % c.z != 0) {
        return refused(CUDA_ERROR_INVALID_CLUSTER_SIZE, "a grid not a multiple of its cluster");
      }
      fields += ",\"cluster\":[" + std::to_string(c.x) + "," + std::to_string(c.y) + "," +
                std::to_string(c.z) + "]";
    } else if (a.id > CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING) {
      return refused(CUDA_ERROR_INVALID_VALUE, "an unknown launch attribute");
    }
  }
  return launch(fields, f, config->gridDimX, config->gridDimY, config->gridDimZ, config->blockDimX,
                config->blockDimY, config->blockDimZ, config->sharedMemBytes, config->hStream,
                kernelParams, extra);
}

// The model's largest cluster: 8 blocks (16 would need the non-portable attribute).
GVIRTUS_SIMULATED_EXPORT CUresult cuOccupancyMaxPotentialClusterSize(int* clusterSize,
                                                                     CUfunction func,
                                                                     const CUlaunchConfig* config) {
  if (clusterSize == nullptr || config == nullptr ||
      (config->numAttrs != 0 && config->attrs == nullptr)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  return sim::guarded([&](sim::State& s) {
    if (sim::function_of(s, func) == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    *clusterSize = 8;
    return CUDA_SUCCESS;
  });
}

// The model's answer: 132 multiprocessors, at most 8 blocks of a cluster on one, clusters of at
// most 8 blocks (16 would need the non-portable attribute).
GVIRTUS_SIMULATED_EXPORT CUresult cuOccupancyMaxActiveClusters(int* numClusters, CUfunction func,
                                                               const CUlaunchConfig* config) {
  if (numClusters == nullptr || config == nullptr ||
      (config->numAttrs != 0 && config->attrs == nullptr)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  return sim::guarded([&](sim::State& s) {
    if (sim::function_of(s, func) == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    unsigned cluster = 1;
    for (unsigned i = 0; i < config->numAttrs; ++i) {
      if (config->attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
        const auto& c = config->attrs[i].value.clusterDim;
        cluster = c.x * c.y * c.z;
      }
    }
    if (cluster == 0 || cluster > 8) return CUDA_ERROR_INVALID_CLUSTER_SIZE;
    *numClusters = static_cast<int>(132 / cluster);
    return CUDA_SUCCESS;
  });
}
