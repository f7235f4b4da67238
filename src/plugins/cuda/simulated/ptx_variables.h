// The device variables a PTX text declares, for the simulated device, which places them in its
// memory as a driver would after compiling the PTX (a fatbinary cut down to an architecture it
// has no SASS for holds only PTX: frontend/images_for_devices.h).
//
// A declaration is a statement `[.visible|.weak] (.global|.const) [.attribute(...)] [.align N]
// [.vN] .TYPE name[N]...` with an optional initializer; its size is the type's times every
// dimension. `.extern` ones declare storage elsewhere and `.shared`, `.local`, `.param`, `.tex` are
// not module variables.
#pragma once

#include <string_view>
#include <vector>

#include "elf_symbols.h"

namespace gvirtus::sim {

// The variables, with their sizes and initial values: an initializer of numbers (integers,
// decimal or hex, floats decimal or as PTX's 0f/0d bit patterns, in braces for an array) gives
// the first bytes; one of anything else (an address: generic(name)) leaves the variable zeroed.
std::vector<fatbin::Variable> ptx_variables(std::string_view ptx);

}  // namespace gvirtus::sim
