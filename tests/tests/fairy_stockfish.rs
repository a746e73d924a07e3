//! Cross-check of legal-move counts against Fairy-Stockfish (Debian package
//! `fairy-stockfish`, installed by `scripts/install-test-deps.sh`), an independent
//! implementation, on positions reached by random play in standard shogi and minishogi.
//!
//! Fairy-Stockfish lists a pawn drop that gives checkmate as a move (it scores it as a
//! loss instead of forbidding it; see shared/PERFT.md). We account for it exactly: the
//! counts must equal ours under a copy of the variant where that drop is allowed, and at
//! depth 1 every move Fairy-Stockfish has beyond ours must be a pawn drop that mates.

use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rules::{builtin_source, perft, Game, Position, Variant};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

const ENGINE: &str = "/usr/games/fairy-stockfish";

struct Engine {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Engine {
    fn start(variant: &str) -> Engine {
        let mut child = Command::new(ENGINE)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {ENGINE} ({e}); run scripts/install-test-deps.sh"));
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut e = Engine { child, stdin, stdout };
        e.send(&format!("usi\nsetoption name UCI_Variant value {variant}\nisready"));
        e.read_until("readyok");
        e
    }

    fn send(&mut self, s: &str) {
        writeln!(self.stdin, "{s}").unwrap();
        self.stdin.flush().unwrap();
    }

    fn read_until(&mut self, prefix: &str) -> Vec<String> {
        let mut lines = Vec::new();
        loop {
            let mut line = String::new();
            assert!(self.stdout.read_line(&mut line).unwrap() > 0, "fairy-stockfish closed its output");
            let line = line.trim().to_string();
            let done = line.starts_with(prefix);
            lines.push(line);
            if done {
                return lines;
            }
        }
    }

    /// Perft with its per-move breakdown.
    fn perft(&mut self, sfen: &str, depth: u32) -> (u64, HashMap<String, u64>) {
        self.send(&format!("position sfen {sfen}\ngo perft {depth}"));
        let lines = self.read_until("Nodes searched");
        let total = lines.last().unwrap().rsplit(' ').next().unwrap().parse().unwrap();
        let divide = lines
            .iter()
            .filter_map(|l| l.split_once(": "))
            .filter(|(m, _)| !m.contains(' '))
            .filter_map(|(m, n)| Some((m.to_string(), n.parse().ok()?)))
            .collect();
        (total, divide)
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.send("quit");
        let _ = self.child.wait();
    }
}

/// The variant with pawn-drop mate allowed, as Fairy-Stockfish generates it.
fn with_drop_mate_allowed(name: &str) -> &'static Variant {
    let text = builtin_source(name).unwrap().replace("drop_mate = \"illegal\"", "drop_mate = \"allowed\"");
    Variant::from_toml(&text, &[]).unwrap().leak()
}

fn random_positions(v: &'static Variant, count: usize, max_len: usize, seed: u64) -> Vec<String> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    while out.len() < count {
        let mut game = Game::new(Position::start(v), None);
        let len = rng.random_range(0..max_len);
        for _ in 0..len {
            let moves = game.legal_moves();
            let Some(&m) = moves.choose(&mut rng) else { break };
            game.play_unchecked(m);
        }
        if !game.is_over() {
            out.push(game.position().to_sfen());
        }
    }
    out
}

fn cross_check(name: &str, fs_name: &str, positions: usize, max_len: usize, depth_for: impl Fn(usize) -> u32) {
    let ours = Variant::builtin(name).unwrap();
    let fs_like = with_drop_mate_allowed(name);
    let mut engine = Engine::start(fs_name);
    let mut sfens = random_positions(ours, positions, max_len, 7);
    // The reference position of shared/PERFT.md, where a pawn drop would mate.
    if name == "shogi" {
        sfens.push("7nk/9/8G/9/9/9/9/9/4K4 b P 1".to_string());
    }
    let mut drop_mates_seen = 0;
    for (i, sfen) in sfens.iter().enumerate() {
        let depth = depth_for(i);
        let (fs_total, fs_divide) = engine.perft(sfen, depth);
        let like = Position::from_sfen(fs_like, sfen).unwrap();
        let got = perft::perft(&like, depth);
        if got != fs_total {
            let mine: HashMap<String, u64> = perft::divide(&like, depth).into_iter().map(|(m, n)| (like.move_to_usi(m), n)).collect();
            let diff: Vec<_> = fs_divide
                .iter()
                .filter(|(m, n)| mine.get(*m) != Some(n))
                .map(|(m, n)| format!("{m}: fs {n} ours {:?}", mine.get(m)))
                .chain(mine.keys().filter(|m| !fs_divide.contains_key(*m)).map(|m| format!("{m}: not in fs")))
                .collect();
            panic!("{name} perft {depth} of {sfen}: fairy-stockfish {fs_total}, ours {got}; differing moves: {diff:?}");
        }
        // Depth 1 under the real rules: the only extra moves may be mating pawn drops.
        let real = Position::from_sfen(ours, sfen).unwrap();
        let (_, fs_moves) = engine.perft(sfen, 1);
        let legal: Vec<String> = real.legal_moves().iter().map(|&m| real.move_to_usi(m)).collect();
        for m in &legal {
            assert!(fs_moves.contains_key(m), "{name}: our move {m} is not in fairy-stockfish's list for {sfen}");
        }
        for m in fs_moves.keys().filter(|m| !legal.contains(m)) {
            let mv = like.parse_usi(m).unwrap();
            let mut after = like.clone();
            after.play_unchecked(mv);
            assert!(
                m.starts_with("P*") && after.in_check() && !after.has_legal_move(),
                "{name}: fairy-stockfish move {m} in {sfen} is missing from ours and is not a mating pawn drop"
            );
            drop_mates_seen += 1;
        }
    }
    if name == "shogi" {
        assert!(drop_mates_seen >= 1, "the PERFT.md pawn-drop-mate position must show one mating drop");
    }
}

#[test]
fn standard_shogi_matches_fairy_stockfish_on_random_positions() {
    // 300 positions; depth 3 for every fifth, depth 2 otherwise.
    cross_check("shogi", "shogi", 300, 160, |i| if i % 5 == 0 { 3 } else { 2 });
}

#[test]
fn minishogi_matches_fairy_stockfish_on_random_positions() {
    cross_check("minishogi", "minishogi", 300, 120, |i| if i % 2 == 0 { 3 } else { 2 });
}
