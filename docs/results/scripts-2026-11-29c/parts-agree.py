#!/usr/bin/env python3
"""Issue 50 (docs/BALANCE.md, "Do the parts agree?"): Black's score per part and start of the
start-family network's study, and the heterogeneity chi-square across parts (no draws were
played, so each game's variance is p(1 - p)); with --match, the price study's 1:1 match
(0.485 over 600 games) as a fifth sample of the seed cell. Run from the repository root."""
import csv, math, sys

def chi2_sf(x, k):
    a, x2, s, term, n = k / 2, x / 2, 0.0, 2 / k, 0
    while term > 1e-15:
        s += term; n += 1; term *= x2 / (a + n)
    return 1 - s * math.exp(-x2 + a * math.log(x2) - math.lgamma(a))

def het(v):
    N = sum(n for n, _ in v); p = sum(n * s for n, s in v) / N
    return sum(n * (s - p) ** 2 for n, s in v) / (p * (1 - p)), len(v) - 1

data = {}
for i in (1, 2, 3, 4):
    for r in csv.DictReader(open(f"docs/results/balance-starts100-part{i}-cells.csv")):
        data.setdefault(r["start"], []).append((int(r["games"]), float(r["black_score"])))
total, df = 0.0, 0
for start, v in data.items():
    c, d = het(v); total += c; df += d
    print(start, [(n, round(s, 3)) for n, s in v], f"chi2 {c:.2f} df {d} p {chi2_sf(c, d):.3f}")
print(f"all starts: chi2 {total:.2f} df {df} p {chi2_sf(total, df):.3f}")
if "--match" in sys.argv:
    c, d = het(data["seed"] + [(600, 0.485)])
    print(f"seed cell with the 1:1 match: chi2 {c:.2f} df {d} p {chi2_sf(c, d):.4f}")
