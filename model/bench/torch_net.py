"""PyTorch twin of model::Net, for throughput comparison only.

Same architecture as model/src/net.rs: 3x3 conv stem + BN + ReLU, `blocks` residual
blocks, conv policy head (1x1 conv+BN+ReLU, 1x1 conv with bias, flatten), WDL value head
(1x1 conv+BN+ReLU, flatten, linear+ReLU, linear(3)).

Prints one JSON object per measurement on stdout.
"""

import argparse
import contextlib
import json
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvBn(nn.Module):
    def __init__(self, cin, cout, k):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, padding=k // 2, bias=False)
        self.bn = nn.BatchNorm2d(cout)

    def forward(self, x):
        return self.bn(self.conv(x))


class ResBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.a = ConvBn(c, c, 3)
        self.b = ConvBn(c, c, 3)

    def forward(self, x):
        return F.relu(self.b(F.relu(self.a(x))) + x)


class Net(nn.Module):
    def __init__(self, planes, h, w, policy_planes, blocks, channels, pch=32, vch=4, vhidden=128):
        super().__init__()
        self.stem = ConvBn(planes, channels, 3)
        self.blocks = nn.Sequential(*[ResBlock(channels) for _ in range(blocks)])
        self.pconv = ConvBn(channels, pch, 1)
        self.pout = nn.Conv2d(pch, policy_planes, 1, bias=True)
        self.vconv = ConvBn(channels, vch, 1)
        self.fc1 = nn.Linear(vch * h * w, vhidden)
        self.fc2 = nn.Linear(vhidden, 3)

    def forward(self, x):
        x = self.blocks(F.relu(self.stem(x)))
        p = self.pout(F.relu(self.pconv(x))).flatten(1)
        v = F.relu(self.vconv(x)).flatten(1)
        v = self.fc2(F.relu(self.fc1(v)))
        return p, v


SYNC = lambda: None  # noqa: E731  (torch.cuda.synchronize on a GPU: time finished work)


def timed(fn, min_seconds, min_iters=3):
    fn()  # warm-up
    fn()
    SYNC()
    iters = 0
    start = time.perf_counter()
    while True:
        fn()
        SYNC()
        iters += 1
        elapsed = time.perf_counter() - start
        if elapsed >= min_seconds and iters >= min_iters:
            return iters, elapsed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--planes", type=int, default=100)
    ap.add_argument("--height", type=int, default=9)
    ap.add_argument("--width", type=int, default=9)
    ap.add_argument("--policy-planes", type=int, default=140)
    ap.add_argument("--sizes", default="6x64", help="comma list of BLOCKSxCHANNELS")
    ap.add_argument("--batches", default="1,16,64,256")
    ap.add_argument("--train-batch", type=int, default=256)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--no-train", action="store_true")
    ap.add_argument("--no-infer", action="store_true")
    ap.add_argument("--folded", action="store_true", help="also time torch.jit.freeze (BN folded)")
    ap.add_argument("--device", default="cpu", help="cpu or cuda[:N]")
    ap.add_argument("--dtype", default="f32", choices=["f32", "bf16"],
                    help="bf16: automatic mixed precision (torch.autocast), off the CPU only")
    args = ap.parse_args()
    global SYNC
    dev = torch.device(args.device)
    if dev.type == "cuda":
        SYNC = lambda: torch.cuda.synchronize(dev)  # noqa: E731
        # What a PyTorch user would switch on for fixed shapes: cuDNN picks its fastest
        # convolution per shape (the warm-up calls of `timed` run the search).
        torch.backends.cudnn.benchmark = True
    if args.dtype == "bf16" and dev.type == "cpu":
        ap.error("--dtype bf16 is measured off the CPU only")
    amp = (lambda: torch.autocast(dev.type, dtype=torch.bfloat16)) if args.dtype == "bf16" else contextlib.nullcontext

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    h, w = args.height, args.width
    for size in args.sizes.split(","):
        blocks, channels = (int(s) for s in size.split("x"))
        net = Net(args.planes, h, w, args.policy_planes, blocks, channels).to(dev)
        net.eval()
        for batch in ([] if args.no_infer else (int(b) for b in args.batches.split(","))):
            x = (torch.rand(batch, args.planes, h, w) < 0.1).float().to(dev)
            with torch.inference_mode(), amp():
                # Like burn's measurement: the input goes to the device and the output
                # comes back every call.
                iters, el = timed(lambda: [t.cpu() for t in net(x.cpu().to(dev))], args.seconds)
            print(json.dumps({"engine": "torch", "size": size, "kind": "infer", "batch": batch,
                              "dtype": args.dtype, "per_s": batch * iters / el}), flush=True)
            if args.folded:
                with torch.inference_mode():
                    frozen = torch.jit.freeze(torch.jit.trace(net, x))
                    iters, el = timed(lambda: frozen(x), args.seconds)
                print(json.dumps({"engine": "torch_frozen", "size": size, "kind": "infer",
                                  "batch": batch, "dtype": args.dtype, "per_s": batch * iters / el}), flush=True)
        if args.no_train:
            continue
        net.train()
        opt = torch.optim.AdamW(net.parameters(), lr=1e-3, weight_decay=1e-4)
        b = args.train_batch
        x = (torch.rand(b, args.planes, h, w) < 0.1).float().to(dev)
        pt = torch.softmax(torch.randn(b, args.policy_planes * h * w), dim=1).to(dev)
        vt = torch.softmax(torch.randn(b, 3), dim=1).to(dev)

        def step():
            opt.zero_grad(set_to_none=True)
            with amp():
                p, v = net(x)
                loss = -(pt * F.log_softmax(p.float(), dim=1)).sum(1).mean() - (vt * F.log_softmax(v.float(), dim=1)).sum(1).mean()
            loss.backward()
            opt.step()

        iters, el = timed(step, args.seconds)
        print(json.dumps({"engine": "torch", "size": size, "kind": "train", "batch": b,
                          "dtype": args.dtype, "per_s": b * iters / el}), flush=True)


if __name__ == "__main__":
    main()
