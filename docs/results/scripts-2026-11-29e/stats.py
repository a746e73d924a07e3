#!/usr/bin/env python3
"""The figures of 2026-11-29's evening that the arena does not print itself.

  stats.py pool PLAYER_PREFIX OPPONENT summary.json...
      a player's pooled score against one opponent over several opening sets, with the Elo
      interval from the game pairs (pentanomial variance, normal approximation)
  stats.py paired OPPONENT DIRS_A DIRS_B
      two players' results against the same opponent on the same openings and colours
      (comma-separated tournament directories named by seed, e.g. .../s9101, holding
      results.jsonl or results.jsonl.gz as docs/results/rate100ms-*/ do): the mean score
      difference a game and its t (paired)
  stats.py halves ladder.tsv FIRST MID LAST [generation]
      weighted least-squares slopes (Elo per CPU-hour, or per generation with the word
      `generation`: paused or shared stages inflate a run's CPU-hours) of a ladder over
      generations FIRST..MID and MID..LAST, each rung weighted by its interval (covariance
      ignored)
  stats.py cpu FIRST LAST summary.tsv...
      CPU-hours of self-play and training over generations FIRST..LAST of each run summary
      (`copper train`'s summary.tsv; seconds x the run's 2 threads), and their sum
"""
import csv, gzip, json, math, os, sys


def elo(s):
    return -400 * math.log10(1 / s - 1)


def pool(prefix, opp, files):
    w = d = l = 0
    pen = [0] * 5
    for f in files:
        for p in json.load(open(f))["pairings"]:
            if p["a"].startswith(prefix) and p["b"] == opp:
                w, d, l = w + p["wins"], d + p["draws"], l + p["losses"]
                pen = [x + y for x, y in zip(pen, p["pentanomial"])]
    n, pairs = w + d + l, sum(pen)
    score = (w + d / 2) / n
    vals = [0, 0.25, 0.5, 0.75, 1]
    m = sum(v * c for v, c in zip(vals, pen)) / pairs
    se = math.sqrt(sum(c * (v - m) ** 2 for v, c in zip(vals, pen)) / pairs / pairs)
    print(f"{prefix} vs {opp}: {w + d / 2}/{n} ({100 * score:.1f}%) Elo {elo(score):+.0f} "
          f"[{elo(score - 1.96 * se):+.0f}, {elo(score + 1.96 * se):+.0f}] pentanomial {pen}")


def scores(dirs, opp):
    out = {}
    for d in dirs:
        seed = d.rstrip("/").split("/")[-1]
        path = d + "/results.jsonl"
        lines = open(path) if os.path.exists(path) else gzip.open(path + ".gz", "rt")
        for line in lines:
            r = json.loads(line)
            if "job" not in r or opp not in (r["first"], r["second"]):
                continue
            me_first = r["second"] == opp
            out[(seed, r["opening"], me_first)] = r["first_score"] if me_first else 1 - r["first_score"]
    return out


def paired(opp, dirs_a, dirs_b):
    a, b = scores(dirs_a.split(","), opp), scores(dirs_b.split(","), opp)
    common = sorted(set(a) & set(b))
    diff = [a[k] - b[k] for k in common]
    n = len(diff)
    m = sum(diff) / n
    sd = math.sqrt(sum((x - m) ** 2 for x in diff) / (n - 1))
    print(f"{n} common games: A {sum(a[k] for k in common)} B {sum(b[k] for k in common)}; "
          f"mean difference {m:+.3f} a game, t {m / (sd / math.sqrt(n)):.2f}")


def halves(path, first, mid, last, x="cpu_hours"):
    rows = list(csv.DictReader(open(path), delimiter="\t"))
    for lo, hi in [(first, mid), (mid, last)]:
        sel = [r for r in rows if lo <= int(r["generation"]) <= hi]
        xs = [float(r[x]) for r in sel]
        ys = [float(r["elo"]) for r in sel]
        ws = [(3.92 / (float(r["elo_hi"]) - float(r["elo_lo"]))) ** 2 for r in sel]
        sw = sum(ws)
        mx = sum(w * x for w, x in zip(ws, xs)) / sw
        my = sum(w * y for w, y in zip(ws, ys)) / sw
        sxx = sum(w * (x - mx) ** 2 for w, x in zip(ws, xs))
        slope = sum(w * (x - mx) * (y - my) for w, x, y in zip(ws, xs, ys)) / sxx
        unit = "generation" if x == "generation" else "CPU-hour"
        print(f"generations {lo}-{hi}: {slope:+.2f} ± {1.96 / math.sqrt(sxx):.2f} Elo per {unit}")


def cpu(first, last, files):
    total = 0
    for f in files:
        rows = [r for r in csv.DictReader(open(f), delimiter="\t") if first <= int(r["generation"]) <= last]
        h = sum(float(r["selfplay_s"]) + float(r["train_s"]) for r in rows) * 2 / 3600
        total += h
        print(f"{f}: generations {first}-{last}, {len(rows)} rows, {h:.2f} CPU-hours")
    print(f"sum {total:.2f} CPU-hours")


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "pool":
        pool(args[0], args[1], args[2:])
    elif cmd == "paired":
        paired(*args)
    elif cmd == "cpu":
        cpu(int(args[0]), int(args[1]), args[2:])
    elif cmd == "halves":
        halves(args[0], *map(int, args[1:4]), *(["generation"] if args[4:5] == ["generation"] else []))
    else:
        sys.exit(__doc__)
