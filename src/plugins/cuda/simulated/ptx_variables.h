// The device variables a PTX text declares, for the simulated device, which places them in its
// memory as a driver would after compiling the PTX (a fatbinary cut down to an architecture it
// has no SASS for holds only PTX: frontend/images_for_devices.h).
//
// A declaration is a statement `[.visible|.weak] (.global|.const) [.attribute(...)] [.align N]
// [.vN] .TYPE name[N]...` with an optional initializer; its size is the type's times every
// dimension. `.extern` ones declare storage elsewhere and `.shared`, `.local`, `.param`, `.tex` are
// not module variables.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace gvirtus::sim {

std::map<std::string, uint64_t> ptx_variables(std::string_view ptx);

}  // namespace gvirtus::sim
