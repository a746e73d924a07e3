#!/usr/bin/env python3
"""A USI test engine that handshakes normally and exits with status 3 on its first `go`
(after a word on stderr). Exits on `quit` or when its input closes."""
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
        out("id name Crash Test Engine")
        out("usiok")
    elif cmd == ["isready"]:
        out("readyok")
    elif cmd == ["go"]:
        out("info string about to crash")
        sys.stderr.write("crash.py: segmentation fault (simulated)\n")
        sys.stderr.flush()
        sys.exit(3)
    elif cmd == ["quit"]:
        break
