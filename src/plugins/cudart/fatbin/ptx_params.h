// Kernel parameter layouts from PTX text, for kernels a fatbin carries only as PTX (e.g.
// -gencode arch=compute_90,code=compute_90). Reads each `.entry name(.param ..., ...)` and lays
// the parameters out as PTX does: each at the next multiple of its alignment (`.align N`, else
// the size of its type; the `.align` after `.ptr` is the pointee's), arrays `name[N]` taking N
// elements. Details: docs/fatbin.md.
#pragma once

#include <string_view>
#include <vector>

#include "fatbin.h"

namespace gvirtus::fatbin {

// Every .entry of the module, in order of appearance (a name seen twice is listed once).
// Throws Error{kInvalidInput} on a parameter list it cannot read.
std::vector<KernelLayout> ptx_kernel_layouts(std::string_view ptx);

}  // namespace gvirtus::fatbin
