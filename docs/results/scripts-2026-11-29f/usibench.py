#!/usr/bin/env python3
"""Issue 53: `copper usi` simulations/s (its nps) for each binary, on three positions at
`go nodes N`, ROUNDS rounds alternating, one process per binary and round (start-up
excluded), the shipped model in int8 with the shipped players' checks and mix.

  usibench.py N ROUNDS BINARY...
"""
import os, re, subprocess, sys

MODEL = os.path.abspath(os.path.join(os.path.dirname(__file__), "../../../models/pocket-copper"))
PLAYER = f"checkpoint:{MODEL},mate=on,mate3=all,qmix=0.5,qscale=1000,reuse=off,precision=int8"
POSITIONS = ["startpos", "startpos moves 7g7f 3c3d", "startpos moves 7g7f 3c3d 2g2f 8c8d 2f2e"]

n, rounds, binaries = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
for r in range(rounds):
    for b in binaries:
        p = subprocess.Popen(["nice", "-n", "-5", b, "usi", "-v", "pocket-copper", "--player", PLAYER],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

        def send(s):
            p.stdin.write(s + "\n")
            p.stdin.flush()

        def until(token):
            last = None
            for line in p.stdout:
                if "nps" in line:
                    last = line
                if line.startswith(token):
                    return last

        send("usi"); until("usiok"); send("isready"); until("readyok")
        nps = []
        for pos in POSITIONS:
            send("position " + pos)
            send(f"go nodes {n}")
            nps.append(int(re.search(r"nps (\d+)", until("bestmove")).group(1)))
        send("quit")
        p.wait()
        print(os.path.basename(b), "round", r + 1, nps, flush=True)
