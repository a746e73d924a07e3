//! Round-trips and symmetries of the encodings, on random positions of every variant.

use encoding::{ActionSpace, InputPlanes, ACTION_VERSION, PLANES_VERSION};
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rules::{Game, Move, MoveKind, Position, Setup, Square, Variant, BUILTIN};
use std::collections::HashSet;

fn random_positions(v: &'static Variant, count: usize, seed: u64) -> Vec<(Position, usize)> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    for start in v.start_family() {
        let start = Position::from_sfen(v, &start.1).unwrap();
        for _ in 0..count {
            let mut g = Game::new(start.clone(), None);
            let len = rng.random_range(0..120);
            for _ in 0..len {
                let moves = g.legal_moves();
                let Some(&m) = moves.choose(&mut rng) else { break };
                g.play_unchecked(m);
            }
            out.push((g.position().clone(), g.ply()));
        }
    }
    out
}

#[test]
fn every_legal_move_round_trips_through_its_index() {
    for name in BUILTIN {
        let v = Variant::builtin(name).unwrap();
        let actions = ActionSpace::new(v);
        for (pos, _) in random_positions(v, 60, 1) {
            let side = pos.side_to_move();
            let mut seen = HashSet::new();
            for &m in &pos.legal_moves() {
                let i = actions.encode(side, m);
                assert!(i < actions.size());
                assert_eq!(actions.decode(side, i), Some(m), "{name}: {} in {}", pos.move_to_usi(m), pos.to_sfen());
                assert!(seen.insert(i), "{name}: two legal moves share index {i}");
            }
        }
    }
}

fn mirror_square(v: &Variant, sq: Square) -> Square {
    let (f, r) = v.geometry.coords(sq);
    v.geometry.square_at((v.geometry.files - 1 - f) as i8, r as i8).unwrap()
}

fn mirror_position(pos: &Position) -> Position {
    let v = pos.variant();
    let s = pos.to_setup();
    let mut board = vec![None; s.board.len()];
    for (i, p) in s.board.iter().enumerate() {
        board[mirror_square(v, Square::new_unchecked(i as u8)).index()] = *p;
    }
    let mirrored = Setup { board, ..s };
    Position::from_sfen(v, &mirrored.to_sfen(v)).unwrap()
}

fn mirror_move(v: &Variant, m: Move) -> Move {
    match m.kind() {
        MoveKind::Board { from, to, promote } => Move::board(mirror_square(v, from), mirror_square(v, to), promote),
        MoveKind::Drop { kind, to } => Move::drop(kind, mirror_square(v, to)),
        MoveKind::PocketIn { from } => Move::pocket_in(mirror_square(v, from)),
        MoveKind::PocketDrop { kind, to } => Move::pocket_drop(kind, mirror_square(v, to)),
    }
}

#[test]
fn mirror_maps_planes_and_policy_consistently() {
    for name in BUILTIN {
        let v = Variant::builtin(name).unwrap();
        assert!(v.mirror_symmetric(), "{name} pieces move symmetrically");
        let planes = InputPlanes::new(v);
        let actions = ActionSpace::new(v);
        for (pos, ply) in random_positions(v, 20, 2) {
            let mirrored = mirror_position(&pos);
            let mut a = vec![0.0; planes.size()];
            let mut b = vec![0.0; planes.size()];
            let mut m = vec![0.0; planes.size()];
            planes.encode(&pos, 1, ply, 512, &mut a);
            planes.encode(&mirrored, 1, ply, 512, &mut b);
            planes.mirror(&a, &mut m);
            assert_eq!(m, b, "{name}: mirrored planes of {}", pos.to_sfen());
            let legal_mirrored: HashSet<Move> = mirrored.legal_moves().into_iter().collect();
            for &mv in &pos.legal_moves() {
                let image = mirror_move(v, mv);
                assert!(legal_mirrored.contains(&image), "{name}: mirror of a legal move is legal");
                let side = pos.side_to_move();
                assert_eq!(actions.mirror(actions.encode(side, mv)), actions.encode(side, image));
            }
        }
    }
}

#[test]
fn planes_are_seen_from_the_side_to_move() {
    // The shogi start is symmetric under rotation, so seen by Black or by White to move
    // it must encode the same, except for the side-to-move plane.
    let v = Variant::builtin("shogi").unwrap();
    let planes = InputPlanes::new(v);
    let black = Position::start(v);
    let white = Position::from_sfen(v, "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1").unwrap();
    let (mut a, mut b) = (vec![0.0; planes.size()], vec![0.0; planes.size()]);
    planes.encode(&black, 1, 0, 512, &mut a);
    planes.encode(&white, 1, 0, 512, &mut b);
    let side = planes.describe().into_iter().find(|r| r.what == "side to move is Black").unwrap();
    let n = 81;
    let differing: Vec<usize> = (0..planes.size()).filter(|&i| a[i] != b[i]).map(|i| i / n).collect();
    assert!(!differing.is_empty() && differing.iter().all(|&p| p == side.first));
}

/// What each encoding version produces, one row per (version, variant), appended when a
/// version is bumped and never edited: a row is the contract that models and records of
/// that version rely on. The hash covers the encoded planes and action indices of fixed
/// positions (see `content_hash`), not only the layout's description, so any change to
/// what the network reads or writes fails here until the version is bumped and a row added.
const PINNED: &[(u32, u32, &str, u64)] = &[
    // (PLANES_VERSION, ACTION_VERSION, variant, content hash)
    (1, 1, "pocket-copper", 0xea418f709b61c206),
    (1, 1, "shogi", 0x742df1195813e85a),
    (1, 1, "hand-shogi", 0x1ca77fce8290bdf4),
    (1, 1, "minishogi", 0x94583263b5df88b1),
];

/// FNV-1a (64-bit) over 32-bit words: stable across platforms and Rust versions.
fn fnv(hash: &mut u64, word: u32) {
    for b in word.to_le_bytes() {
        *hash ^= b as u64;
        *hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
}

/// Plays, from every start of the variant, 80 plies chosen by a fixed generator among the
/// legal moves sorted by their USI text (so the move generator's order does not matter);
/// every 8th position's planes (with varying repetition counts and progress, and the
/// mirror) and the action index of every legal move there go into the hash, with the
/// layout's description.
fn content_hash(v: &'static Variant) -> u64 {
    let planes = InputPlanes::new(v);
    let actions = ActionSpace::new(v);
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    for b in format!("{} | {}", planes.fingerprint(), actions.fingerprint()).bytes() {
        fnv(&mut hash, b as u32);
    }
    let mut rng = ChaCha8Rng::seed_from_u64(20261123);
    let (mut buf, mut mirrored) = (vec![0.0; planes.size()], vec![0.0; planes.size()]);
    for (_, sfen) in v.start_family() {
        let mut g = Game::new(Position::from_sfen(v, &sfen).unwrap(), None);
        for ply in 0..80usize {
            let mut moves: Vec<(String, Move)> = g.legal_moves().into_iter().map(|m| (g.position().move_to_usi(m), m)).collect();
            if moves.is_empty() {
                break;
            }
            moves.sort_by(|a, b| a.0.cmp(&b.0));
            if ply % 8 == 0 {
                planes.encode(g.position(), 1 + ply % 3, g.ply(), 160, &mut buf);
                planes.mirror(&buf, &mut mirrored);
                buf.iter().chain(&mirrored).for_each(|x| fnv(&mut hash, x.to_bits()));
                let side = g.position().side_to_move();
                for (_, m) in &moves {
                    let i = actions.encode(side, *m);
                    fnv(&mut hash, i as u32);
                    fnv(&mut hash, actions.mirror(i) as u32);
                }
            }
            let m = moves[rng.random_range(0..moves.len())].1;
            g.play_unchecked(m);
        }
    }
    hash
}

#[test]
fn layouts_are_pinned_to_their_versions() {
    // If this fails, what the network reads or writes changed: bump PLANES_VERSION and/or
    // ACTION_VERSION (so old models and records are refused, not misread) and append rows
    // for the new versions to PINNED; never edit an existing row.
    let mut missing = Vec::new();
    for name in BUILTIN {
        let v = Variant::builtin(name).unwrap();
        let got = content_hash(v);
        match PINNED.iter().find(|&&(p, a, n, _)| (p, a, n) == (PLANES_VERSION, ACTION_VERSION, name)) {
            Some(&(_, _, _, pinned)) => assert_eq!(
                got, pinned,
                "{name}: the encoding of version (planes {PLANES_VERSION}, actions {ACTION_VERSION}) changed; bump a version and add a row"
            ),
            None => missing.push(format!("    ({PLANES_VERSION}, {ACTION_VERSION}, \"{name}\", {got:#018x}),")),
        }
    }
    assert!(missing.is_empty(), "no pinned row for the current versions; append:\n{}", missing.join("\n"));
    // Rows of every earlier version stay: the history may grow, never shrink.
    for version in 1..=PLANES_VERSION.max(ACTION_VERSION) {
        assert!(PINNED.iter().any(|&(p, a, _, _)| p == version || a == version), "the rows of version {version} were removed");
    }
}

#[test]
fn the_content_hash_sees_a_one_value_change() {
    // The pin is only as good as its hash: flipping one plane value or one action index
    // of the hashed stream changes it.
    let mut a = 0xcbf2_9ce4_8422_2325u64;
    let mut b = a;
    for (i, x) in [0.0f32, 1.0, 0.5, 1.0].iter().enumerate() {
        fnv(&mut a, x.to_bits());
        fnv(&mut b, if i == 2 { 0.25f32.to_bits() } else { x.to_bits() });
    }
    assert_ne!(a, b);
    let v = Variant::builtin("minishogi").unwrap();
    assert_eq!(content_hash(v), content_hash(v), "deterministic");
    assert_ne!(content_hash(v), content_hash(Variant::builtin("hand-shogi").unwrap()));
}
