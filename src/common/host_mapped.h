// Whether memory is mapped in this process (host_mapped.cpp): the stubs' test of an address they
// did not allocate before they read or write it (mincore(2) answers ENOMEM for an unmapped page),
// so that a device address the stub never saw is refused rather than touched.
#pragma once

#include <cstddef>

namespace gvirtus {

// Every page of [address, address + bytes) mapped; a null address is not, 0 bytes always are.
bool host_mapped(const void* address, size_t bytes);

}  // namespace gvirtus
