// A kernel's arguments as the wire carries them (launch.cpp): one buffer, each argument at its
// offset by the kernel's parameter layout, which the stub asks the backend's driver for once per
// function (cuFuncGetParamInfo, or cuKernelGetParamInfo for a library's kernel) and keeps. A
// launch packs its arguments so, and so does a graph's kernel node (graph_nodes.cpp).
#pragma once

#include <cuda.h>

#include <cstddef>
#include <memory>
#include <vector>

namespace gvirtus::cuda {

struct Param {
  size_t offset;
  size_t size;
};

struct Layout {
  std::vector<Param> params;
  size_t bytes = 0;  // the buffer's size: the end of the last parameter
};

// `code`'s layout (a function, or a kernel the stub handed out, as a CUfunction), kept until a
// module or library is unloaded; `layout` stays valid as long as it is held.
CUresult kernel_layout(CUfunction code, std::shared_ptr<const Layout>& layout);

// The arguments of a launch of `code`: the `extra` form's buffer as it is (`buffer`, `bytes`), or
// the `params` form's pointers packed into `packed` by the layout (and `buffer` pointing there).
// CUDA_ERROR_INVALID_VALUE for a missing argument or a malformed `extra`.
CUresult arguments_buffer(CUfunction code, void** params, void** extra,
                          std::vector<std::byte>& packed, const void*& buffer, size_t& bytes);

}  // namespace gvirtus::cuda
