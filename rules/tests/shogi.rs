//! Standard shogi rules (RULES.md §1) that the perft cross-checks do not reach:
//! results and the drop restrictions, on hand-made positions.

mod common;
use common::*;
use rules::{Color, Outcome, TerminationReason};

const SH: &str = "shogi";

#[test]
fn pawn_drop_mate_is_illegal() {
    let p = pos(variant(SH), "7nk/9/8G/9/9/9/9/9/4K4 b P 1");
    assert!(!legal(&p, "P*1b"));
    assert_eq!(moves(&p).len(), 78);
    let not_mate = pos(variant(SH), "8k/9/9/9/9/9/9/9/4K4 b P 1");
    assert!(legal(&not_mate, "P*1b"), "a pawn drop check that is not mate is legal");
}

#[test]
fn nifu_forbids_a_second_unpromoted_pawn_on_a_file() {
    let p = pos(variant(SH), "8k/9/9/9/9/9/4P4/9/K8 b P 1");
    assert!(!legal(&p, "P*5e") && legal(&p, "P*4e"));
    let tokin = pos(variant(SH), "8k/9/9/9/9/9/4+P4/9/K8 b P 1");
    assert!(legal(&tokin, "P*5e"), "a tokin does not count");
}

#[test]
fn drops_never_where_the_piece_could_not_move() {
    let p = pos(variant(SH), "8k/9/9/9/9/9/9/9/K8 b NLP 1");
    for bad in ["N*5a", "N*5b", "L*5a", "P*5a"] {
        assert!(!legal(&p, bad), "{bad}");
    }
    for good in ["N*5c", "L*5b", "P*5b"] {
        assert!(legal(&p, good), "{good}");
    }
}

#[test]
fn drops_are_never_promoted() {
    let p = pos(variant(SH), "8k/9/9/9/9/9/9/9/K8 b S 1");
    assert!(p.parse_usi("+S*5c").is_err());
}

#[test]
fn promotion_is_forced_only_where_the_piece_could_never_move_again() {
    let p = pos(variant(SH), "8k/4P4/9/3N5/9/9/9/9/K6L1 b - 1");
    assert!(legal(&p, "5b5a+") && !legal(&p, "5b5a"), "pawn on the last rank");
    assert!(legal(&p, "6d7b+") && !legal(&p, "6d7b"), "knight on the second-last rank");
    assert!(legal(&p, "2i2c") && legal(&p, "2i2c+"), "lance on the third rank may stay unpromoted");
    assert!(legal(&p, "2i2a+") && !legal(&p, "2i2a"), "lance on the last rank");
}

#[test]
fn promotion_is_optional_when_leaving_the_zone() {
    let p = pos(variant(SH), "8k/9/4S4/9/9/9/9/9/K8 b - 1");
    assert!(legal(&p, "5c4d+") && legal(&p, "5c4d"));
}

#[test]
fn checkmate_loses() {
    let p = pos(variant(SH), "8k/9/7G1/9/9/9/9/9/K8 b G 1");
    let g = game(&p, &["G*1b"]);
    assert_eq!(g.result().map(|r| (r.outcome, r.reason)), Some((Outcome::Win(Color::Black), TerminationReason::Checkmate)));
}

#[test]
fn a_player_with_no_legal_move_has_lost() {
    // White's king on 1a is not in check, but every square around it is covered.
    let p = pos(variant(SH), "8k/9/6NG1/9/9/9/9/9/K8 w - 1");
    assert!(!p.in_check());
    let g = game(&p, &[]);
    assert_eq!(g.result().map(|r| (r.outcome, r.reason)), Some((Outcome::Win(Color::Black), TerminationReason::NoLegalMoves)));
}

#[test]
fn twenty_seven_point_declaration_wins_with_enough_points() {
    // Black: king in the camp with rook, bishop and eight golds there (18 points) and
    // ten pawns in hand: 28 points, the most Black needs.
    let p = pos(variant(SH), "RBGGGGGGG/G3K4/9/9/9/9/9/9/4k4 b 10P 1");
    let g = game(&p, &[]);
    assert_eq!(g.result().map(|r| (r.outcome, r.reason)), Some((Outcome::Win(Color::Black), TerminationReason::Declaration)));
    let short = pos(variant(SH), "RBGGGGGGG/G3K4/9/9/9/9/9/9/4k4 b 9P 1");
    assert_eq!(game(&short, &[]).result(), None, "27 points are not enough for Black");
    let few = pos(variant(SH), "RBGGGGGG1/G3K4/9/9/9/9/9/9/4k4 b 18P 1");
    assert_eq!(game(&few, &[]).result(), None, "nine pieces in the camp are not enough");
}

#[test]
fn white_declares_with_twenty_seven_points() {
    let p = pos(variant(SH), "4K4/9/9/9/9/9/9/4k3g/rbggggggg w 9p 1");
    let g = game(&p, &[]);
    assert_eq!(g.result().map(|r| (r.outcome, r.reason)), Some((Outcome::Win(Color::White), TerminationReason::Declaration)));
}

#[test]
fn maximum_game_length_draws() {
    let p = pos(variant(SH), "8k/9/9/9/9/9/9/9/K8 b 10G 1");
    let mut g = rules::Game::new(p, Some(3));
    for m in ["G*5e", "1a1b", "G*5f"] {
        assert_eq!(g.result(), None);
        g.play_usi(m).unwrap();
    }
    assert_eq!(g.result().map(|r| (r.outcome, r.reason)), Some((Outcome::Draw, TerminationReason::MaxPlies)));
    assert!(g.play_usi("1b1a").is_err(), "no move after the end");
}

#[test]
fn moves_are_refused_with_the_reason() {
    let p = rules::Position::start(variant(SH));
    use rules::MoveError::*;
    assert!(p.parse_usi("7g7f").is_ok());
    assert!(matches!(p.parse_usi("5e5d"), Err(NoPiece { .. })));
    assert!(matches!(p.parse_usi("3c3d"), Err(NotYourPiece { .. })));
    assert!(matches!(p.parse_usi("P*5e"), Err(NotInHand { .. })));
    assert!(matches!(p.parse_usi("7g7e"), Err(Illegal { .. })));
    assert!(matches!(p.parse_usi("7g&"), Err(NoPockets { .. })));
    assert!(matches!(p.parse_usi("7g7"), Err(Malformed { .. })));
    assert!(matches!(p.parse_usi("0a1a"), Err(Malformed { .. })));
    assert!(matches!(p.parse_usi("X*5e"), Err(Malformed { .. })));
    let text = p.parse_usi("7g7e").unwrap_err().to_string();
    assert!(text.contains("7g7e"), "{text}");
}
