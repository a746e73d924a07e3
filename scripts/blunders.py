#!/usr/bin/env python3
"""Where a player's lost games were lost: replays each loss of PLAYER in an arena's
results.jsonl through Fairy-Stockfish (NODES a position, default 100,000) and prints the
evaluation from PLAYER's side every 10 plies and PLAYER's three moves that lost the most.

    scripts/blunders.py data/arena/NAME/results.jsonl PLAYER [NODES] [ENGINE]
"""
import json
import subprocess
import sys

MATE = 30000


class Engine:
    def __init__(self, command):
        self.p = subprocess.Popen([command], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.send("usi")
        self.wait_for("usiok")
        self.send("setoption name Threads value 1")
        self.send("isready")
        self.wait_for("readyok")

    def send(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()

    def wait_for(self, token):
        while True:
            line = self.p.stdout.readline()
            if not line:
                sys.exit(f"the engine exited before '{token}'")
            if line.split()[:1] == [token]:
                return

    def evaluate(self, sfen, moves, nodes):
        """(score for the side to move in centipawns, mates as ±(MATE − plies); best move)."""
        self.send(f"position sfen {sfen}" + (" moves " + " ".join(moves) if moves else ""))
        self.send(f"go nodes {nodes}")
        score = 0
        while True:
            words = self.p.stdout.readline().split()
            if not words:
                continue
            if words[0] == "info" and "score" in words:
                i = words.index("score")
                kind, value = words[i + 1], words[i + 2]
                if kind == "cp":
                    score = int(value)
                elif kind == "mate":
                    m = int(value)
                    score = MATE - abs(m) if (m > 0 or value == "+0") else -(MATE - abs(m))
            elif words[0] == "bestmove":
                return score, words[1]


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    path, player = sys.argv[1], sys.argv[2]
    nodes = int(sys.argv[3]) if len(sys.argv) > 3 else 100_000
    engine = Engine(sys.argv[4] if len(sys.argv) > 4 else "/usr/games/fairy-stockfish")
    for line_no, line in enumerate(open(path), 1):
        result = json.loads(line)
        for hand in result["hands"]:
            rec = hand["record"]
            if player not in (rec["black"], rec["white"]):
                continue
            side = "black" if rec["black"] == player else "white"
            outcome = rec["end"]["outcome"]
            winner = outcome.get("Win") if isinstance(outcome, dict) else None
            if winner is None or winner == side:
                continue
            moves, sfen = rec["moves"], rec["start_sfen"]
            black_first = sfen.split()[1] == "b"
            evals = [engine.evaluate(sfen, moves[:i], nodes) for i in range(len(moves))]

            def ours(i):
                return ((i % 2 == 0) == black_first) == (side == "black")

            losses = []
            for i in range(len(moves) - 1):
                if ours(i):
                    before, best = evals[i]
                    after = -evals[i + 1][0]
                    losses.append((before - after, i, moves[i], best, before, after))
            losses.sort(reverse=True)
            trajectory = [evals[i][0] if ours(i) else -evals[i][0] for i in range(0, len(moves), 10)]
            print(f"{path}:{line_no}: {len(moves)} plies, {player} {side}; its evaluation every 10 plies: {trajectory}")
            for loss, i, played, best, before, after in losses[:3]:
                print(f"   ply {i}: played {played} (engine's best {best}): {before} -> {after} cp, lost {loss}")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
