#!/usr/bin/env python3
"""A USI test engine that handshakes normally, then never answers `go`: after the first
`go` it reads and ignores everything (`stop`, `isready`, `quit` included) but still exits
when its input closes.

With --stubborn it instead ignores SIGTERM and its input altogether after `go` (a
process wedged for good, that only SIGKILL ends); it gives up by itself after 30 s so a
broken client cannot leave it behind for long."""
import signal
import sys
import time


def out(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


stubborn = "--stubborn" in sys.argv[1:]
searching = False
while True:
    line = sys.stdin.readline()
    if not line:
        break
    cmd = line.split()[:1]
    if searching:
        continue
    if cmd == ["usi"]:
        out("id name Hang Test Engine")
        out("usiok")
    elif cmd == ["isready"]:
        out("readyok")
    elif cmd == ["go"]:
        out("info depth 1 score cp 3 pv 7g7f")
        searching = True
        if stubborn:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            time.sleep(30)
            break
    elif cmd == ["quit"]:
        break
