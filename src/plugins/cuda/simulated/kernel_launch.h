// A kernel launch as the simulated device keeps it (launches.cpp): the kernel's parameter layout,
// its dimensions and its parameters packed by that layout. cuLaunchKernel and its kin pack one
// and record it at once; a capturing stream keeps it as a kernel node of the capture's graph, and
// cuGraphAddKernelNode packs one into its node; a graph's launch records its nodes' launches
// (graphs.cpp, graph_launch.cpp). The record is one JSON line (launches.cpp says its format).
#pragma once

#include <cuda.h>

#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "fatbin.h"

namespace gvirtus::simulated {

struct State;
struct Function;

struct KernelLaunch {
  // A copy of the kernel's layout (its name and parameter offsets): a launch kept by a graph
  // outlives nothing it names, so a module unloaded afterwards leaves it whole.
  fatbin::KernelLayout layout;
  CUfunction function = nullptr;  // the handle launched: a function's or a kernel's
  std::array<unsigned, 3> grid{};
  std::array<unsigned, 3> block{};
  unsigned shared = 0;
  std::vector<std::byte> params;  // layout.param_bytes of them
  std::string fields;  // what launch attributes add to the record (",\"cooperative\":true", ...)
};

// Checks a launch of `function` as the driver checks it (dimensions, shared memory, parameters
// given one way: kernelParams, one pointer per parameter of the layout, or extra's
// CU_LAUNCH_PARAM_BUFFER_POINTER and _SIZE) and packs it into `out`. CUDA_ERROR_INVALID_VALUE
// for what it refuses (logged at info, said why).
CUresult pack_launch(const Function& function, const std::array<unsigned, 3>& grid,
                     const std::array<unsigned, 3>& block, unsigned shared, void** kernelParams,
                     void** extra, KernelLaunch& out);

// Records one launch on `stream` (a capturing stream keeps it instead, as a kernel node depending
// on the capture's last one): appended, as one JSON line, to GVIRTUS_SIMULATED_LAUNCHES when that
// names a file; `from_graph` marks it "graph":true. A record that cannot be written fails the
// launch (CUDA_ERROR_OPERATING_SYSTEM) rather than being lost.
CUresult record_launch(State& s, CUstream stream, const KernelLaunch& launch,
                       bool from_graph = false);

}  // namespace gvirtus::simulated
