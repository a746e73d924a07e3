//! Round-trips and symmetries of the encodings, on random positions of every variant.

use encoding::{ActionSpace, InputPlanes};
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

#[test]
fn layouts_are_pinned_to_their_versions() {
    // If this fails, a layout changed: bump PLANES_VERSION / ACTION_VERSION and update
    // tests/fingerprints.txt, so that old models and records are refused, not misread.
    let expected = include_str!("fingerprints.txt");
    let mut got = String::new();
    for name in BUILTIN {
        let v = Variant::builtin(name).unwrap();
        got += &format!("{name} planes: {}\n", InputPlanes::new(v).fingerprint());
        got += &format!("{name} actions: {}\n", ActionSpace::new(v).fingerprint());
    }
    if std::env::var("UPDATE_FINGERPRINTS").is_ok() {
        std::fs::write(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fingerprints.txt"), &got).unwrap();
    }
    assert_eq!(got, expected);
}
