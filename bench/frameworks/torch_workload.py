"""torch_workload: the figures `gvirtus-bench frameworks` compares natively and through gvirtus
(issue 20). Prints one JSON object on standard output:

    {"framework": "torch", "version": "2.11.0+cu130", "device": "NVIDIA H200",
     "first_tensor_s": S,      seconds from the script's start (import torch included) to a first
                               CUDA tensor made and synchronised
     "matmul_ms": M,           median of fp32 1024x1024 matmuls, each synchronised
     "mlp_step_ms": M,         median of an MLP's training steps (forward, backward, SGD)
     "resnet18_step_ms": M,    median of ResNet-18 training steps, batch 16 of 3x224x224 (null
                               without torchvision)
     "mlp_losses": [...]}      the MLP's loss at every step, seeded: equal natively and remotely
                               within float tolerance

    python3 bench/frameworks/torch_workload.py [--quick] [--simulated]

--quick: 50 MLP steps and fewer repetitions (200 steps otherwise). --simulated: a few of each,
for the simulated device, where the figures mean nothing (tests/frameworks checks the shape of
the output). Without a CUDA device it prints "no CUDA device: <why>" on standard error and exits 2.
"""
import json
import statistics
import sys
import time

start = time.perf_counter()
import torch  # noqa: E402

quick = "--quick" in sys.argv[1:]
simulated = "--simulated" in sys.argv[1:]
if not torch.cuda.is_available():
    print("no CUDA device: torch.cuda.is_available() is False", file=sys.stderr)
    sys.exit(2)
first = torch.ones(1, device="cuda")
torch.cuda.synchronize()
first_tensor_s = time.perf_counter() - start
repeats = 3 if simulated else (10 if quick else 30)


def median_ms(step, times):
    step()  # warm-up: kernels loaded, algorithms chosen
    torch.cuda.synchronize()
    samples = []
    for _ in range(times):
        begin = time.perf_counter()
        step()
        torch.cuda.synchronize()
        samples.append((time.perf_counter() - begin) * 1000)
    return statistics.median(samples)


a = torch.randn(1024, 1024, device="cuda")
b = torch.randn(1024, 1024, device="cuda")
matmul_ms = median_ms(lambda: a @ b, repeats)

torch.manual_seed(0)
mlp = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1)).cuda()
sgd = torch.optim.SGD(mlp.parameters(), lr=0.05)
inputs = torch.randn(256, 32, generator=torch.Generator().manual_seed(1)).cuda()
target = inputs[:, :4].sum(dim=1, keepdim=True)
losses = []


def mlp_step():
    sgd.zero_grad()
    loss = torch.nn.functional.mse_loss(mlp(inputs), target)
    loss.backward()
    sgd.step()
    return loss


steps = 3 if simulated else (50 if quick else 200)
step_ms = []
for _ in range(steps):
    begin = time.perf_counter()
    loss = mlp_step()
    losses.append(loss.item())  # synchronises
    step_ms.append((time.perf_counter() - begin) * 1000)

resnet18_step_ms = None
try:
    import torchvision  # noqa: E402

    net = torchvision.models.resnet18(num_classes=10).cuda()
    net_sgd = torch.optim.SGD(net.parameters(), lr=0.01)
    images = torch.randn(16, 3, 224, 224, device="cuda")
    labels = torch.randint(0, 10, (16,), device="cuda")

    def resnet_step():
        net_sgd.zero_grad()
        torch.nn.functional.cross_entropy(net(images), labels).backward()
        net_sgd.step()

    resnet18_step_ms = median_ms(resnet_step, 2 if simulated else (5 if quick else 20))
except ImportError:
    pass

print(json.dumps({
    "framework": "torch",
    "version": torch.__version__,
    "device": torch.cuda.get_device_name(0),
    "first_tensor_s": first_tensor_s,
    "matmul_ms": matmul_ms,
    "mlp_step_ms": statistics.median(step_ms[1:] or step_ms),
    "resnet18_step_ms": resnet18_step_ms,
    "mlp_losses": losses,
}))
