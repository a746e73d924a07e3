#!/usr/bin/env python3
"""A USI test engine that answers each `go` with the next move given on its command line,
then `bestmove resign` once they run out. It plays no shogi: legality is the arena's job.

Usage: scripted.py [--delay-ms N] [--stray] [MOVE ...]
  --delay-ms N   wait N ms before each answer (any line, `stop` say, cuts it short)
  --stray        after each answer, print a second, stray `bestmove 1a1b` when the next
                 command arrives (a late duplicate answer: nothing asked for it)

Before `readyok` it reports the options it was given as `info string options N=V ...`,
and on each `go` it echoes the position as `info string position ...`. Exits on `quit` or
when its input closes.
"""
import os
import select
import sys

# Unbuffered, so that select() sees every line not yet read.
INPUT = os.fdopen(0, "rb", buffering=0)


PENDING = []


def read_line():
    if PENDING:
        return PENDING.pop(0)
    return INPUT.readline().decode("utf-8", "replace")


def out(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def main():
    args = sys.argv[1:]
    delay = 0.0
    if len(args) >= 2 and args[0] == "--delay-ms":
        delay = int(args[1]) / 1000.0
        args = args[2:]
    stray = False
    if args[:1] == ["--stray"]:
        stray = True
        args = args[1:]
    moves = list(args)
    options = []
    position = ""
    stray_due = False
    while True:
        line = read_line()
        if not line:
            return 0
        if stray_due:
            out("bestmove 1a1b")
            stray_due = False
        words = line.split()
        if not words:
            continue
        cmd = words[0]
        if cmd == "usi":
            out("id name Scripted Test Engine")
            out("id author arena tests")
            out("option name Foo type spin default 0 min 0 max 10")
            out("option name Debug Log File type string default <empty>")
            out("usiok")
        elif cmd == "setoption":
            rest = line.strip()[len("setoption"):].strip()
            if rest.startswith("name "):
                rest = rest[5:]
            name, _, value = rest.partition(" value ")
            options.append(name.strip() + "=" + value.strip())
        elif cmd == "isready":
            if options:
                out("info string options " + " ".join(options))
            out("readyok")
        elif cmd == "position":
            position = line.strip()
        elif cmd == "go":
            move = moves.pop(0) if moves else "resign"
            out("info string " + position)
            out("info depth 1 score cp 17 nodes 3 nps 3000 pv " + move)
            out("info string thinking")
            if delay > 0 and not PENDING:
                # Any line (`stop` in particular) cuts the delay short.
                ready, _, _ = select.select([INPUT], [], [], delay)
                if ready:
                    nxt = read_line()
                    if not nxt or nxt.split()[:1] == ["quit"]:
                        return 0
                    if nxt.split()[:1] != ["stop"]:
                        PENDING.append(nxt)
            out("info depth 2 seldepth 3 score cp -5 lowerbound nodes 40 nps 4000 time 10 pv " + move + " 3c3d")
            out("bestmove " + move + ("" if move in ("resign", "win") else " ponder 3c3d"))
            stray_due = stray
        elif cmd == "quit":
            return 0


if __name__ == "__main__":
    sys.exit(main())
