#!/usr/bin/env python3
"""Pools arena summaries (first pairing of each dir): wins+draws/2 over games, Elo with a 95% interval
(normal approximation on the score, as docs/ABLATIONS.md's tables)."""
import json, math, sys
W = D = L = 0
per = []
for d in sys.argv[1:]:
    p = json.load(open(f"{d}/summary.json"))["pairings"][0]
    W += p["wins"]; D += p["draws"]; L += p["losses"]
    per.append(f'{p["wins"] + p["draws"] / 2:g}/{p["games"]}')
n = W + D + L
s = (W + D / 2) / n
se = math.sqrt((W * (1 - s) ** 2 + D * (0.5 - s) ** 2 + L * s ** 2) / n / n)
elo = lambda x: -400 * math.log10(1 / min(max(x, 1e-9), 1 - 1e-9) - 1)
print(f"{' + '.join(per)} = {W + D / 2:g}/{n} ({100 * s:.1f}%), {elo(s):+.0f} [{elo(s - 1.96 * se):+.0f}, {elo(s + 1.96 * se):+.0f}]")
