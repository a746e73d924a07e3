//! One named test per rule of Hand shogi (RULES.md §3), on hand-made positions.

mod common;
use common::*;
use rules::{Color, HandMatch, MatchState, Outcome, TerminationReason};

const HS: &str = "hand-shogi";

fn name_at(p: &rules::Position, sq: &str) -> Option<(Color, String)> {
    let v = p.variant();
    p.piece_at(v.geometry.parse_square(sq).unwrap()).map(|pc| (pc.color, v.kind(pc.kind).name.clone()))
}

#[test]
fn start_position_is_the_rule_page_setup() {
    let v = variant(HS);
    let p = rules::Position::start(v);
    let black = [
        ("5i", "King"),
        ("7i", "Gold"),
        ("3i", "Gold"),
        ("5h", "Pard"),
        ("7h", "Soldier"),
        ("3h", "Soldier"),
        ("6g", "Soldier"),
        ("5g", "Soldier"),
        ("4g", "Soldier"),
    ];
    for (sq, name) in black {
        assert_eq!(name_at(&p, sq), Some((Color::Black, name.to_string())), "Black {name} on {sq}");
        // White is mirrored through the centre: file f rank r -> file 10-f, rank 10-r.
        let f = 10 - (sq.as_bytes()[0] - b'0');
        let r = (b'a' + b'i' - sq.as_bytes()[1]) as char;
        assert_eq!(name_at(&p, &format!("{f}{r}")), Some((Color::White, name.to_string())));
    }
    assert_eq!(p.occupied().count(), 18);
    for (token, n) in [("T", 1), ("U", 1), ("S", 2), ("O", 1), ("H", 1), ("N", 2), ("L", 2)] {
        let k = v.kind_by_token(token).unwrap();
        assert_eq!(p.hand_count(Color::Black, k), n, "Black hand {token}");
        assert_eq!(p.hand_count(Color::White, k), n, "White hand {token}");
    }
}

#[test]
fn pard_jumps_to_the_second_square_in_eight_directions() {
    // Pieces on every adjacent square do not stop it.
    let p = pos(variant(HS), "8k/9/9/3GGG3/3GDG3/3GGG3/9/9/K8 b - 1");
    assert_eq!(targets(&p, "5e"), set(&["5c", "5g", "3e", "7e", "3c", "7c", "3g", "7g"]));
}

#[test]
fn tycoon_moves_up_to_three_squares_diagonally_and_is_blocked() {
    let p = pos(variant(HS), "8k/9/9/9/4T4/9/9/9/K8 b - 1");
    assert_eq!(targets(&p, "5e").len(), 12);
    assert!(!targets(&p, "5e").contains("1a"), "no fourth square");
    let blocked = pos(variant(HS), "8k/9/9/5G3/4T4/9/9/9/K8 b - 1");
    let t = targets(&blocked, "5e");
    assert!(!t.contains("4d") && !t.contains("3c") && t.contains("6d"));
}

#[test]
fn shogun_moves_up_to_three_squares_orthogonally() {
    let p = pos(variant(HS), "8k/9/9/9/4U4/9/9/9/K8 b - 1");
    let t = targets(&p, "5e");
    assert_eq!(t.len(), 12);
    assert!(t.contains("5b") && !t.contains("5a") && t.contains("8e") && !t.contains("9e"));
}

#[test]
fn onager_jumps_two_squares_orthogonally() {
    let p = pos(variant(HS), "8k/9/9/4G4/3GOG3/4G4/9/9/K8 b - 1");
    assert_eq!(targets(&p, "5e"), set(&["5c", "5g", "3e", "7e"]));
}

#[test]
fn hasty_jumps_two_squares_diagonally() {
    let p = pos(variant(HS), "8k/9/9/3G1G3/4H4/3G1G3/9/9/K8 b - 1");
    assert_eq!(targets(&p, "5e"), set(&["3c", "7c", "3g", "7g"]));
}

#[test]
fn soldier_steps_forward_or_sideways() {
    let p = pos(variant(HS), "8k/9/9/9/4P4/9/9/9/K8 b - 1");
    assert_eq!(targets(&p, "5e"), set(&["5d", "4e", "6e"]));
}

#[test]
fn soldier_may_not_step_sideways_onto_a_file_holding_another_soldier() {
    let p = pos(variant(HS), "8k/9/9/9/4P4/9/5P3/9/K8 b - 1");
    let t = targets(&p, "5e");
    assert!(!t.contains("4e"), "file 4 holds the soldier on 4g");
    assert!(t.contains("6e") && t.contains("5d"));
}

#[test]
fn soldier_may_not_be_dropped_on_a_file_holding_another_soldier() {
    let p = pos(variant(HS), "8k/9/9/9/4P4/9/9/9/K8 b P 1");
    assert!(!legal(&p, "P*5c"));
    assert!(legal(&p, "P*4c"));
    let opponent = pos(variant(HS), "8k/9/9/9/4p4/9/9/9/K8 b P 1");
    assert!(legal(&opponent, "P*5c"), "the opponent's soldier does not count");
}

#[test]
fn hasty_and_onager_may_only_be_dropped_where_they_give_check() {
    let p = pos(variant(HS), "8k/9/9/9/9/9/9/9/K8 b HO 1");
    let drops: Vec<String> = moves(&p).into_iter().filter(|m| m.contains('*')).collect();
    // White king on 1a: a Hasty checks from 3c only; an Onager from 1c and 3a.
    let mut expected = vec!["H*3c".to_string(), "O*1c".to_string(), "O*3a".to_string()];
    expected.sort();
    let mut got = drops.clone();
    got.sort();
    assert_eq!(got, expected);
}

#[test]
fn knight_may_not_be_dropped_anywhere_in_the_promotion_zone() {
    let p = pos(variant(HS), "8k/9/9/9/9/9/9/9/K8 b N 1");
    for r in ['a', 'b', 'c'] {
        assert!(!legal(&p, &format!("N*5{r}")), "rank {r}");
    }
    assert!(legal(&p, "N*5d"));
}

#[test]
fn knight_must_promote_on_the_last_two_ranks_to_a_gold_mover() {
    let p = pos(variant(HS), "8k/9/9/4N4/9/9/9/9/K8 b - 1");
    assert!(legal(&p, "5d4b+") && !legal(&p, "5d4b"));
    let promoted = play(&p, "5d4b+");
    assert_eq!(name_at(&promoted, "4b").map(|x| x.1).as_deref(), Some("Gold-mover"));
    let gm = pos(variant(HS), "8k/9/9/9/4+N4/9/9/9/K8 b - 1");
    assert_eq!(targets(&gm, "5e"), set(&["5d", "4d", "6d", "4e", "6e", "5f"]));
    let optional = pos(variant(HS), "8k/9/9/9/9/4N4/9/9/K8 b - 1");
    assert!(legal(&optional, "5f4d") && !legal(&optional, "5f4d+"), "no promotion outside the zone");
    let third = pos(variant(HS), "8k/9/9/9/4N4/9/9/9/K8 b - 1");
    assert!(legal(&third, "5e4c") && legal(&third, "5e4c+"), "optional on the third rank");
}

#[test]
fn captured_gold_mover_returns_to_hand_as_a_knight() {
    let v = variant(HS);
    let p = pos(v, "8k/9/4+n4/9/4U4/9/9/9/K8 b - 1");
    let after = play(&p, "5e5c");
    assert_eq!(after.hand_count(Color::Black, v.kind_by_token("N").unwrap()), 1);
}

#[test]
fn lance_never_promotes_and_is_stuck_on_the_last_rank() {
    let p = pos(variant(HS), "8k/9/4L4/9/9/9/9/9/K8 b - 1");
    assert!(legal(&p, "5c5a") && !legal(&p, "5c5a+") && !legal(&p, "5c5b+"));
    let stuck = play(&play(&p, "5c5a"), "1a2a");
    assert!(targets(&stuck, "5a").is_empty());
}

#[test]
fn lance_may_not_be_dropped_on_the_last_rank() {
    let p = pos(variant(HS), "8k/9/9/9/9/9/9/9/K8 b L 1");
    assert!(!legal(&p, "L*5a") && legal(&p, "L*5b"));
}

#[test]
fn checkmate_wins_the_hand() {
    let p = pos(variant(HS), "8k/9/7G1/9/9/9/9/9/K8 b G 1");
    let g = game(&p, &["G*1b"]);
    assert_eq!(g.result().map(|r| (r.outcome, r.reason)), Some((Outcome::Win(Color::Black), TerminationReason::Checkmate)));
}

#[test]
fn soldier_drop_mate_is_allowed() {
    // Hand shogi has no pawn-drop-mate rule: a soldier may deliver mate by drop.
    let p = pos(variant(HS), "7nk/9/8G/9/9/9/9/9/4K4 b P 1");
    let g = game(&p, &["P*1b"]);
    assert_eq!(g.result().map(|r| r.outcome), Some(Outcome::Win(Color::Black)));
}

#[test]
fn perpetual_check_loses_and_plain_repetition_draws() {
    let p = pos(variant(HS), "8k/9/7U1/9/9/9/9/9/K8 b - 1");
    let checks = ["2c1c", "1a2a", "1c2c", "2a1a"];
    let g = game(&p, &checks.iter().cycle().take(12).copied().collect::<Vec<_>>());
    assert_eq!(g.result().map(|r| (r.outcome, r.reason)), Some((Outcome::Win(Color::White), TerminationReason::PerpetualCheck)));
    let quiet = ["9i9h", "1a1b", "9h9i", "1b1a"];
    let g = game(&p, &quiet.iter().cycle().take(12).copied().collect::<Vec<_>>());
    assert_eq!(g.result().map(|r| (r.outcome, r.reason)), Some((Outcome::Draw, TerminationReason::Repetition)));
}

#[test]
fn match_is_won_by_two_hands_in_a_row_with_colours_alternating() {
    assert_eq!(variant(HS).match_consecutive_wins, 2);
    let mut m = HandMatch::new(2, 10);
    assert_eq!(m.state(), MatchState::Next { first_player: Color::Black });
    m.record(Outcome::Win(Color::Black)); // player 0 (Black) wins hand 1
    assert_eq!(m.state(), MatchState::Next { first_player: Color::White });
    m.record(Outcome::Win(Color::Black)); // player 1 (Black in hand 2) wins: streak broken
    assert_eq!(m.state(), MatchState::Next { first_player: Color::Black });
    m.record(Outcome::Draw); // a drawn hand breaks player 1's streak
    m.record(Outcome::Win(Color::Black)); // hand 4: player 1 is Black and wins
    assert_eq!(m.state(), MatchState::Next { first_player: Color::Black });
    m.record(Outcome::Win(Color::White)); // hand 5: player 1 is White and wins again
    assert_eq!(m.state(), MatchState::Won { player: 1 });
    let mut long = HandMatch::new(2, 2);
    long.record(Outcome::Draw);
    long.record(Outcome::Draw);
    assert_eq!(long.state(), MatchState::Drawn);
}
