#!/usr/bin/env python3
"""Reads game records with cshogi, an independent reader, for arena/tests/records.rs.

Usage: read_records.py FILE...   (.csa: CSA; .kif / .kifu: KIF)

Prints one JSON object a line, one per file, in order:
  {"path", "format", "sfen", "moves" (USI), "win" ("black" | "white" | "draw" | null),
   "endgame" (cshogi's CSA-style ending token), "names", "times", "info",
   "workarounds" (what was done to the text first), "error" (only when reading failed)}
Exits 1 if any file could not be read.

cshogi's KIF reader does not know `不成` (a move declining promotion, as Kakinoki
writes it): it drops that move without a word and misreads the rest. So `不成` is
removed from the text before cshogi sees it, and the object says so.
cshogi's KIF parse_file takes `.kifu` as UTF-8 and anything else as Shift-JIS; a `.kif`
file whose first line declares `encoding=UTF-8` is decoded here and given to parse_str.
"""

import json
import os
import sys

import cshogi
import cshogi.CSA
import cshogi.KIF

WIN = {cshogi.BLACK_WIN: "black", cshogi.WHITE_WIN: "white", cshogi.DRAW: "draw"}


def usi_moves(moves):
    return [cshogi.move_to_usi(m) for m in moves]


def read_csa(path):
    games = cshogi.CSA.Parser.parse_file(path, encoding="utf-8")
    if len(games) != 1:
        raise ValueError(f"{len(games)} games in one file")
    p = games[0]
    return {
        "format": "csa",
        "sfen": p.sfen,
        "moves": usi_moves(p.moves),
        "win": WIN.get(p.win),
        "endgame": p.endgame,
        "names": p.names,
        "times": list(p.times),
        "info": p.var_info,
        "workarounds": [],
    }


def read_kif(path):
    with open(path, "rb") as f:
        raw = f.read()
    utf8 = path.lower().endswith(".kifu") or b"encoding=UTF-8" in raw.split(b"\n", 1)[0]
    text = raw.decode("utf-8-sig" if utf8 else "cp932")
    workarounds = []
    if "不成" in text:
        text = text.replace("不成", "")
        workarounds.append("不成 removed")
    if path.lower().endswith(".kifu") and not workarounds:
        p = cshogi.KIF.Parser.parse_file(path)
    else:
        p = cshogi.KIF.Parser.parse_str(text)
    return {
        "format": "kif",
        "sfen": p.sfen,
        "moves": usi_moves(p.moves),
        "win": WIN.get(p.win),
        "endgame": p.endgame,
        "names": p.names,
        "times": list(p.times),
        "info": p.var_info,
        "workarounds": workarounds,
    }


def main(paths):
    failed = False
    for path in paths:
        out = {"path": path}
        try:
            ext = os.path.splitext(path)[1].lower()
            if ext == ".csa":
                out.update(read_csa(path))
            elif ext in (".kif", ".kifu"):
                out.update(read_kif(path))
            else:
                raise ValueError(f"unknown record extension '{ext}'")
        except Exception as e:  # reported per file, the others still read
            out["error"] = f"{type(e).__name__}: {e}"
            failed = True
        print(json.dumps(out, ensure_ascii=False), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
