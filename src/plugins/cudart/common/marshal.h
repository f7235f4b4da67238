// How cudart call arguments travel: the marshalling every generated library shares
// (common/call_marshal.h), with the ranges of the CUDA enums the calls use (cudart_enums.h,
// generated from cuda_runtime_api.h), named in this namespace for the stub's and handlers'
// hand-written code.
#pragma once

#include "common/call_marshal.h"
#include "plugins/cudart/cudart_enums.h"

namespace gvirtus::cudart {

using marshal::Array;
using marshal::CString;
using marshal::enum_bits;
using marshal::enum_holds;
using marshal::get_array;
using marshal::get_enum;
using marshal::get_output;
using marshal::get_value;
using marshal::Output;
using marshal::put_array;
using marshal::put_c_string;
using marshal::put_output;
using marshal::put_value;
using marshal::usable_count;

}  // namespace gvirtus::cudart
