"""Per-run mean over generations [lo, hi] of the training loss (all steps) against the
held-out loss, from each run's train/gen-NNNN.json, as a Markdown table (docs/ABLATIONS.md).
Usage: python3 scripts/window-gap.py LO HI RUN_DIR [RUN_DIR ...]"""
import json, sys
lo, hi = int(sys.argv[1]), int(sys.argv[2])
print("| arm | training loss (policy, value) | held-out loss (policy, value) | gap (policy) | uses a position | samples |")
print("|---|---|---|---|---|---|")
for d in sys.argv[3:]:
    rows = []
    for g in range(lo, hi + 1):
        try:
            j = json.load(open(f"{d}/train/gen-{g:04d}.json"))
        except FileNotFoundError:
            continue
        L = j["losses"]
        tp = sum(x["policy"] for x in L) / len(L)
        tv = sum(x["value"] for x in L) / len(L)
        vt, vp, vv = j["validation"]
        rows.append((tp, tv, vp, vv, j["uses"]["mean_uses"], j["uses"]["samples_drawn"]))
    if not rows:
        continue
    m = [sum(r[i] for r in rows) / len(rows) for i in range(6)]
    print(f"| {d} (gens {lo}–{hi}, n={len(rows)}) | {m[0]+m[1]:.3f} ({m[0]:.3f}, {m[1]:.3f}) | {m[2]+m[3]:.3f} ({m[2]:.3f}, {m[3]:.3f}) | {m[2]-m[0]:.2f} | {m[4]:.2f} | {m[5]:.0f} |")
