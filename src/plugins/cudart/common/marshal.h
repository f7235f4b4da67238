// How cudart call arguments travel: the marshalling every generated library shares
// (common/call_marshal.h), with the ranges of the CUDA enums the calls use (cudart_enums.h,
// generated from cuda_runtime_api.h), with the names cudart's hand-written code uses.
#pragma once

#include "common/call_marshal.h"
#include "plugins/cudart/cudart_enums.h"

namespace gvirtus::cudart {

using marshal::enum_bits;
using marshal::enum_holds;
using marshal::put_output;
using marshal::put_value;

}  // namespace gvirtus::cudart
