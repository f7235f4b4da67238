"""jax_smoke: JAX through gvirtus (issue 20): the devices XLA sees, a jitted elementwise function
and a jitted matmul (XLA's own kernels, compiled on the client by its LLVM and ptxas, and, as it
tunes them, cuBLAS's).

    python3 bench/frameworks/jax_smoke.py              values, to diff a native run against
    gvirtus-run --mode driver --config etc/examples/shm.json -- python3 bench/frameworks/jax_smoke.py
    python3 bench/frameworks/jax_smoke.py --simulated  each step says it returned, without its
                                                       value (the simulated device computes
                                                       nothing: tests/frameworks)

JAX loads NVIDIA's libraries from its wheels and calls the driver, so it runs in driver mode;
it looks for /dev/nvidiactl before it tries CUDA, which gvirtus-run's preload answers. The last
line, on standard error, gives the wall time of the whole script.
"""
import sys
import time

start = time.perf_counter()
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

simulated = "--simulated" in sys.argv[1:]


def show(label, value):
    print(f"{label}: {'returned' if simulated else value}", flush=True)


devices = jax.devices()
print("devices:", len(devices), flush=True)
print("platform:", devices[0].platform, flush=True)
print("compute capability:", getattr(devices[0], "compute_capability", "?"), flush=True)
x = jnp.arange(16, dtype=jnp.float32)
axpy = jax.jit(lambda x, y: 2 * x + y)
show("elementwise jit", float(axpy(x, jnp.ones_like(x)).sum()))
a = (jnp.arange(64 * 48) % 7 - 3).astype(jnp.float32).reshape(64, 48)
b = ((jnp.arange(48 * 32) % 5) * 0.5).astype(jnp.float32).reshape(48, 32)
matmul = jax.jit(lambda a, b: a @ b)
show("matmul jit", float(matmul(a, b).block_until_ready().sum()))
print("done")
print(f"wall: {time.perf_counter() - start:.2f} s", file=sys.stderr)
