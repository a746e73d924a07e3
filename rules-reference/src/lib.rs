//! A slow, independent legal-move generator: the test oracle the rules engine's
//! conformance and perft tests compare its fast bitboard generator with.
//!
//! It walks each piece's moves square by square over a plain mailbox and tests king
//! safety by brute force (play the move, look for an attack on the king). It reads the
//! rules from the variant's definition text (`rules/variants/*.toml`, with the variant's
//! option choices applied here) — moves from the Betza strings, promotions, zones and
//! drop rules from the keys as written — not from the tables `rules` builds from that
//! text, so a mistake in building them shows up as a disagreement instead of being
//! shared. With `rules` it shares only the Betza parser, the square numbering and the
//! types of setups and moves; a [`Variant`] is used for its option choices and to number
//! piece kinds (matched by SFEN letter) as setups and moves do.
//!
//! The rules themselves are `shared/RULES.md`. Only tests depend on this crate.

use rules::betza;
use rules::{builtin_source, Color, DropMate, Geometry, Move, MoveKind, Piece, PieceKind, Setup, Square, Variant, VariantSpec};

/// One piece kind's rules, as the definition states them.
#[derive(Clone, Debug)]
struct Kind {
    /// Black's moves as (file step, rank step, most steps): a leap is one step of its
    /// own size, a slide repeats a unit step until it is blocked.
    moves: Vec<(i8, i8, u8)>,
    royal: bool,
    promotes_to: Option<PieceKind>,
    /// What a captured piece of this kind becomes in the captor's hand.
    in_hand: PieceKind,
    /// Must promote when arriving in this many far ranks.
    forced_promotion_ranks: u8,
    /// May not be dropped in this many far ranks.
    no_drop_ranks: u8,
    /// No second one of the same owner on a file, by a move or a drop.
    one_per_file: bool,
    drop_mate: DropMate,
    drop_only_with_check: bool,
}

/// The rules of one variant, read from its definition.
pub struct Reference {
    geometry: Geometry,
    promotion_ranks: u8,
    pockets: bool,
    /// By the variant's kind index.
    kinds: Vec<Kind>,
}

impl Reference {
    /// The oracle for a shipped variant, with the option choices `v` was loaded with.
    pub fn new(v: &Variant) -> Reference {
        let text = builtin_source(&v.name).unwrap_or_else(|| panic!("'{}' is not a shipped variant: use Reference::from_text", v.name));
        Reference::from_text(v, text)
    }

    /// The oracle for `v`, from the definition text `v` was built from.
    pub fn from_text(v: &Variant, text: &str) -> Reference {
        let spec = resolve(text, &v.options);
        let kind_of = |token: &str| v.kind_by_token(token).unwrap_or_else(|| panic!("{}: the definition's {token} is not a kind of the variant", v.name));
        let mut kinds: Vec<Option<Kind>> = vec![None; v.num_kinds()];
        let mut define = |k: PieceKind, kind: Kind| {
            assert!(kinds[k.index()].replace(kind).is_none(), "{}: two pieces of the definition are kind {}", v.name, v.kind(k).token);
        };
        for p in spec.pieces.values() {
            let base = kind_of(&p.letter);
            let promoted = p.promoted.as_ref().map(|pr| (kind_of(&format!("+{}", p.letter)), moves(&pr.betza)));
            define(
                base,
                Kind {
                    moves: moves(&p.betza),
                    royal: p.royal,
                    promotes_to: promoted.as_ref().map(|(k, _)| *k),
                    in_hand: base,
                    forced_promotion_ranks: p.forced_promotion_ranks,
                    no_drop_ranks: p.no_drop_ranks,
                    one_per_file: p.one_per_file,
                    drop_mate: p.drop_mate,
                    drop_only_with_check: p.drop_only_with_check,
                },
            );
            // A promoted piece moves its own way, is captured back to the base piece,
            // and (dropped from a pocket) has no drop restriction.
            if let Some((k, moves)) = promoted {
                define(
                    k,
                    Kind {
                        moves,
                        royal: false,
                        promotes_to: None,
                        in_hand: base,
                        forced_promotion_ranks: 0,
                        no_drop_ranks: 0,
                        one_per_file: false,
                        drop_mate: DropMate::Allowed,
                        drop_only_with_check: false,
                    },
                );
            }
        }
        let kinds = kinds
            .into_iter()
            .enumerate()
            .map(|(i, k)| k.unwrap_or_else(|| panic!("{}: kind {} is not in the definition", v.name, v.kind(PieceKind::from_index(i)).token)))
            .collect();
        Reference { geometry: Geometry::new(spec.files, spec.ranks), promotion_ranks: spec.promotion_ranks, pockets: spec.pockets, kinds }
    }

    /// Every legal move, found the slow way.
    pub fn legal_moves(&self, s: &Setup) -> Vec<Move> {
        let us = s.side;
        let safe = |m: Move| !self.in_check(&self.apply(s, m), us);
        let mut out = Vec::new();
        for from in self.geometry.squares() {
            let Some(p) = s.board[from.index()] else { continue };
            if p.color != us {
                continue;
            }
            let kind = &self.kinds[p.kind.index()];
            let mut has_board_move = false;
            for to in self.attacks(&s.board, from, p) {
                if matches!(s.board[to.index()], Some(q) if q.color == us) {
                    continue;
                }
                if kind.one_per_file && self.another_on_file(s, p, to, Some(from)) {
                    continue;
                }
                // Promotion: optional when the move starts or ends in the zone, forced on
                // arriving in the piece's forced ranks.
                let may_promote =
                    kind.promotes_to.is_some() && (self.in_far_ranks(us, from, self.promotion_ranks) || self.in_far_ranks(us, to, self.promotion_ranks));
                let must_promote = self.in_far_ranks(us, to, kind.forced_promotion_ranks);
                for promote in [true, false] {
                    if (promote && !may_promote) || (!promote && must_promote) {
                        continue;
                    }
                    let m = Move::board(from, to, promote);
                    if safe(m) {
                        has_board_move = true;
                        out.push(m);
                    }
                }
            }
            // Pocket move: any piece but the king, into an empty pocket, if it has a legal
            // board move.
            if self.pockets && s.pockets[us.index()].is_none() && !kind.royal && has_board_move {
                let m = Move::pocket_in(from);
                if safe(m) {
                    out.push(m);
                }
            }
        }
        for (i, &count) in s.hands[us.index()].iter().enumerate() {
            if count > 0 {
                self.drops(s, PieceKind::from_index(i), false, &mut out);
            }
        }
        if let Some(k) = s.pockets[us.index()] {
            self.drops(s, k, true, &mut out);
        }
        out
    }

    /// Plays a move on a setup (no legality checks).
    pub fn apply(&self, s: &Setup, m: Move) -> Setup {
        let mut n = s.clone();
        let us = s.side;
        match m.kind() {
            MoveKind::Board { from, to, promote } => {
                let p = n.board[from.index()].take().expect("a board move starts on a piece");
                if let Some(captured) = n.board[to.index()] {
                    let c = &self.kinds[captured.kind.index()];
                    if !c.royal {
                        n.hands[us.index()][c.in_hand.index()] += 1;
                    }
                }
                let kind = if promote { self.kinds[p.kind.index()].promotes_to.expect("only a promotable piece promotes") } else { p.kind };
                n.board[to.index()] = Some(Piece::new(us, kind));
            }
            MoveKind::Drop { kind, to } => {
                n.hands[us.index()][kind.index()] -= 1;
                n.board[to.index()] = Some(Piece::new(us, kind));
            }
            MoveKind::PocketIn { from } => {
                let p = n.board[from.index()].take().expect("a pocket move starts on a piece");
                n.pockets[us.index()] = Some(p.kind);
            }
            MoveKind::PocketDrop { kind, to } => {
                n.pockets[us.index()] = None;
                n.board[to.index()] = Some(Piece::new(us, kind));
            }
        }
        n.side = !us;
        n.move_number += 1;
        n
    }

    /// Drops of `k` (from hand, or from the pocket) with the drop rules: an empty square,
    /// not in the piece's no-drop ranks, no second one-per-file piece on the file, the
    /// dropper's king safe, a check where the piece may only drop with check, and no mate
    /// where a dropping mate is illegal.
    fn drops(&self, s: &Setup, k: PieceKind, from_pocket: bool, out: &mut Vec<Move>) {
        let us = s.side;
        let kind = &self.kinds[k.index()];
        for to in self.geometry.squares() {
            if s.board[to.index()].is_some() || self.in_far_ranks(us, to, kind.no_drop_ranks) {
                continue;
            }
            if kind.one_per_file && self.another_on_file(s, Piece::new(us, k), to, None) {
                continue;
            }
            let m = if from_pocket { Move::pocket_drop(k, to) } else { Move::drop(k, to) };
            let after = self.apply(s, m);
            if self.in_check(&after, us) {
                continue;
            }
            let gives_check = self.in_check(&after, !us);
            if kind.drop_only_with_check && !gives_check {
                continue;
            }
            if kind.drop_mate == DropMate::Illegal && gives_check && self.legal_moves(&after).is_empty() {
                continue;
            }
            out.push(m);
        }
    }

    /// Whether `sq` is within the `n` ranks farthest from `c` (the last rank `c` moves
    /// toward is the first of them: rank a for Black, the last rank for White).
    fn in_far_ranks(&self, c: Color, sq: Square, n: u8) -> bool {
        let (_, rank) = self.geometry.coords(sq);
        let depth = match c {
            Color::Black => rank + 1,
            Color::White => self.geometry.ranks - rank,
        };
        depth <= n
    }

    /// Whether another piece equal to `p` stands on the file of `sq` (ignoring `except`).
    fn another_on_file(&self, s: &Setup, p: Piece, sq: Square, except: Option<Square>) -> bool {
        let file = self.geometry.coords(sq).0;
        self.geometry.squares().any(|t| Some(t) != except && s.board[t.index()] == Some(p) && self.geometry.coords(t).0 == file)
    }

    /// Squares the piece `p` on `from` attacks (may move to, ignoring what stands there).
    fn attacks(&self, board: &[Option<Piece>], from: Square, p: Piece) -> Vec<Square> {
        let g = &self.geometry;
        let (f, r) = g.coords(from);
        // Betza moves are Black's; White's are the same turned 180°.
        let sign = if p.color == Color::Black { 1 } else { -1 };
        let mut out = Vec::new();
        for &(df, dr, most) in &self.kinds[p.kind.index()].moves {
            let (mut x, mut y) = (f as i8, r as i8);
            for _ in 0..most {
                x += sign * df;
                y += sign * dr;
                let Some(t) = g.square_at(x, y) else { break };
                out.push(t);
                if board[t.index()].is_some() {
                    break;
                }
            }
        }
        out.sort();
        out.dedup();
        out
    }

    fn in_check(&self, s: &Setup, c: Color) -> bool {
        let king = self.geometry.squares().find(|sq| matches!(s.board[sq.index()], Some(p) if p.color == c && self.kinds[p.kind.index()].royal));
        king.is_some_and(|k| {
            self.geometry.squares().any(|from| matches!(s.board[from.index()], Some(p) if p.color != c && self.attacks(&s.board, from, p).contains(&k)))
        })
    }
}

/// Black's moves of a Betza string as (file step, rank step, most steps).
fn moves(text: &str) -> Vec<(i8, i8, u8)> {
    let m = betza::parse(text).unwrap_or_else(|e| panic!("Betza '{text}': {e}"));
    let leaps = m.leaps.iter().map(|&(df, dr)| (df, dr, 1));
    let slides = m.slides.iter().map(|&(d, n)| {
        let (df, dr) = Geometry::direction_vector(d);
        (df, dr, n)
    });
    leaps.chain(slides).collect()
}

/// The definition with the chosen options applied: each choice sets dotted key paths.
fn resolve(text: &str, options: &[(String, String)]) -> VariantSpec {
    let mut doc: toml::Table = toml::from_str(text).expect("the definition is TOML");
    for (name, choice) in options {
        let patch = doc
            .get("options")
            .and_then(|o| o.get(name.as_str()))
            .and_then(|o| o.get("choices"))
            .and_then(|c| c.get(choice.as_str()))
            .and_then(|c| c.as_table())
            .unwrap_or_else(|| panic!("option {name} has no choice {choice}"))
            .clone();
        for (path, value) in patch {
            let mut keys: Vec<&str> = path.split('.').collect();
            let last = keys.pop().expect("a key path");
            let mut table = &mut doc;
            for key in keys {
                table = table.entry(key).or_insert(toml::Value::Table(toml::Table::new())).as_table_mut().expect("a key path through tables");
            }
            table.insert(last.to_string(), value);
        }
    }
    toml::Value::Table(doc).try_into().expect("the definition matches the schema")
}

#[cfg(test)]
mod tests {
    use super::*;
    use rules::{Position, BUILTIN};

    fn start_moves(v: &'static Variant) -> usize {
        Reference::new(v).legal_moves(&Position::start(v).to_setup()).len()
    }

    #[test]
    fn start_positions_have_the_known_number_of_moves() {
        assert_eq!(start_moves(Variant::builtin("shogi").unwrap()), 30);
        assert_eq!(start_moves(Variant::builtin("minishogi").unwrap()), 14);
    }

    #[test]
    fn reads_every_shipped_variant_and_option() {
        for name in BUILTIN {
            let v = Variant::builtin(name).unwrap();
            assert!(start_moves(v) > 0, "{name}");
            for (option, spec) in &v.option_specs {
                for choice in spec.choices.keys() {
                    let w = Variant::load(name, &[(option.clone(), choice.clone())]).unwrap();
                    assert!(start_moves(w) > 0, "{name} {option}={choice}");
                }
            }
        }
    }

    #[test]
    fn options_change_the_rules_read() {
        let on = Variant::load("pocket-copper", &[("copper-forced-promotion".into(), "on".into())]).unwrap();
        let off = Variant::load("pocket-copper", &[("copper-forced-promotion".into(), "off".into())]).unwrap();
        let copper = |v: &Variant| Reference::new(v).kinds[v.kind_by_token("C").unwrap().index()].forced_promotion_ranks;
        assert_eq!((copper(on), copper(off)), (1, 0));
        let gold = Variant::load("pocket-copper", &[("promoted-knight".into(), "gold".into())]).unwrap();
        let promoted_knight = |v: &Variant| Reference::new(v).kinds[v.kind_by_token("+N").unwrap().index()].moves.len();
        assert_eq!((promoted_knight(Variant::builtin("pocket-copper").unwrap()), promoted_knight(gold)), (7, 6));
    }
}
