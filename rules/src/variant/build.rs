//! A resolved definition becomes a [`Variant`]: piece kinds in a fixed order (every
//! unpromoted piece in file order, then the promoted forms), per-colour move tables,
//! promotion zones and drop restrictions, with every problem reported. Start positions
//! are checked one layer up, in [`super::load`], because that needs [`crate::sfen`].

use super::spec::{OptionSpec, PromotedSpec, VariantSpec};
use super::{KindInfo, KindTables, Variant};
use crate::betza::{self, Movement};
use crate::bitboard::Bitboard;
use crate::geometry::Geometry;
use crate::piece::{DropMate, PieceKind, MAX_KINDS};
use crate::square::{Color, Square, DIRECTIONS};
use indexmap::IndexMap;
use std::collections::BTreeMap;

/// Builds the variant, or `None` when a problem (added to `problems`) prevents it.
pub(crate) fn build(
    spec: VariantSpec,
    options: Vec<(String, String)>,
    option_specs: IndexMap<String, OptionSpec>,
    problems: &mut Vec<String>,
) -> Option<Variant> {
    let mut ok = true;
    let mut bad = |p: String, problems: &mut Vec<String>| {
        problems.push(p);
        ok = false;
    };
    if spec.files == 0 || spec.ranks == 0 || spec.files > 9 || spec.ranks > 9 {
        bad(format!("board {}x{}: files and ranks must be 1..=9", spec.files, spec.ranks), problems);
        return None;
    }
    let geometry = Geometry::new(spec.files, spec.ranks);
    if spec.promotion_ranks > spec.ranks {
        bad(format!("promotion_ranks {} exceeds the {} ranks", spec.promotion_ranks, spec.ranks), problems);
    }
    // Kinds: every unpromoted piece in file order, then the promoted forms.
    let mut kinds: Vec<KindInfo> = Vec::new();
    let mut promoted_of: Vec<(usize, PromotedSpec)> = Vec::new();
    for (name, p) in &spec.pieces {
        let movement = match betza::parse(&p.betza) {
            Ok(m) => m,
            Err(e) => {
                bad(format!("pieces.{name}.betza: {e}"), problems);
                Movement::default()
            }
        };
        let letter_ok = p.letter.len() == 1 && p.letter.chars().all(|c| c.is_ascii_uppercase());
        if !letter_ok {
            bad(format!("pieces.{name}.letter '{}' must be one uppercase letter", p.letter), problems);
        }
        if p.forced_promotion_ranks > 0 && p.promoted.is_none() {
            bad(format!("pieces.{name}: forced_promotion_ranks set but the piece does not promote"), problems);
        }
        if p.forced_promotion_ranks > spec.promotion_ranks {
            bad(format!("pieces.{name}: forced_promotion_ranks {} exceeds promotion_ranks {}", p.forced_promotion_ranks, spec.promotion_ranks), problems);
        }
        if p.no_drop_ranks > spec.ranks {
            bad(format!("pieces.{name}: no_drop_ranks {} exceeds the board", p.no_drop_ranks), problems);
        }
        if p.royal && p.promoted.is_some() {
            bad(format!("pieces.{name}: a royal piece may not promote"), problems);
        }
        let idx = kinds.len();
        kinds.push(KindInfo {
            name: name.clone(),
            token: p.letter.clone(),
            promoted: false,
            promotes_to: None,
            unpromoted: PieceKind::from_index(idx),
            royal: p.royal,
            one_per_file: p.one_per_file,
            drop_mate: p.drop_mate,
            drop_only_with_check: p.drop_only_with_check,
            declaration_points: p.declaration_points,
            movement,
        });
        if let Some(pr) = &p.promoted {
            promoted_of.push((idx, pr.clone()));
        }
    }
    for (base, pr) in promoted_of {
        let movement = match betza::parse(&pr.betza) {
            Ok(m) => m,
            Err(e) => {
                bad(format!("pieces.{}.promoted.betza: {e}", kinds[base].name), problems);
                Movement::default()
            }
        };
        let idx = kinds.len();
        let b = kinds[base].clone();
        kinds[base].promotes_to = Some(PieceKind::from_index(idx));
        kinds.push(KindInfo {
            name: pr.name.clone(),
            token: format!("+{}", b.token),
            promoted: true,
            promotes_to: None,
            unpromoted: PieceKind::from_index(base),
            royal: false,
            one_per_file: false,
            drop_mate: DropMate::Allowed,
            drop_only_with_check: false,
            declaration_points: b.declaration_points,
            movement,
        });
    }
    if kinds.len() > MAX_KINDS {
        bad(format!("{} piece kinds (promoted forms included); at most {MAX_KINDS} are supported", kinds.len()), problems);
        return None;
    }
    let mut seen = BTreeMap::new();
    for k in &kinds {
        if let Some(prev) = seen.insert(k.token.clone(), k.name.clone()) {
            bad(format!("pieces {prev} and {} share the letter {}", k.name, k.token), problems);
        }
    }
    let royals: Vec<usize> = (0..kinds.len()).filter(|&i| kinds[i].royal).collect();
    if royals.len() != 1 {
        bad(format!("exactly one royal piece kind is required, found {}", royals.len()), problems);
    }
    let royal_kind = PieceKind::from_index(royals.first().copied().unwrap_or(0));
    if kinds.iter().any(|k| k.movement.leaps.is_empty() && k.movement.slides.is_empty()) {
        // Already reported as a Betza error where that is the cause.
        if problems.is_empty() {
            bad("a piece has no moves".into(), problems);
        }
    }

    let zone = [geometry.far_ranks(Color::Black, spec.promotion_ranks), geometry.far_ranks(Color::White, spec.promotion_ranks)];
    let mut tables: [Vec<KindTables>; 2] = [Vec::new(), Vec::new()];
    for c in Color::BOTH {
        for k in kinds.iter() {
            let mv = if c == Color::Black { k.movement.clone() } else { k.movement.rotated() };
            let mut steps = Box::new([Bitboard::EMPTY; 128]);
            for sq in geometry.squares() {
                let (f, r) = geometry.coords(sq);
                for &(df, dr) in &mv.leaps {
                    if let Some(t) = geometry.square_at(f as i8 + df, r as i8 + dr) {
                        steps[sq.index()].set(t);
                    }
                }
            }
            let mut slide_range = [0u8; 8];
            for &(d, n) in &mv.slides {
                slide_range[d] = slide_range[d].max(n);
            }
            let reach = per_square(&geometry, |sq| mv.slides.iter().fold(steps[sq.index()], |a, &(d, n)| a | geometry.ray_within(sq, d, n)));
            let base = if k.promoted { None } else { spec.pieces.get(&k.name) };
            let forced = base.map(|p| geometry.far_ranks(c, p.forced_promotion_ranks)).unwrap_or_default();
            let no_drop = base.map(|p| geometry.far_ranks(c, p.no_drop_ranks)).unwrap_or_default();
            let leaves_file = mv.leaps.iter().any(|&(df, _)| df != 0) || mv.slides.iter().any(|&(d, _)| DIRECTIONS[d].0 != 0);
            tables[c.index()].push(KindTables {
                steps,
                slides: mv.slides.iter().copied().collect(),
                reach,
                slide_range,
                forced_promotion: forced,
                no_drop,
                leaves_file,
            });
        }
    }
    let flag_squares = if spec.flag_win {
        match &spec.flag_squares {
            None => {
                bad("flag_win is on but flag_squares is missing".into(), problems);
                None
            }
            Some([b, w]) => match (geometry.parse_square(b), geometry.parse_square(w)) {
                (Some(b), Some(w)) => Some([b, w]),
                _ => {
                    bad(format!("flag_squares [{b}, {w}] are not squares of this board"), problems);
                    None
                }
            },
        }
    } else {
        None
    };
    if spec.max_plies == 0 {
        bad("max_plies must be at least 1".into(), problems);
    }
    let hand_kinds: Vec<PieceKind> = (0..kinds.len()).filter(|&i| !kinds[i].promoted && !kinds[i].royal).map(PieceKind::from_index).collect();
    let has_sliders = kinds.iter().any(|k| !k.movement.slides.is_empty());
    let slider_kinds = (0..kinds.len()).filter(|&i| !kinds[i].movement.slides.is_empty()).map(PieceKind::from_index).collect();
    // Where an enemy leaper must stand to attack a square next to (a step of) the king.
    let reach = |m: &Movement| m.leaps.iter().map(|&(df, dr)| df.unsigned_abs().max(dr.unsigned_abs())).max().unwrap_or(0);
    let max_leap = kinds.iter().map(|k| reach(&k.movement)).max().unwrap_or(0);
    let king_reach = match kinds.get(royal_kind.index()) {
        Some(k) if k.movement.slides.is_empty() => reach(&k.movement),
        _ => u8::MAX,
    };
    let within = |sq: Square, d: u8| geometry.squares().filter(|&t| geometry.distance(sq, t) <= d).fold(Bitboard::EMPTY, |z, t| z | Bitboard::from_square(t));
    let king_leaper_zone = per_square(&geometry, |sq| within(sq, max_leap.saturating_add(king_reach)));
    let leap_zone = per_square(&geometry, |sq| within(sq, max_leap));
    let variant = Variant {
        name: spec.name.clone(),
        title: spec.title.clone(),
        geometry,
        kinds,
        promotion_zone: zone,
        pockets: spec.pockets,
        flag_squares,
        declaration: spec.declaration,
        no_capture_draw_plies: spec.no_capture_draw_plies,
        max_plies: spec.max_plies,
        match_consecutive_wins: spec.match_consecutive_wins,
        start_sfen: spec.start.clone(),
        options,
        option_specs,
        tables,
        hand_kinds,
        royal_kind,
        has_sliders,
        slider_kinds,
        king_leaper_zone,
        leap_zone,
    };
    ok.then_some(variant)
}

/// A table of one value per square of `geometry` (the rest of the 128 empty).
fn per_square(geometry: &Geometry, f: impl Fn(Square) -> Bitboard) -> Box<[Bitboard; 128]> {
    let mut t = Box::new([Bitboard::EMPTY; 128]);
    for sq in geometry.squares() {
        t[sq.index()] = f(sq);
    }
    t
}
