"""Perft with cshogi (Apery's C++ move generator), counted the usual way: the last ply
is the length of the legal-move list. Prints: nodes seconds."""
import sys
import time

import cshogi


def perft(board, depth):
    if depth == 1:
        return len(board.legal_moves)
    nodes = 0
    for m in board.legal_moves:
        board.push(m)
        nodes += perft(board, depth - 1)
        board.pop()
    return nodes


depth = int(sys.argv[1])
sfen = sys.argv[2] if len(sys.argv) > 2 else None
board = cshogi.Board(sfen) if sfen else cshogi.Board()
start = time.perf_counter()
nodes = perft(board, depth)
print(nodes, time.perf_counter() - start)
