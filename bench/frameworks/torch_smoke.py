"""torch_smoke: a first look at PyTorch through gvirtus (issue 20), printed so that a native run
and a remoted run can be compared line by line (diff): device queries, elementwise ops, fp32 and
bf16 matmuls on small integers (exact in any summation order), and 20 steps of a seeded MLP whose
losses are printed to 4 decimals. The last line gives the wall time of the whole script.

    python3 bench/frameworks/torch_smoke.py
    gvirtus-run --mode driver --config etc/examples/shm.json -- python3 bench/frameworks/torch_smoke.py
"""
import sys
import time

start = time.perf_counter()
import torch  # noqa: E402

print("cuda available:", torch.cuda.is_available(), flush=True)
if not torch.cuda.is_available():
    sys.exit(2)
print("devices:", torch.cuda.device_count())
print("capability:", torch.cuda.get_device_capability(0))
x = torch.arange(16, dtype=torch.float32, device="cuda")
print("elementwise:", (x * 2 + 1).sum().item(), torch.sqrt(x * x).sum().item())
a = (torch.arange(64 * 48, device="cuda") % 7 - 3).float().reshape(64, 48)
b = ((torch.arange(48 * 32, device="cuda") % 5) * 0.5).float().reshape(48, 32)
print("matmul fp32:", (a @ b).sum().item())
print("matmul bf16:", (a.bfloat16() @ b.bfloat16()).float().sum().item())
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.05)
inputs = torch.randn(256, 32, generator=torch.Generator().manual_seed(1)).cuda()
target = inputs[:, :4].sum(dim=1, keepdim=True)
for step in range(20):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(inputs), target)
    loss.backward()
    opt.step()
    if step % 5 == 4:
        print(f"mlp step {step + 1}: loss {loss.item():.4f}")
torch.cuda.synchronize()
print(f"wall: {time.perf_counter() - start:.2f} s", file=sys.stderr)
