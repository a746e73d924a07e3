//! One named test per rule of Pocket Shogi Copper (RULES.md §2), each on a hand-made
//! position, each failing if its rule breaks.

mod common;
use common::*;
use rules::{Color, Game, Outcome, TerminationReason};

const PC: &str = "pocket-copper";

fn piece_name(p: &rules::Position, sq: &str) -> Option<String> {
    let v = p.variant();
    p.piece_at(v.geometry.parse_square(sq).unwrap()).map(|pc| v.kind(pc.kind).name.clone())
}

#[test]
fn copper_steps_forward_diagonally_forward_or_straight_back() {
    let p = pos(variant(PC), "8k/9/9/9/4C4/9/9/9/K8 b - 1 -");
    assert_eq!(targets(&p, "5e"), set(&["5d", "4d", "6d", "5f"]));
}

#[test]
fn promoted_copper_moves_like_a_silver() {
    let p = pos(variant(PC), "8k/9/9/9/4+C4/9/9/9/K8 b - 1 -");
    assert_eq!(targets(&p, "5e"), set(&["5d", "4d", "6d", "4f", "6f"]));
}

#[test]
fn gold_promotes_to_platinum_which_cannot_step_straight_back() {
    let p = pos(variant(PC), "8k/9/9/4G4/9/9/9/9/K8 b - 1 -");
    assert!(legal(&p, "5d5c+"), "a Gold entering the zone may promote");
    let after = play(&p, "5d5c+");
    assert_eq!(piece_name(&after, "5c").as_deref(), Some("Platinum General"));
    let plat = pos(variant(PC), "8k/9/9/9/4+G4/9/9/9/K8 b - 1 -");
    assert_eq!(targets(&plat, "5e"), set(&["5d", "4d", "6d", "4e", "6e", "4f", "6f"]));
}

#[test]
fn lance_promotes_to_side_mover_sliding_sideways_stepping_vertically() {
    let p = pos(variant(PC), "8k/9/9/9/4+L4/9/9/9/K8 b - 1 -");
    assert_eq!(targets(&p, "5e"), set(&["1e", "2e", "3e", "4e", "6e", "7e", "8e", "9e", "5d", "5f"]));
    let blocked = pos(variant(PC), "8k/9/9/9/2P1+L4/9/9/9/K8 b - 1 -");
    assert!(!targets(&blocked, "5e").contains("7e"), "a Side Mover does not jump");
}

#[test]
fn promoted_knight_moves_as_the_piece_tables_say_by_default() {
    let p = pos(variant(PC), "8k/9/9/9/4+N4/9/9/9/K8 b - 1 -");
    assert_eq!(targets(&p, "5e"), set(&["5d", "4d", "6d", "4e", "6e", "4g", "6g"]));
}

#[test]
fn promoted_knight_moves_as_gold_with_the_option() {
    let v = variant_with(PC, "promoted-knight", "gold");
    let p = pos(v, "8k/9/9/9/4+N4/9/9/9/K8 b - 1 -");
    assert_eq!(targets(&p, "5e"), set(&["5d", "4d", "6d", "4e", "6e", "5f"]));
}

#[test]
fn copper_must_promote_on_the_last_rank() {
    let p = pos(variant(PC), "8k/4C4/9/9/9/9/9/9/K8 b - 1 -");
    assert!(legal(&p, "5b5a+"));
    assert!(!legal(&p, "5b5a"), "an unpromoted Copper may not stop on the last rank by moving");
    assert!(legal(&p, "5b4a+") && !legal(&p, "5b4a"), "any move onto the last rank promotes");
}

#[test]
fn copper_promotion_is_optional_on_the_last_rank_with_the_option_off() {
    let p = pos(variant_with(PC, "copper-forced-promotion", "off"), "8k/4C4/9/9/9/9/9/9/K8 b - 1 -");
    assert!(legal(&p, "5b5a+") && legal(&p, "5b5a"));
}

#[test]
fn copper_promotion_is_optional_elsewhere_in_the_zone() {
    let p = pos(variant(PC), "8k/9/9/4C4/9/9/9/9/K8 b - 1 -");
    assert!(legal(&p, "5d5c") && legal(&p, "5d5c+"));
    let leaving = pos(variant(PC), "8k/9/4C4/9/9/9/9/9/K8 b - 1 -");
    assert!(legal(&leaving, "5c5d+"), "a Copper leaving the zone may promote");
}

#[test]
fn captured_pieces_go_to_the_hand_demoted() {
    let v = variant(PC);
    for (token, hand) in [("+g", "Gold"), ("+l", "Lance"), ("+c", "Copper"), ("+b", "Bishop")] {
        let p = pos(v, &format!("8k/9/4{token}4/9/4R4/9/9/9/K8 b - 1 -"));
        let after = play(&p, "5e5c");
        let kind = v.kinds().find(|&k| v.kind(k).name == hand).unwrap();
        assert_eq!(after.hand_count(Color::Black, kind), 1, "capturing {token} gives a {hand}");
        assert_eq!(after.pocket(Color::Black), None, "captures never go to the pocket");
    }
}

#[test]
fn pocket_move_takes_the_turn_and_fills_the_pocket() {
    let v = variant(PC);
    let p = pos(v, "8k/9/9/9/4G4/9/9/9/K8 b - 1 -");
    let after = play(&p, "5e&");
    assert_eq!(after.side_to_move(), Color::White);
    assert_eq!(after.pocket(Color::Black).map(|k| v.kind(k).name.clone()).as_deref(), Some("Gold"));
    assert_eq!(piece_name(&after, "5e"), None);
    assert_eq!(after.to_sfen(), "8k/9/9/9/9/9/9/9/K8 w - 2 G");
}

#[test]
fn king_cannot_be_pocketed() {
    let p = pos(variant(PC), "8k/9/9/9/4G4/9/9/9/K8 b - 1 -");
    assert!(!legal(&p, "9i&"));
}

#[test]
fn pinned_piece_cannot_be_pocketed() {
    let p = pos(variant(PC), "4r3k/9/9/9/9/9/9/4G4/4K4 b - 1 -");
    assert!(legal(&p, "5h5g"), "the pinned Gold may still move along the pin");
    assert!(!legal(&p, "5h&"), "pocketing the pinned Gold would expose the King");
}

#[test]
fn piece_without_a_legal_board_move_cannot_be_pocketed() {
    // The pawn on 5e is blocked by its own Gold on 5d.
    let p = pos(variant(PC), "8k/9/9/4G4/4P4/9/9/9/K8 b - 1 -");
    assert!(!legal(&p, "5e&"));
    assert!(legal(&p, "5d&"));
}

#[test]
fn no_pocket_move_while_in_check() {
    // White's rook on 9a checks the Black King on 9i; pocketing the Gold does not help.
    let p = pos(variant(PC), "r7k/9/9/9/4G4/9/9/9/K8 b - 1 -");
    assert!(p.in_check());
    assert!(!legal(&p, "5e&"));
}

#[test]
fn full_pocket_allows_no_pocket_move() {
    let p = pos(variant(PC), "8k/9/9/9/4G4/9/9/9/K8 b - 1 C");
    assert!(!legal(&p, "5e&"));
    assert!(legal(&p, "C&5c"));
}

#[test]
fn pocketed_dragon_horse_drops_back_as_a_dragon_horse() {
    let v = variant(PC);
    let p = pos(v, "7k1/9/9/9/4+B4/9/9/9/K8 b - 1 -");
    let pocketed = play(&p, "5e&");
    let white_moved = play(&pocketed, "2a3a");
    assert!(legal(&white_moved, "+B&5e"));
    let dropped = play(&white_moved, "+B&5e");
    assert_eq!(piece_name(&dropped, "5e").as_deref(), Some("Dragon Horse"));
    assert_eq!(dropped.pocket(Color::Black), None);
}

#[test]
fn pocket_move_and_pocket_drop_never_promote() {
    let v = variant(PC);
    // An unpromoted Bishop in the zone goes into the pocket unpromoted ...
    let p = pos(v, "8k/9/4B4/9/9/9/9/9/K8 b - 1 -");
    let pocketed = play(&p, "5c&");
    assert_eq!(pocketed.pocket(Color::Black).map(|k| v.kind(k).name.clone()).as_deref(), Some("Bishop"));
    // ... and drops back into the zone unpromoted; no promoted drop exists.
    let w = play(&pocketed, "1a2a");
    assert!(legal(&w, "B&5b"));
    assert!(!moves(&w).iter().any(|m| m.starts_with("+B&")));
    assert_eq!(piece_name(&play(&w, "B&5b"), "5b").as_deref(), Some("Bishop"));
}

#[test]
fn pocket_drop_obeys_nifu_for_an_unpromoted_pawn() {
    let p = pos(variant(PC), "8k/9/9/9/9/9/4P4/9/K8 b - 1 P");
    assert!(!legal(&p, "P&5e"), "a second unpromoted pawn on file 5");
    assert!(legal(&p, "P&4e"));
    let tokin = pos(variant(PC), "8k/9/9/9/9/9/4P4/9/K8 b - 1 +P");
    assert!(legal(&tokin, "+P&5e"), "a Tokin is not a pawn for nifu");
}

#[test]
fn pocket_drop_not_on_a_square_where_the_piece_could_never_move() {
    let knight = pos(variant(PC), "8k/9/9/9/9/9/9/9/K8 b - 1 N");
    assert!(!legal(&knight, "N&5a") && !legal(&knight, "N&5b"));
    assert!(legal(&knight, "N&5c"));
    let pawn = pos(variant(PC), "8k/9/9/9/9/9/9/9/K8 b - 1 P");
    assert!(!legal(&pawn, "P&5a") && legal(&pawn, "P&5b"));
    let promoted_knight = pos(variant(PC), "8k/9/9/9/9/9/9/9/K8 b - 1 +N");
    assert!(legal(&promoted_knight, "+N&5a"), "a promoted piece can move from anywhere");
}

#[test]
fn pocket_drop_only_on_an_empty_square() {
    let p = pos(variant(PC), "8k/9/9/9/4p4/9/9/9/K8 b - 1 G");
    assert!(!legal(&p, "G&5e"));
}

#[test]
fn piece_in_a_pocket_stays_through_captures_and_pocket_and_hand_are_separate() {
    let v = variant(PC);
    // White's pocket holds a Rook; Black captures White's pieces around it.
    let p = pos(v, "8k/9/4g4/9/4R4/9/9/9/K8 b - 1 r");
    let after = play(&p, "5e5c");
    assert_eq!(after.pocket(Color::White).map(|k| v.kind(k).name.clone()).as_deref(), Some("Rook"));
    let gold = v.kind_by_token("G").unwrap();
    assert_eq!(after.hand_count(Color::Black, gold), 1);
    assert!(!moves(&after).iter().any(|m| m.contains("5c") && m.starts_with("R")), "no pocket piece is on the board to capture");
}

#[test]
fn seed_start_has_black_copper_in_pocket_and_white_copper_in_hand() {
    let v = variant(PC);
    let p = rules::Position::start(v);
    let copper = v.kind_by_token("C").unwrap();
    assert_eq!(p.pocket(Color::Black), Some(copper));
    assert_eq!(p.pocket(Color::White), None);
    assert_eq!(p.hand_count(Color::White, copper), 1);
    assert_eq!(p.hand_count(Color::Black, copper), 0);
    assert_eq!(p.side_to_move(), Color::Black);
}

#[test]
fn start_family_is_a_named_swappable_option() {
    let v = variant(PC);
    let names: Vec<String> = v.start_family().into_iter().map(|(n, _)| n).collect();
    for n in ["seed", "no-copper", "both-in-hand", "both-in-pocket", "swapped"] {
        assert!(names.contains(&n.to_string()), "{n} missing from {names:?}");
    }
    let both = variant_with(PC, "start", "both-in-pocket");
    let p = rules::Position::start(both);
    let copper = both.kind_by_token("C").unwrap();
    assert_eq!((p.pocket(Color::Black), p.pocket(Color::White)), (Some(copper), Some(copper)));
}

#[test]
fn pawn_drop_mate_from_hand_is_legal_and_loses() {
    let p = pos(variant(PC), "7nk/9/8G/9/9/9/9/9/4K4 b P 1 -");
    assert!(legal(&p, "P*1b"));
    let g = game(&p, &["P*1b"]);
    assert_eq!(g.result().map(|r| (r.outcome, r.reason)), Some((Outcome::Win(Color::White), TerminationReason::DropMate)));
}

#[test]
fn pawn_drop_mate_from_pocket_is_legal_and_loses() {
    let p = pos(variant(PC), "7nk/9/8G/9/9/9/9/9/4K4 b - 1 P");
    let g = game(&p, &["P&1b"]);
    assert_eq!(g.result().map(|r| r.outcome), Some(Outcome::Win(Color::White)));
    assert_eq!(g.result().unwrap().reason, TerminationReason::DropMate);
}

#[test]
fn pawn_drop_check_that_is_not_mate_is_an_ordinary_move() {
    // The pawn on 1b checks, but the King can take it or step aside: not mate.
    let p = pos(variant(PC), "8k/9/9/9/9/9/9/9/4K4 b P 1 -");
    let g = game(&p, &["P*1b"]);
    assert_eq!(g.result(), None);
}

#[test]
fn other_checkmates_win_for_the_mating_side() {
    let p = pos(variant(PC), "7nk/9/8G/9/9/9/9/9/4K4 b G 1 -");
    let g = game(&p, &["G*1b"]);
    assert_eq!(g.result().map(|r| (r.outcome, r.reason)), Some((Outcome::Win(Color::Black), TerminationReason::Checkmate)));
}

#[test]
fn king_stepping_onto_5a_wins_for_black() {
    let p = pos(variant(PC), "k8/4K4/9/9/9/9/9/9/9 b - 1 -");
    let g = game(&p, &["5b5a"]);
    assert_eq!(g.result().map(|r| (r.outcome, r.reason)), Some((Outcome::Win(Color::Black), TerminationReason::Flag)));
    assert!(g.legal_moves().is_empty());
}

#[test]
fn king_stepping_onto_5i_wins_for_white() {
    let p = pos(variant(PC), "9/9/9/9/9/9/9/4k4/K8 w - 1 -");
    let g = game(&p, &["5h5i"]);
    assert_eq!(g.result().map(|r| r.outcome), Some(Outcome::Win(Color::White)));
}

#[test]
fn king_cannot_take_the_flag_square_while_it_is_attacked() {
    let p = pos(variant(PC), "r7k/4K4/9/9/9/9/9/9/9 b - 1 -");
    assert!(!legal(&p, "5b5a"));
}

#[test]
fn flag_win_can_be_switched_off() {
    let p = pos(variant_with(PC, "flag-win", "off"), "k8/4K4/9/9/9/9/9/9/9 b - 1 -");
    let g = game(&p, &["5b5a"]);
    assert_eq!(g.result(), None);
}

#[test]
fn no_capture_draw_after_120_plies_only_when_switched_on() {
    for (choice, expect_draw) in [("on", true), ("off", false)] {
        let v = variant_with(PC, "no-capture-draw", choice);
        // Black drops a Gold every other move, so no position repeats; kings shuffle.
        let p = pos(v, "8k/9/9/9/9/9/9/9/K8 b 40G 1 -");
        let mut g = Game::new(p, Some(1000));
        let squares: Vec<String> = (4..=7).flat_map(|r| (2..=9).map(move |f| format!("{f}{}", (b'a' + r) as char))).collect();
        let (mut drops, mut bk, mut wk) = (0, false, false);
        for ply in 0..120 {
            assert_eq!(g.result(), None, "ended early at ply {ply}");
            let m = if ply % 2 == 0 {
                if ply % 4 == 0 {
                    drops += 1;
                    format!("G*{}", squares[drops - 1])
                } else {
                    bk = !bk;
                    if bk {
                        "9i9h".into()
                    } else {
                        "9h9i".into()
                    }
                }
            } else {
                wk = !wk;
                if wk {
                    "1a1b".into()
                } else {
                    "1b1a".into()
                }
            };
            g.play_usi(&m).unwrap();
        }
        let r = g.result().map(|r| (r.outcome, r.reason));
        if expect_draw {
            assert_eq!(r, Some((Outcome::Draw, TerminationReason::NoCapture)));
        } else {
            assert_eq!(r, None);
        }
    }
}

#[test]
fn fourfold_repetition_is_a_draw() {
    let p = pos(variant(PC), "8k/9/9/9/9/9/9/9/K8 b - 1 -");
    let cycle = ["9i9h", "1a1b", "9h9i", "1b1a"];
    let moves: Vec<&str> = cycle.iter().cycle().take(12).copied().collect();
    let almost = game(&p, &moves[..11]);
    assert_eq!(almost.result(), None);
    let g = game(&p, &moves);
    assert_eq!(g.result().map(|r| (r.outcome, r.reason)), Some((Outcome::Draw, TerminationReason::Repetition)));
}

#[test]
fn perpetual_check_loses() {
    // Black's rook checks with every move; the fourth occurrence loses for Black.
    let p = pos(variant(PC), "8k/9/7R1/9/9/9/9/9/K8 b - 1 -");
    let cycle = ["2c1c", "1a2a", "1c2c", "2a1a"];
    let moves: Vec<&str> = cycle.iter().cycle().take(12).copied().collect();
    let g = game(&p, &moves);
    assert_eq!(g.result().map(|r| (r.outcome, r.reason)), Some((Outcome::Win(Color::White), TerminationReason::PerpetualCheck)));
}

#[test]
fn pocket_contents_are_part_of_the_repeated_position() {
    let v = variant(PC);
    let a = pos(v, "8k/9/9/9/9/9/9/9/K8 b - 1 G");
    let b = pos(v, "8k/9/9/9/9/9/9/9/K8 b - 1 -");
    assert_ne!(a.key(), b.key());
}
