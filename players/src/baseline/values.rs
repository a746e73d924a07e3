//! Piece values in centipawns for any variant.
//!
//! Kinds that move as a standard shogi piece moves take the usual table (Pawn 100 …
//! Dragon 1300), whatever their name: the movement is what the value is about, so Hand
//! shogi's Gold-mover is a Gold (550) and the pocket variant's Promoted Knight, which does
//! not move like a Gold there, is not. Every other kind (the Copper General, the Side
//! Mover, the Platinum General, Hand shogi's Pard, Tycoon, Shogun, …) gets a value from
//! its average number of moves on the variant's empty board, split into moves by leaps
//! and by slides: `value = a + b · leap mobility + c · slide mobility`, with `a`, `b`, `c`
//! fitted by least squares to the standard pieces measured on the same board, so both
//! kinds of value share one scale. Derived values are rounded to 10 cp and a promoted form
//! is worth at least its base (promotion is optional).
//!
//! A piece in hand is worth [`HAND_NUM`]/[`HAND_DEN`] (×1.1) of its board value: a drop
//! can go almost anywhere, so a piece in hand is a little more useful than the same piece
//! on an arbitrary square. A piece in a pocket is valued at its plain board value (see
//! `eval.rs`). Royal kinds are worth 0 (they are never traded).
//!
//! Any of these can be overridden ([`ValueOverride`], the `board.KIND=CP`, `hand.KIND=CP`
//! and `pocket.KIND=CP` keys of an `alphabeta` or `greedy` player spec), which is what
//! `copper tune` adjusts; without overrides the table is the one every earlier ladder
//! was rated with.

use rules::betza::{self, Movement, UNLIMITED};
use rules::{Bitboard, Geometry, PieceKind, Variant};

/// Hand value = board value × HAND_NUM / HAND_DEN.
pub(crate) const HAND_NUM: i32 = 11;
pub(crate) const HAND_DEN: i32 = 10;

/// The standard shogi table: (name, Betza movement, centipawns). A kind uses the entry
/// whose movement it has (the name is documentation).
const STANDARD: [(&str, &str, i32); 15] = [
    ("Pawn", "fW", 100),
    ("Lance", "fR", 300),
    ("Knight", "ffN", 400),
    ("Silver", "FfW", 500),
    ("Gold", "WfF", 550),
    ("Bishop", "B", 850),
    ("Rook", "R", 1000),
    ("Tokin", "WfF", 550),
    ("Promoted Lance", "WfF", 550),
    ("Promoted Knight", "WfF", 550),
    ("Promoted Silver", "WfF", 550),
    ("Horse", "BW", 1100),
    ("Dragon Horse", "BW", 1100),
    ("Dragon", "RF", 1300),
    ("Dragon King", "RF", 1300),
];

/// Smallest value a derived kind may get.
const MIN_DERIVED: i32 = 50;

/// Board and hand values of every kind of one variant, indexed by kind.
#[derive(Clone, Debug)]
pub struct PieceValues {
    board: Vec<i32>,
    hand: Vec<i32>,
    pocket: Vec<i32>,
    derived: Vec<bool>,
    mobility: Vec<f64>,
    names: Vec<String>,
    /// The fit `value = fit[0] + fit[1] · leap mobility + fit[2] · slide mobility`.
    pub fit: [f64; 3],
}

impl PieceValues {
    /// Values for a variant; cheap enough to compute once per player.
    pub(crate) fn for_variant(v: &Variant) -> PieceValues {
        let g = &v.geometry;
        // Least-squares fit on the distinct standard movements, measured on this board.
        let mut pts: Vec<([f64; 2], f64)> = Vec::new();
        let mut seen: Vec<&str> = Vec::new();
        for &(_, b, val) in &STANDARD {
            if seen.contains(&b) {
                continue;
            }
            seen.push(b);
            let m = betza::parse(b).expect("standard Betza strings parse");
            pts.push((mobility(&m, g), val as f64));
        }
        let coef = least_squares(&pts);

        let mut board = vec![0; v.num_kinds()];
        let mut derived = vec![false; v.num_kinds()];
        let mut mob = Vec::new();
        // Unpromoted kinds first (they come first in the variant's list), so that a
        // promoted kind can be compared with its base.
        for k in v.kinds() {
            let info = v.kind(k);
            let m = mobility(&info.movement, g);
            mob.push(m[0] + m[1]);
            if info.royal {
                continue;
            }
            let standard = STANDARD.iter().find(|&&(_, b, _)| betza::parse(b).map(|sm| sm == info.movement).unwrap_or(false));
            board[k.index()] = match standard {
                Some(&(_, _, val)) => val,
                None => {
                    derived[k.index()] = true;
                    let fit = coef[0] + coef[1] * m[0] + coef[2] * m[1];
                    // Round to 10 cp: the fit is not more precise than that.
                    let mut val = ((fit / 10.0).round() as i32 * 10).max(MIN_DERIVED);
                    // Promotion is optional, so a promoted form is worth at least its base.
                    if info.promoted {
                        val = val.max(board[info.unpromoted.index()]);
                    }
                    val
                }
            };
        }
        let hand = board.iter().map(|&b| b * HAND_NUM / HAND_DEN).collect();
        let pocket = board.clone();
        PieceValues { board, hand, pocket, derived, mobility: mob, names: v.kinds.iter().map(|k| k.name.clone()).collect(), fit: coef }
    }

    /// Value of a piece of kind `k` on the board (0 for the king).
    #[inline(always)]
    pub fn board(&self, k: PieceKind) -> i32 {
        self.board[k.index()]
    }

    /// Value of a piece of kind `k` in hand (×1.1 of its board value).
    #[inline(always)]
    pub fn hand(&self, k: PieceKind) -> i32 {
        self.hand[k.index()]
    }

    /// Value of a piece of kind `k` in a pocket (its board value unless overridden).
    #[inline(always)]
    pub fn pocket(&self, k: PieceKind) -> i32 {
        self.pocket[k.index()]
    }

    /// Applies `overrides` in order, each naming its kind by name or SFEN token
    /// (case-insensitive; spaces, `-` and `_` ignored in names): `Copper`, `c`,
    /// `promoted-copper`, `+C`.
    pub fn apply(&mut self, v: &Variant, overrides: &[ValueOverride]) -> Result<(), String> {
        for o in overrides {
            let k = kind_by_name(v, &o.kind)?;
            if v.kind(k).royal {
                return Err(format!("{}.{}: the {} is royal and has no value", o.place.key(), o.kind, v.kind(k).name));
            }
            let cp = o.centipawns.round() as i32;
            match o.place {
                ValuePlace::Board => self.board[k.index()] = cp,
                ValuePlace::Hand => self.hand[k.index()] = cp,
                ValuePlace::Pocket => self.pocket[k.index()] = cp,
            }
        }
        Ok(())
    }

    /// Whether the value of `k` was derived from its mobility (its movement is not a
    /// standard piece's).
    #[cfg(test)]
    fn is_derived(&self, k: PieceKind) -> bool {
        self.derived[k.index()]
    }

    /// The table as text, one kind a line: name, board, hand, mobility, origin.
    pub fn table(&self) -> String {
        let [a, b, c] = self.fit;
        let mut s = format!("fit: value = {a:.1} + {b:.1} * leap mobility + {c:.1} * slide mobility\n");
        for i in 0..self.board.len() {
            s += &format!(
                "  {:<18} board {:>5}  hand {:>5}  pocket {:>5}  mobility {:>5.2}  {}\n",
                self.names[i],
                self.board[i],
                self.hand[i],
                self.pocket[i],
                self.mobility[i],
                if self.board[i] == 0 {
                    "royal"
                } else if self.derived[i] {
                    "derived"
                } else {
                    "standard"
                }
            );
        }
        s
    }
}

/// Where a piece stands when a value applies to it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ValuePlace {
    Board,
    Hand,
    Pocket,
}

impl ValuePlace {
    /// The spec key prefix: `board`, `hand` or `pocket`.
    pub fn key(self) -> &'static str {
        match self {
            ValuePlace::Board => "board",
            ValuePlace::Hand => "hand",
            ValuePlace::Pocket => "pocket",
        }
    }

    /// The place a spec key names (`board.copper` → Board and `copper`).
    pub(crate) fn from_key(key: &str) -> Option<(ValuePlace, &str)> {
        let (place, kind) = key.split_once('.')?;
        let place = match place {
            "board" => ValuePlace::Board,
            "hand" => ValuePlace::Hand,
            "pocket" => ValuePlace::Pocket,
            _ => return None,
        };
        Some((place, kind))
    }
}

/// One piece value set by a player spec: the value of `kind` at `place`, in centipawns
/// (rounded to whole centipawns when applied, so a tuner may step by fractions).
#[derive(Clone, Debug, PartialEq)]
pub struct ValueOverride {
    pub place: ValuePlace,
    pub kind: String,
    pub centipawns: f64,
}

/// The kind of `v` called `name`: its name or its SFEN token, case-insensitive, with
/// spaces, `-` and `_` ignored in names.
fn kind_by_name(v: &Variant, name: &str) -> Result<PieceKind, String> {
    let norm = |s: &str| s.chars().filter(|c| !matches!(c, ' ' | '-' | '_')).flat_map(char::to_lowercase).collect::<String>();
    let want = norm(name);
    v.kinds().find(|&k| norm(&v.kind(k).name) == want || v.kind(k).token.eq_ignore_ascii_case(name)).ok_or_else(|| {
        let names: Vec<String> = v.kinds().filter(|&k| !v.kind(k).royal).map(|k| norm(&v.kind(k).name)).collect();
        format!("{} has no piece '{name}' (pieces: {})", v.name, names.join(", "))
    })
}

/// Average number of moves of a Black piece with this movement over every square of an
/// empty board: `[by leaps, by slides]`.
pub(crate) fn mobility(m: &Movement, g: &Geometry) -> [f64; 2] {
    let (mut leaps, mut slides) = (0u32, 0u32);
    for sq in g.squares() {
        let (f, r) = g.coords(sq);
        let mut lt = Bitboard::EMPTY;
        for &(df, dr) in &m.leaps {
            if let Some(t) = g.square_at(f as i8 + df, r as i8 + dr) {
                lt.set(t);
            }
        }
        let mut st = Bitboard::EMPTY;
        for &(d, n) in &m.slides {
            let (df, dr) = Geometry::direction_vector(d);
            let (mut x, mut y) = (f as i8 + df, r as i8 + dr);
            let mut steps = 0u8;
            while let Some(t) = g.square_at(x, y) {
                if n != UNLIMITED && steps >= n {
                    break;
                }
                st.set(t);
                steps += 1;
                x += df;
                y += dr;
            }
        }
        leaps += (lt & !st).count();
        slides += st.count();
    }
    let n = g.num_squares() as f64;
    [leaps as f64 / n, slides as f64 / n]
}

/// Ordinary least squares of `y = c0 + c1·x0 + c2·x1` (normal equations, Gaussian
/// elimination; a singular system falls back to a one-feature fit on the total).
fn least_squares(pts: &[([f64; 2], f64)]) -> [f64; 3] {
    let mut a = [[0.0f64; 4]; 3];
    for &(x, y) in pts {
        let row = [1.0, x[0], x[1]];
        for i in 0..3 {
            for j in 0..3 {
                a[i][j] += row[i] * row[j];
            }
            a[i][3] += row[i] * y;
        }
    }
    for col in 0..3 {
        let piv = (col..3).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs())).unwrap();
        a.swap(col, piv);
        if a[col][col].abs() < 1e-9 {
            let n = pts.len() as f64;
            let mx = pts.iter().map(|p| p.0[0] + p.0[1]).sum::<f64>() / n;
            let my = pts.iter().map(|p| p.1).sum::<f64>() / n;
            let sxy: f64 = pts.iter().map(|p| (p.0[0] + p.0[1] - mx) * (p.1 - my)).sum();
            let sxx: f64 = pts.iter().map(|p| (p.0[0] + p.0[1] - mx).powi(2)).sum();
            let b = if sxx > 0.0 { sxy / sxx } else { 0.0 };
            return [my - b * mx, b, b];
        }
        let pivot = a[col];
        for (r, row) in a.iter_mut().enumerate() {
            if r != col {
                let f = row[col] / pivot[col];
                for (x, p) in row.iter_mut().zip(pivot.iter()).skip(col) {
                    *x -= f * p;
                }
            }
        }
    }
    [a[0][3] / a[0][0], a[1][3] / a[1][1], a[2][3] / a[2][2]]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(v: &Variant, name: &str) -> PieceKind {
        v.kinds().find(|&k| v.kind(k).name == name).unwrap_or_else(|| panic!("{} has no {name}", v.name))
    }

    #[test]
    fn baseline_values_orderings() {
        for name in rules::BUILTIN {
            let v = Variant::builtin(name).unwrap();
            let pv = PieceValues::for_variant(v);
            println!("{name}:\n{}", pv.table());
            for k in v.kinds() {
                if v.kind(k).royal {
                    assert_eq!(pv.board(k), 0);
                } else {
                    assert!(pv.board(k) > 0, "{name} {}", v.kind(k).name);
                    assert!(pv.hand(k) > pv.board(k), "{name} {}", v.kind(k).name);
                }
            }
            // Promoted forms are worth at least their base in every shipped variant.
            for k in v.kinds() {
                if let Some(p) = v.kind(k).promotes_to {
                    assert!(pv.board(p) >= pv.board(k), "{name}: {} < {}", v.kind(p).name, v.kind(k).name);
                }
            }
        }
        let v = Variant::builtin("shogi").unwrap();
        let pv = PieceValues::for_variant(v);
        let val = |n| pv.board(kind(v, n));
        assert!(val("Rook") > val("Bishop"));
        assert!(val("Bishop") > val("Gold"));
        assert!(val("Gold") > val("Silver"));
        assert!(val("Silver") > val("Knight"));
        assert!(val("Knight") > val("Lance"));
        assert!(val("Lance") > val("Pawn"));
        assert!(val("Dragon") > val("Horse") && val("Horse") > val("Rook"));
        assert!((0..v.num_kinds()).all(|i| !pv.is_derived(PieceKind::from_index(i))));

        let v = Variant::builtin("pocket-copper").unwrap();
        let pv = PieceValues::for_variant(v);
        let val = |n| pv.board(kind(v, n));
        assert!(val("Pawn") < val("Copper") && val("Copper") < val("Gold"));
        assert!(pv.is_derived(kind(v, "Copper")));
        assert!(pv.is_derived(kind(v, "Promoted Knight")), "its movement is not the Gold's");
        assert_eq!(val("Promoted Copper"), val("Silver"), "it moves as a Silver");
        assert!(val("Platinum General") > val("Gold"));
        assert!(val("Side Mover") > val("Lance"));
        assert!(val("Dragon King") > val("Dragon Horse") && val("Dragon Horse") > val("Rook"));

        let v = Variant::builtin("hand-shogi").unwrap();
        let pv = PieceValues::for_variant(v);
        let val = |n| pv.board(kind(v, n));
        assert!(val("Shogun") > val("Tycoon"));
        assert!(val("Pard") > val("Onager"));
        assert!(val("Soldier") < val("Gold"));
        assert_eq!(val("Gold"), 550);
        assert_eq!(val("Gold-mover"), 550, "it moves as a Gold");
    }
}
