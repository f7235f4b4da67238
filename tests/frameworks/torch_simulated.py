"""PyTorch on gvirtus's libcuda.so.1 against the simulated device (tests/frameworks): what a
first user runs - the device found, tensors made and computed on, fp32 and bf16 matmuls (cuBLAS
and cuBLASLt), a small model trained a few steps (autograd, an optimizer) - reaches the backend
and returns. The simulated device computes nothing, so values are not printed: each step prints
that it returned, and the test reads the kernels the backend recorded."""
import sys

import torch

print("cuda available:", torch.cuda.is_available(), flush=True)
if not torch.cuda.is_available():
    sys.exit(2)
print("devices:", torch.cuda.device_count())
print("name:", torch.cuda.get_device_name(0))
x = torch.ones(4, device="cuda")
y = (x * 2 + 1).sum()
y.item()
print("elementwise: returned")
a = torch.ones(64, 48, device="cuda")
b = torch.ones(48, 32, device="cuda")
(a @ b).sum().item()
print("matmul fp32: returned")
(a.bfloat16() @ b.bfloat16()).float().sum().item()
print("matmul bf16: returned")
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.05)
inputs = torch.randn(256, 32, generator=torch.Generator().manual_seed(1)).cuda()
target = inputs[:, :4].sum(dim=1, keepdim=True)
for step in range(3):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(inputs), target)
    loss.backward()
    opt.step()
loss.item()
torch.cuda.synchronize()
print("training steps: returned")
print("done")
