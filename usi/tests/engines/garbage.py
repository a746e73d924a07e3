#!/usr/bin/env python3
"""A USI test engine that handshakes normally (amid noise) and answers `go` badly.

Usage: garbage.py MODE, where MODE is
  empty  answer `go` with a bare `bestmove`
  bang   answer `go` with `bestmove !!!`
  noise  before `bestmove 7g7f`, print bytes that are not UTF-8, a 1 MB line, stray
         protocol words (`readyok`, `usiok`), 5000 `info` lines and junk
  flood  answer `go` with `info` lines, as fast as it can, and never `bestmove` (it stops
         reading its input then: it ends when killed or when its output closes)
Exits on `quit` or when its input closes."""
import sys

mode = sys.argv[1] if len(sys.argv) > 1 else "empty"
raw = sys.stdout.buffer


def out(line):
    raw.write(line.encode() + b"\n")
    raw.flush()


while True:
    line = sys.stdin.readline()
    if not line:
        break
    cmd = line.split()[:1]
    if cmd == ["usi"]:
        out("Garbage Test Engine ready to go!!")
        out("")
        out("id name Garbage Test Engine")
        out("option name")
        out("option type spin")
        out("usiok")
    elif cmd == ["isready"]:
        out("readyok")
    elif cmd == ["go"]:
        if mode == "empty":
            out("bestmove")
        elif mode == "bang":
            out("bestmove !!!")
        elif mode == "flood":
            n = 0
            while True:
                n += 1
                out("info depth %d score cp %d nodes %d pv 7g7f 3c3d" % (n % 99, n % 500, n))
        else:
            raw.write(b"\xff\xfe\x00\x80 not utf-8\r\n")
            raw.write(b"x" * (1 << 20) + b"\n")
            out("readyok")
            out("usiok")
            out("info score")
            out("info score cp")
            out("info depth x score mate")
            for i in range(5000):
                out("info depth %d score cp %d nodes %d pv 7g7f" % (i % 64, i, i * 10))
            out("info string bestmove 1a1b")
            out("%%% junk %%%")
            out("bestmove 7g7f ponder")
    elif cmd == ["quit"]:
        break
