//! Betza notation for piece moves, the subset shogi variants need.
//!
//! A description is a sequence of `[modifiers]ATOM[range]` terms, e.g. `WfF` (Gold),
//! `fFvW` (Copper), `sRvW` (Side Mover), `B3` (Tycoon), `ffN` (Knight).
//! Atoms: `W F D A N C Z H G` (leapers), `K` = `WF`, `R` = `WW`, `B` = `FF`, `Q` = `RB`
//! (riders); a doubled `W`/`F` is a rider; a number after a rider limits its range.
//! Directional modifiers, from the moving side's point of view: `f b l r s v`, combined
//! as Betza does: letters add up on orthogonal atoms, `fl`/`fr`/`bl`/`br` name one
//! diagonal, and doubled (`ff`, `bb`, …) or mixed (`fs`, `lv`, …) pairs pick the narrow
//! or wide leaps of oblique atoms such as the knight.
//! Movement-type modifiers (`m`, `c`, `j`, `n`, `p`, …) are not supported and reported.

use crate::square::DIRECTIONS;
use std::collections::BTreeSet;

/// Moves of one piece kind for Black, in board coordinates: a leap is a
/// (file delta, rank delta) with rank delta −1 forward; a slide is (direction, range).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Movement {
    pub leaps: BTreeSet<(i8, i8)>,
    pub slides: BTreeSet<(usize, u8)>,
}

impl Movement {
    /// The same movement seen by the other side (rotated 180°).
    pub fn rotated(&self) -> Movement {
        Movement {
            leaps: self.leaps.iter().map(|&(f, r)| (-f, -r)).collect(),
            slides: self.slides.iter().map(|&(d, n)| (crate::square::opposite_direction(d), n)).collect(),
        }
    }
}

/// Range recorded for an unlimited rider.
pub const UNLIMITED: u8 = u8::MAX;

#[derive(Clone, Copy, PartialEq, Eq)]
enum AtomClass {
    Orthogonal,
    Diagonal,
    Oblique,
}

/// Parses a Betza string; the error says what is wrong and at which character.
pub fn parse(betza: &str) -> Result<Movement, String> {
    let chars: Vec<char> = betza.chars().collect();
    if chars.is_empty() {
        return Err("empty Betza string".into());
    }
    let mut mv = Movement::default();
    let mut i = 0;
    while i < chars.len() {
        let start = i;
        let mut mods = String::new();
        while i < chars.len() && chars[i].is_ascii_lowercase() {
            if !"fblrsv".contains(chars[i]) {
                return Err(format!("unsupported modifier '{}' at position {} of \"{betza}\" (only f b l r s v are supported)", chars[i], i + 1));
            }
            mods.push(chars[i]);
            i += 1;
        }
        if i >= chars.len() {
            return Err(format!("modifiers \"{mods}\" at position {} of \"{betza}\" are not followed by an atom", start + 1));
        }
        let atom = chars[i];
        i += 1;
        let doubled = i < chars.len() && chars[i] == atom && matches!(atom, 'W' | 'F');
        if doubled {
            i += 1;
        }
        let mut digits = String::new();
        while i < chars.len() && chars[i].is_ascii_digit() {
            digits.push(chars[i]);
            i += 1;
        }
        let (components, rider): (&[(i8, i8)], bool) = match atom {
            'W' => (&[(1, 0)], doubled),
            'F' => (&[(1, 1)], doubled),
            'D' => (&[(2, 0)], false),
            'A' => (&[(2, 2)], false),
            'H' => (&[(3, 0)], false),
            'G' => (&[(3, 3)], false),
            'N' => (&[(1, 2)], false),
            'C' => (&[(1, 3)], false),
            'Z' => (&[(2, 3)], false),
            'K' => (&[(1, 0), (1, 1)], false),
            'R' => (&[(1, 0)], true),
            'B' => (&[(1, 1)], true),
            'Q' => (&[(1, 0), (1, 1)], true),
            other => return Err(format!("unknown atom '{other}' at position {} of \"{betza}\"", i)),
        };
        let range = if digits.is_empty() {
            if rider {
                UNLIMITED
            } else {
                1
            }
        } else {
            if !rider {
                return Err(format!("range {digits} after the leaper '{atom}' in \"{betza}\": only riders (R, B, Q, WW, FF) take a range"));
            }
            match digits.parse::<u8>() {
                Ok(n) if (1..UNLIMITED).contains(&n) => n,
                _ => return Err(format!("range '{digits}' in \"{betza}\" must be 1..=254")),
            }
        };
        for &(a, b) in components {
            let class = if b == 0 {
                AtomClass::Orthogonal
            } else if a == b {
                AtomClass::Diagonal
            } else {
                AtomClass::Oblique
            };
            let tokens = tokenize(&mods, class).map_err(|e| format!("{e} in \"{betza}\""))?;
            for (rx, fy) in symmetric_vectors(a, b) {
                if !tokens.is_empty() && !tokens.iter().any(|t| token_selects(t, rx, fy)) {
                    continue;
                }
                // Board coordinates: Black's right is toward file 1 (file delta −1),
                // Black's forward is toward rank a (rank delta −1).
                let (df, dr) = (-rx, -fy);
                if rider {
                    let unit = (df.signum(), dr.signum());
                    let d = DIRECTIONS.iter().position(|&x| x == unit).expect("rider atoms are orthogonal or diagonal");
                    mv.slides.insert((d, range));
                } else {
                    mv.leaps.insert((df, dr));
                }
            }
        }
    }
    // A one-step leap is redundant beside a slide in the same direction.
    let slide_dirs: Vec<usize> = mv.slides.iter().map(|&(d, _)| d).collect();
    mv.leaps.retain(|&(df, dr)| !slide_dirs.iter().any(|&d| DIRECTIONS[d] == (df, dr)));
    Ok(mv)
}

/// All 4 or 8 images of the leap (a, b) under the board symmetries, as (right, forward).
fn symmetric_vectors(a: i8, b: i8) -> BTreeSet<(i8, i8)> {
    let mut out = BTreeSet::new();
    for (x, y) in [(a, b), (b, a)] {
        for sx in [-1, 1] {
            for sy in [-1, 1] {
                out.insert((x * sx, y * sy));
            }
        }
    }
    out
}

fn tokenize(mods: &str, class: AtomClass) -> Result<Vec<String>, String> {
    let c: Vec<char> = mods.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let pair = if i + 1 < c.len() { Some((c[i], c[i + 1])) } else { None };
        let take_pair = match (class, pair) {
            (AtomClass::Diagonal, Some((a, b))) => "fb".contains(a) && "lr".contains(b),
            (AtomClass::Oblique, Some((a, b))) => {
                a == b
                    || matches!(
                        (a, b),
                        ('f', 's')
                            | ('s', 'f')
                            | ('b', 's')
                            | ('s', 'b')
                            | ('l', 'v')
                            | ('v', 'l')
                            | ('r', 'v')
                            | ('v', 'r')
                            | ('f', 'l')
                            | ('l', 'f')
                            | ('f', 'r')
                            | ('r', 'f')
                            | ('b', 'l')
                            | ('l', 'b')
                            | ('b', 'r')
                            | ('r', 'b')
                    )
            }
            _ => false,
        };
        if take_pair {
            out.push(c[i..i + 2].iter().collect());
            i += 2;
        } else {
            out.push(c[i].to_string());
            i += 1;
        }
    }
    Ok(out)
}

/// Whether a modifier token selects the vector (rx = rightward, fy = forward).
fn token_selects(token: &str, rx: i8, fy: i8) -> bool {
    let single = |c: char| match c {
        'f' => fy > 0,
        'b' => fy < 0,
        'r' => rx > 0,
        'l' => rx < 0,
        's' => rx != 0 && (fy == 0 || rx.abs() > fy.abs() || rx.abs() == fy.abs()),
        'v' => fy != 0 && (rx == 0 || fy.abs() > rx.abs() || rx.abs() == fy.abs()),
        _ => false,
    };
    let c: Vec<char> = token.chars().collect();
    match c.as_slice() {
        [a] => single(*a),
        // Doubled letter: the narrow leaps in that direction (ff = the knight's two forward leaps).
        [a, b] if a == b => {
            single(*a)
                && match a {
                    'f' | 'b' | 'v' => fy.abs() > rx.abs(),
                    _ => rx.abs() > fy.abs(),
                }
        }
        // f/b with s: the wide leaps forward/backward; l/r with v: the narrow leaps to that side.
        [a, b] if "sv".contains(*b) || "sv".contains(*a) => {
            let (dir, kind) = if "sv".contains(*b) { (*a, *b) } else { (*b, *a) };
            single(dir)
                && match kind {
                    's' => rx.abs() > fy.abs(),
                    _ => fy.abs() > rx.abs(),
                }
        }
        // Two directions: their intersection (fl = forward-left).
        [a, b] => single(*a) && single(*b),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaps(s: &str) -> Vec<(i8, i8)> {
        parse(s).unwrap().leaps.into_iter().collect()
    }

    #[test]
    fn gold_has_six_steps_none_diagonally_back() {
        let g = leaps("WfF");
        assert_eq!(g.len(), 6);
        assert!(!g.contains(&(1, 1)) && !g.contains(&(-1, 1)));
        assert!(g.contains(&(0, 1)) && g.contains(&(1, -1)) && g.contains(&(-1, -1)));
    }

    #[test]
    fn knight_leaps_forward_narrow_only() {
        let n = leaps("ffN");
        assert_eq!(n, vec![(-1, -2), (1, -2)]);
        let back = leaps("bbN");
        assert_eq!(back, vec![(-1, 2), (1, 2)]);
    }

    #[test]
    fn copper_and_promoted_knight() {
        let c = leaps("fFvW");
        assert_eq!(c.len(), 4);
        assert!(c.contains(&(0, -1)) && c.contains(&(0, 1)) && c.contains(&(1, -1)) && c.contains(&(-1, -1)));
        let pn = leaps("fWfFsWbbN");
        assert_eq!(pn.len(), 7);
        assert!(pn.contains(&(1, 0)) && pn.contains(&(1, 2)) && !pn.contains(&(0, 1)));
    }

    #[test]
    fn platinum_is_king_minus_straight_back() {
        let p = leaps("FsfW");
        assert_eq!(p.len(), 7);
        assert!(!p.contains(&(0, 1)));
    }

    #[test]
    fn side_mover_slides_sideways_steps_vertically() {
        let m = parse("sRvW").unwrap();
        assert_eq!(m.slides.len(), 2);
        assert!(m.slides.iter().all(|&(d, r)| DIRECTIONS[d].1 == 0 && r == UNLIMITED));
        assert_eq!(m.leaps.into_iter().collect::<Vec<_>>(), vec![(0, -1), (0, 1)]);
    }

    #[test]
    fn limited_riders_and_lance() {
        let t = parse("B3").unwrap();
        assert_eq!(t.slides.len(), 4);
        assert!(t.slides.iter().all(|&(_, r)| r == 3));
        let l = parse("fR").unwrap();
        assert_eq!(l.slides.into_iter().collect::<Vec<_>>(), vec![(0, UNLIMITED)]);
    }

    #[test]
    fn dragon_step_is_not_duplicated() {
        let d = parse("RF").unwrap();
        assert_eq!(d.slides.len(), 4);
        assert_eq!(d.leaps.len(), 4);
        let h = parse("BW").unwrap();
        assert_eq!(h.leaps.len(), 4);
    }

    #[test]
    fn errors_name_the_problem() {
        assert!(parse("").is_err());
        assert!(parse("mW").unwrap_err().contains("unsupported modifier 'm'"));
        assert!(parse("fX").unwrap_err().contains("unknown atom 'X'"));
        assert!(parse("N3").unwrap_err().contains("only riders"));
        assert!(parse("ff").unwrap_err().contains("not followed by an atom"));
    }
}
