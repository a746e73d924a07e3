//! Perft against numbers nobody here wrote (tests/data/perft.txt), and, for the variants
//! no other engine plays, against the independent reference generator (`rules-reference`).

use rules::{perft, Position, Setup, Variant};
use rules_reference::Reference;

struct Case {
    variant: String,
    sfen: String,
    depth: u32,
    nodes: u64,
}

fn cases() -> Vec<Case> {
    include_str!("../data/perft.txt")
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let f: Vec<&str> = l.split('|').map(str::trim).collect();
            Case { variant: f[0].into(), sfen: f[1].into(), depth: f[2].parse().unwrap(), nodes: f[3].parse().unwrap() }
        })
        .collect()
}

fn run(max_nodes: u64, min_nodes: u64) {
    let mut ran = 0;
    for c in cases().iter().filter(|c| c.nodes <= max_nodes && c.nodes >= min_nodes) {
        let v = Variant::builtin(&c.variant).unwrap();
        let pos = Position::from_sfen(v, &c.sfen).unwrap();
        assert_eq!(perft::perft(&pos, c.depth), c.nodes, "{} perft {} of {}", c.variant, c.depth, c.sfen);
        ran += 1;
    }
    assert!(ran > 0);
}

#[test]
fn perft_matches_independent_engines_up_to_20m_nodes() {
    run(20_000_000, 0);
}

#[test]
#[ignore = "547 M nodes: run with --ignored (about 15 s)"]
fn standard_shogi_perft_6() {
    run(u64::MAX, 20_000_001);
}

fn reference_perft(r: &Reference, s: &Setup, depth: u32) -> u64 {
    let moves = r.legal_moves(s);
    if depth == 1 {
        return moves.len() as u64;
    }
    moves.iter().map(|&m| reference_perft(r, &r.apply(s, m), depth - 1)).sum()
}

#[test]
fn pocket_copper_perft_matches_reference_generator() {
    let v = Variant::builtin("pocket-copper").unwrap();
    for (name, sfen) in v.start_family() {
        let pos = Position::from_sfen(v, &sfen).unwrap();
        assert_eq!(perft::perft(&pos, 3), reference_perft(&Reference::new(v), &pos.to_setup(), 3), "start {name}");
    }
}

#[test]
fn hand_shogi_perft_matches_reference_generator() {
    let v = Variant::builtin("hand-shogi").unwrap();
    let pos = Position::start(v);
    assert_eq!(perft::perft(&pos, 2), reference_perft(&Reference::new(v), &pos.to_setup(), 2));
}
