// `gvirtus-bench copy`: cudaMemcpy bandwidth through gvirtus (bench/copy/copy_workload.cpp run
// through gvirtus-run against a gvirtus-backend per transport), host to device and back, pageable
// and pinned, 4 KiB to 1 GiB, beside the same run's raw streaming bandwidth of each transport and
// single-core memcpy; natively too where there is a GPU. Without one, the backends run with the
// accepting device preloaded (bench/copy/accepting_device.cpp) and every output says so.
#pragma once

#include <span>

namespace gvirtus::bench {

// `args` are the arguments after "copy". Returns the exit status; throws UsageError for bad
// usage and gvirtus::Error when the stack fails.
int run_copy_mode(std::span<char* const> args);

}  // namespace gvirtus::bench
