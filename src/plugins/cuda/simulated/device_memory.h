// Where the simulated devices' memory lives (allocations and modules' variables). By default it is
// host memory from the C library, whose addresses differ between processes. With
// GVIRTUS_SIMULATED_ADDRESSES=fixed it comes from one range of the address space that every
// backend process reserves at the same address, handed out first-fit from its start: the same
// allocations land at the same addresses in every process, as a GPU driver places device memory
// (its addresses are not randomised). That is what a pool of backends must keep apart
// (docs/cluster.md), and what the pool's tests make happen on purpose.
#pragma once

#include <cstddef>
#include <string>

namespace gvirtus::simulated {

// Reads GVIRTUS_SIMULATED_ADDRESSES (unset or "host": the C library's; "fixed": the shared
// layout) once; returns why it is refused (another value, or the range cannot be reserved),
// empty when it is not. Called by cuInit, before any allocation.
std::string configure_device_memory();

// `bytes` (> 0) aligned to `alignment` (a power of two, at most 256: every block of the fixed
// range starts at a multiple of 256, its size rounded up to one), or null when none is
// left. Given back with free_device_memory.
std::byte* allocate_device_memory(size_t bytes, size_t alignment);
void free_device_memory(std::byte* memory);

}  // namespace gvirtus::simulated
