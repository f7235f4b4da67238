"""fake_workload: what a framework workload prints, without a framework or a GPU, so that
`gvirtus-bench frameworks --script` can be tested end to end on any machine (expect_report.cmake):
natively and through gvirtus-run it prints the same figures and loss curve, so every ratio is 1
and the curves do not differ. With FAKE_NO_DEVICE set it reports no device, as a workload does
on a machine without one."""
import json
import os
import sys

if os.environ.get("FAKE_NO_DEVICE"):
    print("no CUDA device: FAKE_NO_DEVICE is set", file=sys.stderr)
    sys.exit(2)

print(json.dumps({
    "framework": "fake",
    "version": "0",
    "device": "no device",
    "first_tensor_s": 0.5,
    "matmul_ms": 2.0,
    "mlp_step_ms": 1.0,
    "resnet18_step_ms": None,
    "mlp_losses": [1.0, 0.5, 0.25],
}))
