#![allow(dead_code)]
//! Helpers: positions from SFEN, and an exhaustive forced-win check that the tests use
//! to verify their hand-made puzzles with the rules engine itself.

use rules::{Color, Game, Move, Outcome, Position, Variant};

pub fn game(variant: &str, sfen: &str) -> Game {
    let v = Variant::builtin(variant).unwrap();
    let p = Position::from_sfen(v, sfen).unwrap_or_else(|e| panic!("test SFEN {sfen}: {e}"));
    Game::new(p, None)
}

pub fn usi(g: &Game, m: Move) -> String {
    g.position().move_to_usi(m)
}

pub fn after(g: &Game, m: Move) -> Game {
    let mut h = g.clone();
    h.play_unchecked(m);
    h
}

fn won_by(g: &Game, c: Color) -> bool {
    matches!(g.result(), Some(r) if r.outcome == Outcome::Win(c))
}

/// Whether the side to move in `g` wins by force within `n` of its own moves, whatever
/// the opponent plays (exhaustive).
pub fn wins_within(g: &Game, n: u32) -> bool {
    !winning_moves(g, n).is_empty()
}

/// The moves of the side to move that win by force within `n` of its own moves.
pub fn winning_moves(g: &Game, n: u32) -> Vec<Move> {
    let me = g.position().side_to_move();
    g.legal_moves().iter().copied().filter(|&m| move_wins_within(g, m, n, me)).collect()
}

/// Whether playing `m` wins for the side to move within `n` of its own moves (`m` included).
pub fn move_wins(g: &Game, m: Move, n: u32) -> bool {
    move_wins_within(g, m, n, g.position().side_to_move())
}

fn move_wins_within(g: &Game, m: Move, n: u32, me: Color) -> bool {
    if n == 0 {
        return false;
    }
    let h = after(g, m);
    if h.is_over() {
        return won_by(&h, me);
    }
    if n == 1 {
        return false;
    }
    h.legal_moves().iter().all(|&r| {
        let k = after(&h, r);
        if k.is_over() {
            won_by(&k, me)
        } else {
            k.legal_moves().iter().any(|&m2| move_wins_within(&k, m2, n - 1, me))
        }
    })
}

/// The first `count` positions of random Pocket Shogi Copper playouts (seeded) that `keep`
/// accepts.
pub fn playout_positions(seed: u64, count: usize, keep: impl Fn(&Game) -> bool) -> Vec<Game> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let v = Variant::builtin("pocket-copper").unwrap();
    let mut found = Vec::new();
    while found.len() < count {
        let mut g = Game::new(Position::start(v), Some(300));
        while !g.is_over() && found.len() < count {
            if keep(&g) {
                found.push(g.clone());
            }
            let moves = g.legal_moves();
            g.play_unchecked(moves[rng.random_range(0..moves.len())]);
        }
    }
    found
}

/// Each root move's Q after a search that visits every move exactly once (m = every move
/// and n = m: Sequential Halving's first phase), with `cfg`'s other settings and
/// uniform priors; asserts the single visits. Also the move the search chose.
pub fn q_after_one_visit_each(g: &Game, cfg: search::SearchConfig) -> (std::collections::HashMap<Move, f32>, Option<Move>) {
    let n = g.legal_moves().len() as u32;
    let cfg = search::SearchConfig { gumbel_m: 1000, simulations: n, ..cfg };
    let r = search::Search::with_seed(g.clone(), cfg, 3).run(&search::UniformEvaluator);
    let q = r
        .policy
        .iter()
        .zip(r.q_values.iter().zip(&r.visits))
        .map(|((m, _), (q, &visits))| {
            assert_eq!(visits, 1, "{}: each move visited once", usi(g, *m));
            (*m, q.expect("a visited move has a Q"))
        })
        .collect();
    (q, r.chosen)
}
