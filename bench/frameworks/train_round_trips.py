"""train_round_trips: a small model's training steps, for counting what each step sends (issue 20).
Run it twice through gvirtus in driver mode with GVIRTUS_STATS=1, with 10 and with 30 steps: the
difference of the two tables over 20 is each step's calls, waited for (sync) and sent ahead
(async). On the simulated device the counts are what a GPU run sends; the times mean nothing.

    python3 bench/frameworks/train_round_trips.py mlp|cnn STEPS

mlp: two Linear layers and a ReLU (cuBLAS); cnn: two Conv2d, BatchNorm2d, SGD with momentum
(cuDNN).
"""
import sys

import torch

kind, steps = sys.argv[1], int(sys.argv[2])
torch.manual_seed(0)
if kind == "mlp":
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10))
    optimizer_options = {}
    x = torch.randn(64, 256)
else:
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
        torch.nn.Conv2d(16, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1),
        torch.nn.Flatten(), torch.nn.Linear(16, 10))
    optimizer_options = {"momentum": 0.9}
    x = torch.randn(8, 3, 32, 32)
model = model.cuda()
x = x.cuda()
y = torch.randint(0, 10, (x.shape[0],), device="cuda")
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, **optimizer_options)
loss_function = torch.nn.CrossEntropyLoss()


def step():
    optimizer.zero_grad()
    loss = loss_function(model(x), y)
    loss.backward()
    optimizer.step()


for _ in range(3):  # warm-up: kernels loaded, algorithms chosen
    step()
torch.cuda.synchronize()
for _ in range(steps):
    step()
torch.cuda.synchronize()
print("done", kind, steps)
