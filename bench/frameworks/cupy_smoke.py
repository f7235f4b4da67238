"""cupy_smoke: CuPy through gvirtus (issue 20): the device, cupy.arange(10).sum() (CuPy's own
kernels, compiled by NVRTC on the client, and CUB's reduction), a custom ElementwiseKernel, and
a matmul (cuBLAS).

    python3 bench/frameworks/cupy_smoke.py              values, to diff a native run against
    gvirtus-run --mode driver --config etc/examples/shm.json -- python3 bench/frameworks/cupy_smoke.py
    python3 bench/frameworks/cupy_smoke.py --simulated  each step says it returned, without its
                                                        value (the simulated device computes
                                                        nothing: tests/frameworks)

CuPy links NVIDIA's runtime statically and calls the driver, so it runs in driver mode. The last
line, on standard error, gives the wall time of the whole script.
"""
import sys
import time

start = time.perf_counter()
import cupy  # noqa: E402

simulated = "--simulated" in sys.argv[1:]


def show(label, value):
    print(f"{label}: {'returned' if simulated else value}", flush=True)


print("devices:", cupy.cuda.runtime.getDeviceCount(), flush=True)
print("capability:", cupy.cuda.Device(0).compute_capability, flush=True)
show("arange sum", int(cupy.arange(10).sum()))
axpy = cupy.ElementwiseKernel("float32 x, float32 y", "float32 z", "z = 2 * x + y", "gvirtus_axpy")
x = cupy.arange(16, dtype=cupy.float32)
show("elementwise kernel", float(axpy(x, cupy.ones_like(x)).sum()))
a = (cupy.arange(64 * 48) % 7 - 3).astype(cupy.float32).reshape(64, 48)
b = ((cupy.arange(48 * 32) % 5) * 0.5).astype(cupy.float32).reshape(48, 32)
show("matmul", float((a @ b).sum()))
cupy.cuda.Device().synchronize()
print("done")
print(f"wall: {time.perf_counter() - start:.2f} s", file=sys.stderr)
