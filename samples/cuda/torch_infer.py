"""samples/cuda/torch_infer.py: an unmodified-PyTorch request loop for
latprof's GPU capture (C/C++ and PyTorch programs alike).

Each request ("request" NVTX range, through torch.cuda.nvtx) has stages
"preprocess" (CPU tensor work), "h2d" (tensor.to('cuda') from pageable
memory), "infer" (a small MLP: matmuls and activations on the GPU) and
"d2h" (.cpu(), which waits for the GPU).

--profile runs the PyTorch profiler (Kineto, CPU and CUDA activities) over
the middle third of the requests and prints how many CUDA kernels it saw
("torch_infer: profiler saw K CUDA kernels"): latprof must not take them away.

usage: python3 torch_infer.py [--requests N] [--batch B] [--profile]
Exit status: 0 ok, 2 bad arguments, 3 no torch or no CUDA device (one line).
"""
import argparse
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=100)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--profile", action="store_true")
    a = ap.parse_args()
    if a.requests <= 0 or a.batch <= 0:
        print("torch_infer: --requests and --batch must be positive", file=sys.stderr)
        return 2
    try:
        import torch
    except ImportError:
        print("torch_infer: PyTorch is not installed", file=sys.stderr)
        return 3
    if not torch.cuda.is_available():
        print("torch_infer: no CUDA device", file=sys.stderr)
        return 3
    nvtx = torch.cuda.nvtx
    dev = torch.device("cuda")
    torch.manual_seed(0)
    layers = [torch.nn.Linear(1024, 1024) for _ in range(4)]
    model = torch.nn.Sequential(*[m for l in layers for m in (l, torch.nn.GELU())]).to(dev).eval()
    with torch.inference_mode():
        model(torch.zeros(a.batch, 1024, device=dev))  # warm-up: cuBLAS handles, kernels
        torch.cuda.synchronize()
        prof = None
        for r in range(a.requests):
            if a.profile and r == a.requests // 3:
                from torch.profiler import ProfilerActivity, profile
                prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
                prof.__enter__()
            if prof is not None and r == 2 * a.requests // 3:
                torch.cuda.synchronize()
                prof.__exit__(None, None, None)
                kernels = sum(1 for e in prof.events()
                              if e.device_type == torch.autograd.DeviceType.CUDA)
                print(f"torch_infer: profiler saw {kernels} CUDA kernels")
                prof = None
            nvtx.range_push("request")
            nvtx.range_push("preprocess")
            x = torch.rand(a.batch, 1024) * 2 - 1
            x = (x - x.mean(dim=1, keepdim=True)) / (x.std(dim=1, keepdim=True) + 1e-5)
            nvtx.range_pop()
            nvtx.range_push("h2d")
            xd = x.to(dev)
            nvtx.range_pop()
            nvtx.range_push("infer")
            y = model(xd)
            nvtx.range_pop()
            nvtx.range_push("d2h")
            out = y.cpu()
            nvtx.range_pop()
            nvtx.range_pop()
    print(f"torch_infer: {a.requests} requests, checksum {float(out.sum()):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
