//! Behaviour tests of the baselines against the rules engine.

use super::*;
use rules::{Color, Game, GameResult, Move, MoveKind, Outcome, Position, TerminationReason, Variant};
use std::time::{Duration, Instant};

fn variant(name: &str) -> &'static Variant {
    Variant::builtin(name).unwrap()
}

fn game(v: &str, sfen: &str) -> Game {
    Game::new(Position::from_sfen(variant(v), sfen).unwrap(), None)
}

fn depth(d: u32) -> Budget {
    Budget { depth: Some(d), ..Budget::default() }
}

fn usi(g: &Game, m: Move) -> String {
    g.position().move_to_usi(m)
}

fn after(g: &Game, m: Move) -> Game {
    let mut h = g.clone();
    h.play(m).expect("the baseline's move is legal");
    h
}

fn wins(g: &Game, c: Color) -> bool {
    matches!(g.result(), Some(r) if r.outcome == Outcome::Win(c))
}

/// A move that wins at once for the side to move, by the rules engine.
fn winning_move(g: &Game) -> Option<Move> {
    let me = g.position().side_to_move();
    g.legal_moves().into_iter().find(|&m| wins(&after(g, m), me))
}

/// Whether `m` forces a win within three plies (every reply allows a winning move).
fn forces_mate_in_3(g: &Game, m: Move) -> bool {
    let h = after(g, m);
    !h.is_over() && h.legal_moves().into_iter().all(|r| winning_move(&after(&h, r)).is_some())
}

/// A middle-game shogi position: 40 plies of depth-2 self-play from the start.
fn shogi_middle_game() -> Game {
    let mut g = Game::new(Position::start(variant("shogi")), None);
    let mut ab = AlphaBeta::new(variant("shogi"), 1 << 16);
    for _ in 0..40 {
        let t = ab.think(&g, &depth(2));
        g.play(t.best.unwrap()).unwrap();
    }
    assert!(!g.is_over());
    g
}

#[test]
fn baseline_alphabeta_finds_gold_drop_mate_in_1() {
    // White's king on 5a, Black's pawn on 5c, Black holds a Gold. G*5b checks the king
    // and covers 4a, 6a, 4b and 6b; the pawn on 5c guards the Gold, so the king cannot
    // take it: mate. No other move mates.
    let g = game("shogi", "4k4/9/4P4/9/9/9/9/9/4K4 b G 1");
    let mates = g.legal_moves().into_iter().filter(|&m| wins(&after(&g, m), Color::Black)).count();
    assert_eq!(mates, 1);
    for d in 1..=3 {
        let mut ab = AlphaBeta::new(g.position().variant(), 1 << 12);
        let t = ab.think(&g, &depth(d));
        let m = t.best.unwrap();
        assert_eq!(usi(&g, m), "G*5b", "depth {d}");
        assert_eq!(t.score, Score::Mate(1));
        assert_eq!(t.pv[0], m);
        let h = after(&g, m);
        assert_eq!(h.result(), Some(GameResult { outcome: Outcome::Win(Color::Black), reason: TerminationReason::Checkmate }));
    }
}

#[test]
fn baseline_alphabeta_finds_mate_in_3() {
    // White's bare king on 1a; Black has a Silver on 5d (a bystander) and two Silvers in
    // hand. No move mates at once (checked below with the rules engine), but the quiet
    // S*2c takes 1b and 2b from the king, which must go to 2a; then S*2b is mate (it
    // covers 1a and 3a, the first Silver covers 1b and 3b and guards 2b). The test checks
    // the chosen move's forced mate exhaustively and plays out the principal variation.
    let g = game("shogi", "8k/9/9/4S4/9/9/9/9/K8 b SS 1");
    assert!(winning_move(&g).is_none(), "no mate in one");
    let mut ab = AlphaBeta::new(g.position().variant(), 1 << 16);
    for d in [3, 5] {
        let t = ab.think(&g, &depth(d));
        let m = t.best.unwrap();
        assert_eq!(t.score, Score::Mate(3), "depth {d}: {} {:?}", usi(&g, m), t);
        assert!(forces_mate_in_3(&g, m), "{} does not force mate", usi(&g, m));
        assert_eq!(t.pv.len(), 3, "{:?}", t.pv);
        let mut h = g.clone();
        for &m in &t.pv {
            h.play(m).unwrap();
        }
        assert_eq!(h.result(), Some(GameResult { outcome: Outcome::Win(Color::Black), reason: TerminationReason::Checkmate }));
    }
}

#[test]
fn baseline_captures_hanging_rook_and_bishop() {
    // A White Rook on 5f in front of Black's pawn on 5g, defended by nothing.
    let g = game("shogi", "4k4/9/9/9/9/4r4/4P4/9/4K4 b - 1");
    // A White Bishop on 2c where Black's Rook on 2h can take it (and promote).
    let g2 = game("shogi", "4k4/9/7b1/9/9/9/9/7R1/4K4 b - 1");
    for (g, victim) in [(g, "Rook"), (g2, "Bishop")] {
        let v = g.position().variant();
        let captures = |m: Move| {
            let to = m.to();
            g.position().piece_at(to).map(|p| v.kind(p.kind).name.clone()) == Some(victim.to_string())
        };
        let mut ab = AlphaBeta::new(v, 1 << 12);
        let t = ab.think(&g, &depth(1));
        assert!(captures(t.best.unwrap()), "alpha-beta: {}", usi(&g, t.best.unwrap()));
        assert!(matches!(t.score, Score::Cp(s) if s > 700), "{:?}", t.score);
        for seed in 0..4 {
            let t = Greedy::new(v, seed).think(&g, &Budget::default());
            assert!(captures(t.best.unwrap()), "greedy: {}", usi(&g, t.best.unwrap()));
        }
    }
}

#[test]
fn baseline_avoids_losing_pawn_drop_mate_in_pocket_copper() {
    // White's king on 1a, boxed in by Black's Silver on 3b (covering 2a) and Gold on 1c
    // (covering 1b and 2b). A Black pawn dropped on 1b would give mate, which in Pocket
    // Shogi Copper loses for the dropper. White's pawn on 5c keeps White from running
    // out of moves. The pawn is first in Black's hand, then in Black's pocket.
    for (sfen, drop) in [("8k/6S2/4p3G/9/9/9/9/9/K8 b P 1 -", "P*1b"), ("8k/6S2/4p3G/9/9/9/9/9/K8 b - 1 P", "P&1b")] {
        let g = game("pocket-copper", sfen);
        let v = g.position().variant();
        let pawn_drop = g.position().parse_usi(drop).unwrap();
        let h = after(&g, pawn_drop);
        assert_eq!(h.result(), Some(GameResult { outcome: Outcome::Win(Color::White), reason: TerminationReason::DropMate }), "the drop mate loses here");
        for d in 1..=3 {
            let mut ab = AlphaBeta::new(v, 1 << 14);
            let t = ab.think(&g, &depth(d));
            let m = t.best.unwrap();
            assert_ne!(m, pawn_drop, "depth {d}");
            assert!(!wins(&after(&g, m), Color::White));
        }
        for seed in 0..4 {
            let m = Greedy::new(v, seed).think(&g, &Budget::default()).best.unwrap();
            assert_ne!(m, pawn_drop);
        }
        // The same drop in standard shogi is simply illegal; in a variant where a drop
        // mate is allowed it would be the move, which the search sees: with a Gold instead
        // of the pawn, G*1b mates and is chosen.
        let g = game("pocket-copper", "8k/6S2/4p3G/9/9/9/9/9/K8 b G 1 -");
        let t = AlphaBeta::new(v, 1 << 12).think(&g, &depth(2));
        assert_eq!(t.score, Score::Mate(1));
        assert!(wins(&after(&g, t.best.unwrap()), Color::Black));
    }
}

#[test]
fn baseline_takes_the_flag_win() {
    // Black's king on 5b next to its flag square 5a (where White's king started); a
    // White Rook hangs on 9e in front of Black's pawn on 9f, a tempting capture.
    let g = game("pocket-copper", "9/4K4/9/9/r8/P8/9/9/8k b - 1 -");
    let flag = g.position().parse_usi("5b5a").unwrap();
    for d in 1..=3 {
        let t = AlphaBeta::new(g.position().variant(), 1 << 12).think(&g, &depth(d));
        assert_eq!(t.best, Some(flag), "depth {d}");
        assert_eq!(t.score, Score::Mate(1));
    }
    let t = Greedy::new(g.position().variant(), 3).think(&g, &Budget::default());
    assert_eq!(t.best, Some(flag));
    assert_eq!(after(&g, flag).result().unwrap().reason, TerminationReason::Flag);
    // With White to move, depth 2 sees the threat and stops it (e.g. the Rook to rank a
    // covers 5a, or a check along file 5): Black then has no winning move.
    let g = game("pocket-copper", "9/4K4/9/9/r8/P8/9/9/8k w - 1 -");
    let t = AlphaBeta::new(g.position().variant(), 1 << 12).think(&g, &depth(2));
    let h = after(&g, t.best.unwrap());
    assert!(winning_move(&h).is_none(), "White leaves the flag open: {}", usi(&g, t.best.unwrap()));
}

#[test]
fn baseline_alphabeta_respects_node_budget_and_deadline() {
    let g = shogi_middle_game();
    let mut ab = AlphaBeta::new(g.position().variant(), 1 << 16);
    for n in [1u64, 100, 5000, 40_000] {
        let t = ab.think(&g, &Budget { nodes: Some(n), ..Budget::default() });
        assert!(t.nodes <= n + 1, "{} nodes for a budget of {n}", t.nodes);
        assert!(g.legal_moves().contains(&t.best.unwrap()));
        assert_eq!(t.pv[0], t.best.unwrap());
    }
    // With a depth of 64 only the deadline can stop the search; the slack is generous
    // because tests share a loaded machine (timings belong in benchmarks).
    for ms in [1u64, 50, 200] {
        let start = Instant::now();
        let t = ab.think(&g, &Budget { depth: Some(64), deadline: Some(start + Duration::from_millis(ms)), ..Budget::default() });
        let took = start.elapsed();
        assert!(took < Duration::from_millis(ms + 1000), "{took:?} for a deadline of {ms} ms");
        assert!(g.legal_moves().contains(&t.best.unwrap()));
    }
    // No limit at all: depth 3.
    let t = ab.think(&g, &Budget::default());
    assert_eq!(t.depth, 3);
}

#[test]
fn baseline_players_play_every_variant() {
    for name in rules::BUILTIN {
        let v = variant(name);
        let players: Vec<Box<dyn Baseline>> = vec![Box::new(AlphaBeta::new(v, 1 << 14)), Box::new(Greedy::new(v, 1)), Box::new(Random::new(2))];
        for mut p in players {
            p.new_game();
            let mut opponent = Random::new(9);
            let mut g = Game::new(Position::start(v), None);
            for ply in 0..20 {
                if g.is_over() {
                    break;
                }
                let t = if ply % 2 == 0 { p.think(&g, &depth(2)) } else { opponent.think(&g, &depth(2)) };
                let m = t.best.expect("a move while the game is on");
                assert!(g.position().legal_moves().contains(&m), "{name} {}: illegal {}", p.name(), usi(&g, m));
                g.play(m).unwrap();
            }
        }
    }
}

#[test]
fn baseline_finished_game_has_no_move() {
    let g = game("shogi", "4k4/9/4P4/9/9/9/9/9/4K4 b G 1");
    let m = g.position().parse_usi("G*5b").unwrap();
    let h = after(&g, m);
    assert!(h.is_over());
    let v = g.position().variant();
    assert_eq!(AlphaBeta::new(v, 16).think(&h, &depth(3)).best, None);
    assert_eq!(Greedy::new(v, 0).think(&h, &depth(3)).best, None);
    assert_eq!(Random::new(0).think(&h, &depth(3)).best, None);
}

/// Plays a game; returns the result. `black` moves first.
fn play(v: &'static Variant, black: &mut dyn Baseline, white: &mut dyn Baseline, budget: Budget) -> Option<GameResult> {
    let mut g = Game::new(Position::start(v), None);
    black.new_game();
    white.new_game();
    while !g.is_over() {
        let p: &mut dyn Baseline = if g.position().side_to_move() == Color::Black { &mut *black } else { &mut *white };
        let m = p.think(&g, &budget).best.unwrap();
        g.play(m).unwrap();
    }
    g.result()
}

#[test]
fn baseline_alphabeta_beats_random_in_minishogi() {
    let v = variant("minishogi");
    let start = Instant::now();
    let mut won = 0;
    for i in 0..4u64 {
        let mut ab = AlphaBeta::new(v, 1 << 14);
        let mut rnd = Random::new(100 + i);
        let ab_color = if i % 2 == 0 { Color::Black } else { Color::White };
        let r = if ab_color == Color::Black { play(v, &mut ab, &mut rnd, depth(2)) } else { play(v, &mut rnd, &mut ab, depth(2)) };
        if r.is_some_and(|r| r.outcome == Outcome::Win(ab_color)) {
            won += 1;
        }
    }
    assert!(won >= 3, "alpha-beta won {won} of 4");
    assert!(start.elapsed() < Duration::from_secs(10));
}

#[test]
fn baseline_greedy_beats_random_and_alphabeta_beats_greedy_in_minishogi() {
    let v = variant("minishogi");
    let mut greedy_wins = 0;
    let mut ab_wins = 0;
    for i in 0..4u64 {
        let (gc, mut g, mut r) = (if i % 2 == 0 { Color::Black } else { Color::White }, Greedy::new(v, i), Random::new(50 + i));
        let res = if gc == Color::Black { play(v, &mut g, &mut r, depth(1)) } else { play(v, &mut r, &mut g, depth(1)) };
        greedy_wins += res.is_some_and(|r| r.outcome == Outcome::Win(gc)) as u32;
        let mut ab = AlphaBeta::new(v, 1 << 14);
        let mut g = Greedy::new(v, 10 + i);
        let res = if gc == Color::Black { play(v, &mut ab, &mut g, depth(2)) } else { play(v, &mut g, &mut ab, depth(2)) };
        ab_wins += res.is_some_and(|r| r.outcome == Outcome::Win(gc)) as u32;
    }
    assert!(greedy_wins >= 3, "greedy won {greedy_wins} of 4 against random");
    assert!(ab_wins >= 3, "alpha-beta won {ab_wins} of 4 against greedy");
}

#[test]
fn baseline_seeded_players_are_reproducible() {
    let v = variant("pocket-copper");
    let moves = |seed: u64| {
        let mut g = Game::new(Position::start(v), None);
        let mut a = Greedy::new(v, seed);
        let mut b = Random::new(seed);
        let mut out = Vec::new();
        for _ in 0..60 {
            if g.is_over() {
                break;
            }
            let t = if g.position().side_to_move() == Color::Black { a.think(&g, &Budget::default()) } else { b.think(&g, &Budget::default()) };
            out.push(t.best.unwrap());
            g.play(t.best.unwrap()).unwrap();
        }
        out
    };
    assert_eq!(moves(5), moves(5));
    assert_ne!(moves(5), moves(6));
    // Alpha-beta is deterministic too.
    let g = shogi_middle_game();
    let a = AlphaBeta::new(variant("shogi"), 1 << 12).think(&g, &depth(3));
    let b = AlphaBeta::new(variant("shogi"), 1 << 12).think(&g, &depth(3));
    assert_eq!(a, b);
}

#[test]
fn baseline_alphabeta_speed() {
    let g = shogi_middle_game();
    println!("middle game: {}", g.position().to_sfen());
    let mut ab = AlphaBeta::new(g.position().variant(), 1 << 20);
    let start = Instant::now();
    let t = ab.think(&g, &Budget { nodes: Some(300_000), ..Budget::default() });
    let secs = start.elapsed().as_secs_f64();
    println!(
        "alpha-beta: {} nodes in {:.3} s = {:.0} nodes/s, depth {}, score {:?}, pv {:?}",
        t.nodes,
        secs,
        t.nodes as f64 / secs,
        t.depth,
        t.score,
        t.pv.iter().map(|&m| g.position().move_to_usi(m)).collect::<Vec<_>>()
    );
    assert!(t.depth >= 3);
}

#[test]
fn baseline_noise_varies_the_moves_but_keeps_a_mate() {
    let v = variant("pocket-copper");
    let start = Game::new(Position::start(v), None);
    // Without noise every seed plays one move; with ±50 cp the near-equal opening moves
    // are chosen in turn.
    let firsts = |noise: f64| -> std::collections::HashSet<Move> {
        (0..12u64).map(|seed| AlphaBeta::new(v, 1 << 12).with_noise(noise, seed).think(&start, &depth(1)).best.unwrap()).collect()
    };
    assert_eq!(firsts(0.0).len(), 1);
    assert!(firsts(50.0).len() >= 3, "{:?}", firsts(50.0).len());
    let greedy_firsts: std::collections::HashSet<Move> =
        (0..12u64).map(|seed| Greedy::new(v, seed).with_noise(50.0).think(&start, &Budget::default()).best.unwrap()).collect();
    assert!(greedy_firsts.len() >= 2);
    // A mate in one is worth far more than any noise: always played, scored as mate.
    let g = game("shogi", "4k4/9/4P4/9/9/9/9/9/4K4 b G 1");
    for seed in 0..8 {
        let t = AlphaBeta::new(g.position().variant(), 1 << 12).with_noise(1000.0, seed).think(&g, &depth(2));
        assert_eq!(usi(&g, t.best.unwrap()), "G*5b");
        assert_eq!(t.score, Score::Mate(1));
        let t = Greedy::new(g.position().variant(), seed).with_noise(1000.0).think(&g, &Budget::default());
        assert_eq!(usi(&g, t.best.unwrap()), "G*5b");
    }
    // The same seed gives the same noisy choice.
    let a = AlphaBeta::new(v, 1 << 12).with_noise(30.0, 9).think(&start, &depth(2));
    let b = AlphaBeta::new(v, 1 << 12).with_noise(30.0, 9).think(&start, &depth(2));
    assert_eq!(a, b);
}

#[test]
fn baseline_greedy_takes_what_its_values_say_is_worth_more() {
    // The Rook on 5e can take a Rook (4e) or a Pawn (5d); a captured piece goes to hand.
    let g = game("shogi", "4k4/9/9/4p4/4Rr3/9/9/9/4K4 b - 1");
    let v = g.position().variant();
    let pick = |values: Option<PieceValues>| {
        let mut greedy = Greedy::new(v, 1);
        if let Some(t) = values {
            greedy = greedy.with_values(v, t);
        }
        usi(&g, greedy.think(&g, &depth(1)).best.unwrap())
    };
    assert_eq!(pick(None), "5e4e");
    let mut pawn_dear = PieceValues::for_variant(v);
    let over = ValueOverride { place: ValuePlace::Hand, kind: "pawn".into(), centipawns: 5000.0 };
    pawn_dear.apply(v, &[over]).unwrap();
    assert_eq!(pick(Some(pawn_dear)), "5e5d");
}

#[test]
fn baseline_quiescence_among_the_given_legal_moves_scores_as_generating_them() {
    // A search's leaf hands its legal moves to the quiescence search's root: the same
    // score as generating them, in check (every evasion) and out of it (the captures), in
    // random playouts of every shipped variant.
    use rand::{Rng, SeedableRng};
    let (mut compared, mut in_check, mut with_captures) = (0, 0, 0);
    for name in rules::BUILTIN {
        let v = variant(name);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(17);
        let (mut fresh, mut given) = (AlphaBeta::new(v, 1), AlphaBeta::new(v, 1));
        for _ in 0..40 {
            let mut g = Game::new(rules::Position::start(v), Some(200));
            for _ in 0..rng.random_range(4..120) {
                if g.is_over() {
                    break;
                }
                let legal = g.legal_moves();
                let pos = g.position();
                assert_eq!(given.quiescence_among(pos, &legal), fresh.quiescence(pos), "{name}: {}", pos.to_sfen());
                compared += 1;
                in_check += pos.in_check() as usize;
                with_captures += legal.iter().any(|m| matches!(m.kind(), MoveKind::Board { to, .. } if pos.piece_at(to).is_some())) as usize;
                g.play_unchecked(legal[rng.random_range(0..legal.len())]);
            }
        }
    }
    assert!(in_check >= 50 && with_captures >= 1000, "{compared} positions, {in_check} in check, {with_captures} with a capture");
}
