//! One game as the page shows it: every ply's position as our rules engine writes it
//! (SFEN with the pocket field), the move that led there, the squares it marks and the
//! score recorded for it. The page's script only draws these; it knows no rules.

use arena::GameEnd;
use gamerecords::GameRecord;
use records::Record;
use rules::{piece_token, Color, Move, MoveKind, Outcome, Position, Variant};
use serde::Serialize;

/// A game of the page.
#[derive(Clone, Debug, Serialize)]
pub struct GameView {
    /// One line for the game list: `round 3: alpha - beta`.
    pub title: String,
    pub black: String,
    pub white: String,
    /// The variant's name (a key of the page's `variants`).
    pub variant: String,
    /// `1-0`, `0-1`, `1/2-1/2` or `*` (unfinished or unknown).
    pub result: String,
    /// How it ended (`checkmate`, `resignation`, `max-plies`, …), empty when unknown.
    pub ending: String,
    /// What the plies' `v` are: `cp` (engine scores, centipawns), `value` (the network's
    /// value in [-1, 1]), or empty when the record has none. Always from Black's side.
    pub score_unit: String,
    pub plies: Vec<PlyView>,
}

/// A position of a game: ply 0 is the start, ply N the position after move N.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PlyView {
    /// The position, as `Position::to_sfen` writes it.
    #[serde(rename = "s")]
    pub sfen: String,
    /// The move that led here in the variant's notation (USI with the pocket
    /// extensions), after the mover's piece: `P 7g7f`, `C& 5e` is written `C&5e`.
    #[serde(rename = "m", skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The squares the move marks (from and to; one for drops and pocket moves), as
    /// indices `rank · files + file − 1`.
    #[serde(rename = "k", skip_serializing_if = "Vec::is_empty")]
    pub marks: Vec<u16>,
    /// The score recorded for the move, from Black's side (see `GameView::score_unit`).
    #[serde(rename = "v", skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
}

/// Centipawns a mate score is drawn at.
pub const MATE_CP: f64 = 3000.0;

/// The squares a move marks on the board.
pub fn marked_squares(m: Move) -> Vec<u16> {
    match m.kind() {
        MoveKind::Board { from, to, .. } => vec![from.index() as u16, to.index() as u16],
        MoveKind::Drop { to, .. } | MoveKind::PocketDrop { to, .. } => vec![to.index() as u16],
        MoveKind::PocketIn { from } => vec![from.index() as u16],
    }
}

/// `P 7g7f`: a board or pocket move after the mover's piece (as Black writes it); drops
/// as their USI text, which names the piece (`P*5e`, `C&5e`).
pub fn move_label(before: &Position, m: Move) -> String {
    let v = before.variant();
    let usi = v.move_to_usi(m);
    match m.kind() {
        MoveKind::Board { from, .. } | MoveKind::PocketIn { from } => match before.piece_at(from) {
            Some(p) => format!("{} {usi}", v.kind(p.kind).token),
            None => usi,
        },
        MoveKind::Drop { .. } | MoveKind::PocketDrop { .. } => usi,
    }
}

/// Every position of `game` as the pages show it, from its start (no scores).
pub fn plies_of(game: &rules::Game) -> Vec<PlyView> {
    let mut pos = game.start().clone();
    let mut plies = vec![PlyView { sfen: pos.to_sfen(), label: None, marks: Vec::new(), score: None }];
    for &m in game.moves() {
        let label = move_label(&pos, m);
        pos.play_unchecked(m);
        plies.push(PlyView { sfen: pos.to_sfen(), label: Some(label), marks: marked_squares(m), score: None });
    }
    plies
}

/// The mover's score in a record's comment (`+123`, `-40`, `mate +5`), in centipawns
/// (a mate at ±[`MATE_CP`]).
pub fn parse_score_comment(text: &str) -> Option<f64> {
    let t = text.trim();
    if let Some(rest) = t.strip_prefix("mate") {
        let n: i64 = rest.trim().parse().ok()?;
        return Some(if n > 0 || rest.trim().starts_with('+') { MATE_CP } else { -MATE_CP });
    }
    t.parse::<i64>().ok().map(|x| x as f64)
}

fn result_text(end: Option<&GameEnd>) -> String {
    match end.map(|e| e.outcome) {
        Some(Outcome::Win(Color::Black)) => "1-0",
        Some(Outcome::Win(Color::White)) => "0-1",
        Some(Outcome::Draw) => "1/2-1/2",
        None => "*",
    }
    .into()
}

impl GameView {
    /// A game record, replayed move by move by the rules engine (an illegal move is an
    /// error naming its ply).
    pub fn from_record(record: &GameRecord, title: String) -> Result<GameView, gamerecords::RecordError> {
        let variant = record.load_variant()?;
        let game = record.to_game(variant)?;
        let mut plies = plies_of(&game);
        let mut any_score = false;
        let first = game.start().side_to_move();
        for (i, ply) in plies.iter_mut().skip(1).enumerate() {
            let mover = if i % 2 == 0 { first } else { !first };
            ply.score = record.comments.get(i).and_then(|c| c.as_deref()).and_then(parse_score_comment).map(|s| if mover == Color::Black { s } else { -s });
            any_score |= ply.score.is_some();
        }
        Ok(GameView {
            title,
            black: record.black.clone(),
            white: record.white.clone(),
            variant: variant.name.clone(),
            result: result_text(record.end.as_ref()),
            ending: record.end.map(|e| e.name().to_string()).unwrap_or_default(),
            score_unit: if any_score { "cp".into() } else { String::new() },
            plies,
        })
    }

    /// A self-play game from its shard: the recorded positions in order, each move found
    /// as the one legal move that leads from a position to the next. The search's value
    /// of each position is the score. `ending` comes from the generation's `games.jsonl`.
    /// An error says which position does not follow from the one before.
    pub fn from_shard_records(variant: &'static Variant, records: &[Record], title: String, ending: String) -> Result<GameView, String> {
        let mut recs: Vec<&Record> = records.iter().collect();
        recs.sort_by_key(|r| r.ply);
        let positions: Vec<Position> =
            recs.iter().map(|r| Position::from_sfen(variant, &r.sfen).map_err(|e| format!("ply {}: {e}", r.ply))).collect::<Result<_, _>>()?;
        let Some(first) = positions.first() else { return Err("no positions".into()) };
        let value_of = |r: &Record, pos: &Position| {
            let v = f64::from(r.search_value);
            if pos.side_to_move() == Color::Black {
                v
            } else {
                -v
            }
        };
        let mut plies = vec![PlyView { sfen: first.to_sfen(), label: None, marks: Vec::new(), score: Some(value_of(recs[0], first)) }];
        for (k, w) in positions.windows(2).enumerate() {
            let (before, after) = (&w[0], &w[1]);
            let target = after.to_sfen();
            let found = before.legal_moves().iter().copied().find(|&m| {
                let mut p = before.clone();
                p.play_unchecked(m);
                p.to_sfen() == target
            });
            let Some(m) = found else {
                return Err(format!("ply {}: no legal move leads from '{}' to '{}'", recs[k + 1].ply, before.to_sfen(), target));
            };
            plies.push(PlyView { sfen: target, label: Some(move_label(before, m)), marks: marked_squares(m), score: Some(value_of(recs[k + 1], after)) });
        }
        // The record's result is the side to move's at the first position.
        let result = match (recs[0].result, first.side_to_move()) {
            (0, _) => "1/2-1/2",
            (1, Color::Black) | (-1, Color::White) => "1-0",
            _ => "0-1",
        };
        Ok(GameView {
            title,
            black: "self-play".into(),
            white: "self-play".into(),
            variant: variant.name.clone(),
            result: result.into(),
            ending,
            score_unit: "value".into(),
            plies,
        })
    }
}

/// What the page draws for a position, as one canonical line: the board rank by rank
/// from Black's side (`.` empty, SFEN tokens, files from high to low), both hands in the
/// variant's order, both pockets, the side to move. The browser test compares the line
/// the page reads back from its SVG with this one.
pub fn canonical(pos: &Position) -> String {
    let v = pos.variant();
    let g = &v.geometry;
    let mut rows = Vec::new();
    for r in 0..g.ranks {
        let mut row = String::new();
        for col in 0..g.files {
            let file = g.files - 1 - col;
            match g.square_at(file as i8, r as i8).and_then(|sq| pos.piece_at(sq)) {
                Some(p) => row.push_str(&piece_token(v, p)),
                None => row.push('.'),
            }
        }
        rows.push(row);
    }
    let hand = |c: Color| {
        let items: Vec<String> = v
            .hand_kinds
            .iter()
            .filter_map(|&k| {
                let n = pos.hand_count(c, k);
                (n > 0).then(|| format!("{}{n}", piece_token(v, rules::Piece::new(c, k))))
            })
            .collect();
        if items.is_empty() {
            "-".to_string()
        } else {
            items.join(",")
        }
    };
    let pocket = |c: Color| pos.pocket(c).map(|k| piece_token(v, rules::Piece::new(c, k))).unwrap_or_else(|| "-".into());
    let side = if pos.side_to_move() == Color::Black { "b" } else { "w" };
    format!("{} hb:{} hw:{} pb:{} pw:{} side:{side}", rows.join("/"), hand(Color::Black), hand(Color::White), pocket(Color::Black), pocket(Color::White))
}

/// Square names (`7g`) of marked squares, sorted, comma-separated (`-` for none): the
/// last-move part of the canonical line.
pub fn marks_text(v: &Variant, marks: &[u16]) -> String {
    let mut names: Vec<String> = marks.iter().map(|&i| v.geometry.square_name(rules::Square::new_unchecked(i as u8))).collect();
    names.sort();
    if names.is_empty() {
        "-".into()
    } else {
        names.join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rules::Game;

    #[test]
    fn scores_are_read_from_comments() {
        assert_eq!(parse_score_comment("+123"), Some(123.0));
        assert_eq!(parse_score_comment("-40"), Some(-40.0));
        assert_eq!(parse_score_comment("mate +5"), Some(MATE_CP));
        assert_eq!(parse_score_comment("mate -2"), Some(-MATE_CP));
        assert_eq!(parse_score_comment("book"), None);
    }

    #[test]
    fn a_record_becomes_plies_with_labels_marks_and_black_scores() {
        let v = Variant::builtin("pocket-copper").unwrap();
        let mut g = Game::new(Position::start(v), None);
        for m in ["C&5e", "7c7d", "7g&"] {
            g.play_usi(m).unwrap();
        }
        let mut r = GameRecord::from_game(&g, None, "A", "B");
        r.comments = vec![Some("+10".into()), Some("+20".into()), None];
        let view = GameView::from_record(&r, "t".into()).unwrap();
        assert_eq!(view.plies.len(), 4);
        assert_eq!(view.plies[1].label.as_deref(), Some("C&5e"));
        assert_eq!(view.plies[2].label.as_deref(), Some("P 7c7d"));
        assert_eq!(view.plies[3].label.as_deref(), Some("P 7g&"));
        assert_eq!(view.plies[1].score, Some(10.0));
        assert_eq!(view.plies[2].score, Some(-20.0));
        assert_eq!(view.plies[3].score, None);
        assert_eq!(marks_text(v, &view.plies[3].marks), "7g");
        assert_eq!(view.score_unit, "cp");
        assert_eq!(view.result, "*");
        let pos = Position::from_sfen(v, &view.plies[3].sfen).unwrap();
        assert_eq!(canonical(&pos), "lnsgkgsnl/.r.....b./pp.pppppp/..p....../....C..../........./PP.PPPPPP/.B.....R./LNSGKGSNL hb:- hw:c1 pb:P pw:- side:w");
    }

    #[test]
    fn shard_positions_give_back_the_moves() {
        let v = Variant::builtin("minishogi").unwrap();
        let mut g = Game::new(Position::start(v), None);
        let mut recs = Vec::new();
        for (i, m) in ["5d5c", "1b1c", "1e1d"].iter().enumerate() {
            recs.push(Record {
                sfen: g.position().to_sfen(),
                repetitions: 1,
                ply: i as u16,
                max_plies: 100,
                policy: Vec::new(),
                full_search: false,
                search_value: 0.25,
                result: 1,
                start: "sfen".into(),
                game_id: 1,
            });
            g.play_usi(m).unwrap();
        }
        let view = GameView::from_shard_records(v, &recs, "t".into(), "checkmate".into()).unwrap();
        let labels: Vec<_> = view.plies.iter().filter_map(|p| p.label.clone()).collect();
        assert_eq!(labels, ["P 5d5c", "P 1b1c"]);
        assert_eq!(view.plies[1].score, Some(-0.25));
        assert_eq!(view.result, "1-0");
        recs.swap(0, 2);
        recs[0].ply = 0;
        recs[2].ply = 2;
        assert!(GameView::from_shard_records(v, &recs, "t".into(), String::new()).unwrap_err().contains("no legal move"));
    }
}
