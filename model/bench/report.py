"""Formats the JSON lines of torch_net.py and netbench into a comparison table."""

import json
import sys
from collections import defaultdict


def main(path):
    rows = defaultdict(dict)
    loads = []
    order = []
    for line in open(path):
        line = line.strip()
        if not line.startswith("{"):
            continue
        r = json.loads(line)
        if "load" in r:
            loads.append(r)
            continue
        key = (r["size"], r["kind"], r["batch"])
        if key not in rows:
            order.append(key)
        rows[key][r["engine"]] = r["per_s"]

    frozen = any("torch_frozen" in v for v in rows.values())
    head = ["size", "what", "batch", "torch/s"]
    if frozen:
        head.append("torch-frozen/s")
    head += ["burn-flex ref/s", "burn+conv3x3/s", "folded/s", "ref/torch", "burn/torch", "folded/torch"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for key in sorted(order, key=lambda k: (int(k[0].split("x")[0]) * 1000 + int(k[0].split("x")[1]), k[1], k[2])):
        size, kind, batch = key
        v = rows[key]
        t = v.get("torch")
        cells = [size, "inference" if kind == "infer" else "training", str(batch), f"{t:.0f}" if t else "-"]
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
    for l in loads:
        print(f"load average (1/5/15 min) {l.get('when')} {l.get('size', '')}: {l['load']}")


if __name__ == "__main__":
    main(sys.argv[1])
