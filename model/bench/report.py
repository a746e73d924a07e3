"""Formats the JSON lines of torch_net.py and netbench into a comparison table (the median
of the rounds when a measurement was repeated, ROUNDS in compare_torch.sh)."""

import json
import statistics
import sys
from collections import defaultdict


def main(path):
    rows = defaultdict(dict)
    loads = []
    order = []
    substitutes = set()
    for line in open(path):
        line = line.strip()
        if not line.startswith("{"):
            continue
        r = json.loads(line)
        if "load" in r:
            loads.append(r)
            continue
        key = (r["size"], r["kind"], r["batch"], r.get("dtype", "f32"))
        if key not in rows:
            order.append(key)
        rows[key].setdefault(r["engine"], []).append(r["per_s"])
        if r.get("burn_dtype"):
            substitutes.add((r["dtype"], r["burn_dtype"]))
    rounds = max((len(x) for v in rows.values() for x in v.values()), default=0)
    rows = {k: {e: statistics.median(x) for e, x in v.items()} for k, v in rows.items()}

    frozen = any("torch_frozen" in v for v in rows.values())
    dtypes = len({k[3] for k in rows}) > 1
    head = ["size", "what", "batch"] + (["dtype"] if dtypes else []) + ["torch/s"]
    if frozen:
        head.append("torch-frozen/s")
    head += ["burn-flex ref/s", "burn+conv3x3/s", "folded/s", "ref/torch", "burn/torch", "folded/torch"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for key in sorted(order, key=lambda k: (int(k[0].split("x")[0]) * 1000 + int(k[0].split("x")[1]), k[1], k[2], k[3])):
        size, kind, batch, dtype = key
        v = rows[key]
        t = v.get("torch")
        cells = [size, "inference" if kind == "infer" else "training", str(batch)]
        cells += [dtype] if dtypes else []
        cells += [f"{t:.0f}" if t else "-"]
        if frozen:
            cells.append(f"{v['torch_frozen']:.0f}" if "torch_frozen" in v else "-")
        for e in ("burn_ref", "burn", "folded"):
            x = v.get(e)
            cells.append(f"{x:.0f}" if x else "-")
        for e in ("burn_ref", "burn", "folded"):
            x = v.get(e)
            cells.append(f"{x / t:.2f}x" if x and t else "-")
        print("| " + " | ".join(cells) + " |")
    print()
    for asked, ran in sorted(substitutes):
        print(f"(burn rows marked {asked} ran in {ran}: the backend has no {asked})")
    if rounds > 1:
        print(f"(each figure: the median of {rounds} rounds)")
    for l in loads:
        print(f"load average (1/5/15 min) {l.get('when')} {l.get('size', '')}: {l['load']}")


if __name__ == "__main__":
    main(sys.argv[1])
