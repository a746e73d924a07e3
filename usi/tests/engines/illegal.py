#!/usr/bin/env python3
"""A USI test engine that answers every `go` with `bestmove 5e5a`, a move that is illegal
from the start position (nothing stands on 5e). Exits on `quit` or when its input closes."""
import sys


def out(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


while True:
    line = sys.stdin.readline()
    if not line:
        break
    cmd = line.split()[:1]
    if cmd == ["usi"]:
        out("id name Illegal Test Engine")
        out("usiok")
    elif cmd == ["isready"]:
        out("readyok")
    elif cmd == ["go"]:
        out("info depth 1 score cp 0 pv 5e5a")
        out("bestmove 5e5a")
    elif cmd == ["quit"]:
        break
