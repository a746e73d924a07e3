#!/usr/bin/env python3
"""Old against new policy targets of a reanalysed set: for the positions whose record had a
full search and whose target was replaced, the mean top probability and entropy of each.
  target-sharpness.py RUN_DIR GEN   (e.g. /tmp/rx 2, after scripts-2026-11-29b/reanalysis-probe.rs)"""
import glob, math, os, sys
sys.path.insert(0, os.path.dirname(__file__))
from shard import rd
run, g = sys.argv[1], int(sys.argv[2])
mo = mn = eo = en = 0.0
n = 0
for c in glob.glob(f"{run}/reanalysed/gen-{g:04}/**/*.shard", recursive=True):
    o = c.replace(f"reanalysed/gen-{g:04}/", "")
    for x, y in zip(rd(o), rd(c)):
        if x["policy"] != y["policy"] and x["full"]:
            po = [p for _, p in x["policy"]]
            pn = [p for _, p in y["policy"]]
            mo += max(po); mn += max(pn)
            eo -= sum(p * math.log(p) for p in po if p > 0)
            en -= sum(p * math.log(p) for p in pn if p > 0)
            n += 1
print(f"{n} positions: top probability old {mo / n:.3f} new {mn / n:.3f}; entropy old {eo / n:.3f} new {en / n:.3f} nats")
