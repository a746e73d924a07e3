//! The search's cheap leaf checks (`rules/src/leafcheck.rs`) answer exactly what the
//! plain ones answer, move for move: `Position::winning_move_among` against a naive
//! definition of a win in one written here (every legal move played, the opponent's
//! moves counted) and against `Position::winning_move`; `Game::checkmate_within_fast`
//! against `Game::checkmate_within` with and without a position budget;
//! `Position::has_legal_move_king_first` against the legal-move count (the check
//! candidates, crate-internal, are tested in `src/leafcheck.rs`). On positions of
//! random playouts of every shipped variant, half of whose moves are checks where there
//! are any (so that mates and near-mates are common), and on the hand-made positions of
//! `winning_move.rs`.

mod common;
use common::*;
use rand::{Rng, SeedableRng};
use rules::{DropMate, Game, Move, MoveKind, Position};

/// The first legal move (in `legal_moves` order) that wins at once: the mover's king onto
/// its flag square by a board or pocket move, or a check that leaves the opponent no
/// legal move, unless it is the drop of a piece whose drop mate loses.
fn naive_win_in_one(p: &Position) -> Option<Move> {
    let v = p.variant();
    let them_have_king = p.king_square(!p.side_to_move()).is_some();
    p.legal_moves().iter().copied().find(|&m| {
        let mut c = p.clone();
        c.play_unchecked(m);
        let dropped = match m.kind() {
            MoveKind::Drop { kind, .. } | MoveKind::PocketDrop { kind, .. } => Some(kind),
            _ => None,
        };
        if dropped.is_none() && c.flag_reached() {
            return true;
        }
        let mate = them_have_king && c.in_check() && c.legal_moves().is_empty();
        mate && !dropped.is_some_and(|k| v.kind(k).drop_mate == DropMate::Loses)
    })
}

/// Positions of random playouts: at each ply a check with probability ½ where there is
/// one, else any legal move.
fn positions(variant_name: &str, games: usize, seed: u64) -> Vec<Game> {
    let v = variant(variant_name);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    for _ in 0..games {
        let mut g = Game::new(Position::start(v), Some(300));
        while !g.is_over() {
            out.push(g.clone());
            let moves = g.legal_moves();
            let checks: Vec<Move> = moves
                .iter()
                .copied()
                .filter(|&m| {
                    let mut c = g.position().clone();
                    c.play_unchecked(m);
                    c.in_check()
                })
                .collect();
            let m =
                if !checks.is_empty() && rng.random::<bool>() { checks[rng.random_range(0..checks.len())] } else { moves[rng.random_range(0..moves.len())] };
            g.play_unchecked(m);
        }
    }
    out
}

const VARIANTS: [&str; 4] = ["pocket-copper", "shogi", "hand-shogi", "minishogi"];

#[test]
fn the_cheap_win_in_one_is_the_naive_one_move_for_move() {
    for (i, name) in VARIANTS.iter().enumerate() {
        let (mut wins, mut n) = (0, 0);
        for g in positions(name, 60, 11 + i as u64) {
            let p = g.position();
            let expected = naive_win_in_one(p);
            let legal = p.legal_moves();
            assert_eq!(p.winning_move_among(&legal), expected, "{name}: {}", p.to_sfen());
            assert_eq!(p.winning_move(), expected, "{name}: the plain check, {}", p.to_sfen());
            assert_eq!(p.winning_move_fast(), expected, "{name}: {}", p.to_sfen());
            assert_eq!(p.has_legal_move_king_first(), !legal.is_empty(), "{name}: {}", p.to_sfen());
            wins += expected.is_some() as usize;
            n += 1;
        }
        // The sample has wins in one to miss.
        assert!(wins * 50 > n, "{name}: only {wins} wins in one among {n} positions");
    }
}

#[test]
fn the_cheap_win_in_one_agrees_on_the_hand_made_positions() {
    for (name, sfen) in [
        ("pocket-copper", "8k/9/8P/9/9/9/9/9/4K4 b G 1 -"),
        ("pocket-copper", "8k/9/9/9/9/9/9/9/4K4 b G 1 -"),
        ("shogi", "8k/9/7GP/9/9/9/9/9/4K4 b - 1"),
        ("pocket-copper", "9/4K4/9/9/9/9/9/9/k8 b - 1 -"),
        ("pocket-copper", "7pk/7s1/7G1/9/9/9/9/9/4K4 b P 1 -"),
        // Discovered checks: the rook behind the silver, the bishop behind the gold.
        ("shogi", "4k4/9/4S4/9/9/9/9/9/4RK3 b - 1"),
        ("shogi", "8k/9/6G2/9/9/9/2B6/9/4K4 b - 1"),
        // A king next to its flag square with the opponent's king in the corner.
        ("pocket-copper", "k8/9/9/9/9/9/9/4K4/9 w - 1 -"),
    ] {
        let p = pos(variant(name), sfen);
        assert_eq!(p.winning_move_among(&p.legal_moves()), naive_win_in_one(&p), "{name}: {sfen}");
        assert_eq!(p.winning_move(), naive_win_in_one(&p), "{name}: {sfen}");
    }
}

#[test]
fn the_cheap_mate_in_three_is_the_plain_one_move_for_move() {
    for (i, name) in VARIANTS.iter().enumerate() {
        let (mut found, mut n) = (0, 0);
        for (j, g) in positions(name, 12, 101 + i as u64).into_iter().enumerate() {
            // Every third position (the search is the slow part of this test).
            if j % 3 != 0 {
                continue;
            }
            for budget in [200, 20] {
                let expected = g.checkmate_within(3, budget);
                assert_eq!(g.checkmate_within_fast(3, budget), expected, "{name}, budget {budget}: {}", g.position().to_sfen());
                found += expected.is_some() as usize;
            }
            assert_eq!(g.checkmate_within_fast(1, 200), g.checkmate_within(1, 200), "{name}: {}", g.position().to_sfen());
            n += 1;
        }
        assert!(found > 0, "{name}: no mate in three among {n} positions");
    }
}

/// Everything a caller can read of a game.
fn seen(g: &Game) -> (String, Vec<Move>, Option<rules::GameResult>, usize, Vec<Move>) {
    (g.position().to_sfen(), g.moves().to_vec(), g.result(), g.repetitions(), g.legal_moves().to_vec())
}

/// `Game::play_line_unchecked` (a search's path, judged once at its end) is the game
/// played move by move: from every position of random playouts, lines of one to six of
/// the playout's own moves, their ends among them every way a game ends here (mate, the
/// flag, the ply limit); and lines that end in fourfold repetition, plain and by
/// perpetual check, whose verdict only the whole history gives.
#[test]
fn a_line_played_at_once_is_the_game_played_move_by_move() {
    for (i, name) in VARIANTS.iter().enumerate() {
        let games = positions(name, 20, 301 + i as u64);
        let mut ended = 0;
        for (j, g) in games.iter().enumerate() {
            // The positions of one playout follow one another in `games`.
            let later: Vec<&Game> = games[j + 1..].iter().take(6).take_while(|h| h.moves().starts_with(g.moves())).collect();
            for h in later {
                let line = &h.moves()[g.ply()..];
                let mut at_once = g.clone();
                at_once.play_line_unchecked(line);
                assert_eq!(seen(&at_once), seen(h), "{name}: {} then {line:?}", g.position().to_sfen());
            }
            // The playout's last move, as a line's end: the game ends there.
            if games.get(j + 1).is_none_or(|h| !h.moves().starts_with(g.moves())) {
                let mut one_by_one = g.clone();
                let legal = g.legal_moves();
                let ends = |&&m: &&Move| {
                    let mut h = g.clone();
                    h.play_unchecked(m);
                    h.is_over()
                };
                let m = *legal.iter().find(ends).unwrap_or(&legal[0]);
                one_by_one.play_unchecked(m);
                let mut at_once = g.clone();
                at_once.play_line_unchecked(&[m]);
                assert_eq!(seen(&at_once), seen(&one_by_one), "{name}: {}", g.position().to_sfen());
                ended += one_by_one.is_over() as usize;
            }
        }
        assert!(ended > 0, "{name}: no line ended a game");
    }
    for (name, sfen, shuffle) in [
        // Kings stepping back and forth: the start's fourth occurrence is a draw.
        ("shogi", "4k4/9/9/9/9/9/9/9/4K4 b - 1", ["5i5h", "5a5b", "5h5i", "5b5a"]),
        // Black's rook checks with every move of its own: perpetual check, which Black loses.
        ("shogi", "R8/4k4/9/9/9/9/9/9/4K4 b - 1", ["9a9b", "5b5a", "9b9a", "5a5b"]),
    ] {
        let start = pos(variant(name), sfen);
        let mut one_by_one = Game::new(start.clone(), None);
        let mut replayed = one_by_one.clone();
        let mut line = Vec::new();
        for u in shuffle.iter().cycle().take(12) {
            assert!(!one_by_one.is_over(), "{name}: {sfen} ended before {u}");
            line.push(one_by_one.play_usi(u).unwrap());
        }
        assert!(one_by_one.is_over(), "{name}: {sfen} repeats to its end");
        replayed.play_line_unchecked(&line[..11]);
        replayed.play_line_unchecked(&line[11..]);
        let mut at_once = Game::new(start, None);
        at_once.play_line_unchecked(&line);
        assert_eq!(seen(&at_once), seen(&one_by_one), "{name}: {sfen}");
        assert_eq!(seen(&replayed), seen(&one_by_one), "{name}: {sfen}");
    }
}
