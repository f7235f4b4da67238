"""torch_smoke: a first look at PyTorch through gvirtus (issue 20): device queries, elementwise
ops, fp32 and bf16 matmuls on small integers (exact in any summation order), a Conv2d forward
(cuDNN), a CUDA graph captured and replayed, and a seeded MLP trained a few steps (autograd, an
optimizer).

    python3 bench/frameworks/torch_smoke.py              values, to diff a native run against
    gvirtus-run --mode driver --config etc/examples/shm.json -- python3 bench/frameworks/torch_smoke.py
    python3 bench/frameworks/torch_smoke.py --simulated  each step says it returned, without its
                                                         value (the simulated device computes
                                                         nothing: tests/frameworks), 3 steps

The last line, on standard error, gives the wall time of the whole script.
"""
import sys
import time

start = time.perf_counter()
import torch  # noqa: E402

simulated = "--simulated" in sys.argv[1:]


def show(label, value):
    print(f"{label}: {'returned' if simulated else value}", flush=True)


print("cuda available:", torch.cuda.is_available(), flush=True)
if not torch.cuda.is_available():
    sys.exit(2)
print("devices:", torch.cuda.device_count())
print("capability:", torch.cuda.get_device_capability(0))
x = torch.arange(16, dtype=torch.float32, device="cuda")
show("elementwise", f"{(x * 2 + 1).sum().item()} {torch.sqrt(x * x).sum().item()}")
a = (torch.arange(64 * 48, device="cuda") % 7 - 3).float().reshape(64, 48)
b = ((torch.arange(48 * 32, device="cuda") % 5) * 0.5).float().reshape(48, 32)
show("matmul fp32", (a @ b).sum().item())
show("matmul bf16", (a.bfloat16() @ b.bfloat16()).float().sum().item())
conv = torch.nn.Conv2d(3, 8, 3, padding=1, bias=False).cuda()
with torch.no_grad():
    conv.weight.copy_((torch.arange(8 * 3 * 9, device="cuda") % 3 - 1).float().reshape(8, 3, 3, 3))
    image = (torch.arange(2 * 3 * 16 * 16, device="cuda") % 4).float().reshape(2, 3, 16, 16)
    show("conv2d", conv(image).sum().item())
# A graph captured on a side stream, as PyTorch's documentation does it, then replayed twice.
static_x = torch.arange(64, dtype=torch.float32, device="cuda")
side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):
    static_y = static_x * 2 + 1  # warm-up outside the capture
torch.cuda.current_stream().wait_stream(side)
graph = torch.cuda.CUDAGraph()
with torch.cuda.graph(graph):
    static_y = static_x * 2 + 1
static_x.copy_(torch.ones(64, device="cuda"))
graph.replay()
graph.replay()
show("graph replay", static_y.sum().item())
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.05)
inputs = torch.randn(256, 32, generator=torch.Generator().manual_seed(1)).cuda()
target = inputs[:, :4].sum(dim=1, keepdim=True)
steps = 3 if simulated else 20
for step in range(steps):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(inputs), target)
    loss.backward()
    opt.step()
    if simulated or step % 5 == 4:
        show(f"mlp step {step + 1}", f"loss {loss.item():.4f}")
torch.cuda.synchronize()
print("done")
print(f"wall: {time.perf_counter() - start:.2f} s", file=sys.stderr)
