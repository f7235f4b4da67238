// Kernels' parameter layouts as the backend's driver gives them (param_layouts.cpp), for what
// carries a kernel's arguments packed (a launch, a graph's kernel node): the buffer must be exactly
// as large as the layout, and each argument lies at its offset.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include "common/wire.h"
#include "cuda_calls.h"

namespace gvirtus::cuda {

struct ParamLayout {
  std::vector<std::pair<size_t, size_t>> params;  // offset, size, by ordinal
  size_t bytes = 0;                               // the buffer's size
};

// `function`'s layout (a function or a library's kernel), from the driver: cuKernelGetParamInfo for
// a library's kernel, which the session's table says it is (or, for a handle the table does not
// hold, `named_as_kernel`: a kernel node's kernel), else cuFuncGetParamInfo. Asked once per
// adoption of the handle into the table, in the same lookup: the driver hands a function's address
// out again after its module went, for code whose parameters differ (XLA loads and unloads modules
// by the hundred while it tunes). A handle the table does not hold (another plugin's) is asked
// every time.
CUresult param_layout(CUfunction function, bool named_as_kernel,
                      std::shared_ptr<const ParamLayout>& layout);

// gvirtusKernelParamLayout (driver_wire.h): a held function's or kernel's layout, whole.
bool run_param_layout(Fn fn, WireReader& in, WireWriter& out, CUresult& result);

}  // namespace gvirtus::cuda
