#!/usr/bin/env python3
"""A USI test engine that never answers `usi` (nor anything else): the client's init
timeout must fire. It exits when its input closes."""
import sys

sys.stdout.write("Slow Test Engine, loading a very large evaluation file...\n")
sys.stdout.flush()
while sys.stdin.readline():
    pass
