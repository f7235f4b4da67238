// `gvirtus-bench gpu`: GPU workloads natively and through gvirtus over each transport, in one run
// (DESIGN.md section 10). Runs bin/gpu_workloads (bench/gpu/gpu_workloads.cu: saxpy, matrixMul,
// H2D/D2H bandwidth pageable and pinned, empty-kernel launch rate) once natively, then through
// gvirtus-run against a gvirtus-backend child with the cudart plugin per transport, and reports
// remote/native ratios. Without a usable CUDA device it stops at the native run: it prints
// "no CUDA device: <error name>" and exits 2.
#pragma once

#include <span>

namespace gvirtus::bench {

// `args` are the arguments after "gpu". Returns the exit status: 0 when every run succeeded, 1
// when one failed (the others are still reported), 2 for bad usage or no CUDA device.
int run_gpu_mode(std::span<char* const> args);

}  // namespace gvirtus::bench
