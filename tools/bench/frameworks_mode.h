// `gvirtus-bench frameworks`: a framework's figures natively and through gvirtus over each
// transport, in one run (issue 20). Runs bench/frameworks/torch_workload.py (time to the first
// CUDA tensor, a matmul, an MLP and a ResNet-18 training step, the MLP's loss curve) with
// python3 once natively, then through gvirtus-run in driver mode against a gvirtus-backend child
// with the cudart and cuda plugins per transport, and reports remote/native ratios and how far
// the remote loss curve strays from the native one. Without a usable CUDA device it stops at the
// native run: it prints "no CUDA device: <why>" and exits 2.
#pragma once

#include <span>

namespace gvirtus::bench {

// `args` are the arguments after "frameworks". Returns the exit status: 0 when every run
// succeeded, 1 when one failed (the others are still reported), 2 for bad usage or no device.
int run_frameworks_mode(std::span<char* const> args);

}  // namespace gvirtus::bench
