//! Variants as data: a TOML definition (pieces in Betza notation, promotions, zones,
//! drop rules, win conditions, named options, start positions) becomes a validated
//! [`Variant`] with derived move tables in one fallible step that reports every problem.
//!
//! The shipped definitions live in `rules/variants/*.toml` and are embedded in the binary;
//! a user's file in the same format loads with [`Variant::from_toml`].

use crate::betza::{self, Movement};
use crate::piece::{DropMate, PieceKind, MAX_KINDS};
use crate::square::{Color, Geometry, DIRECTIONS};
use crate::{Bitboard, Square};
use indexmap::IndexMap;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// The definition file, as written. Every key is documented in `rules/variants/README.md`.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct VariantSpec {
    pub name: String,
    pub title: String,
    pub files: u8,
    pub ranks: u8,
    pub promotion_ranks: u8,
    #[serde(default)]
    pub pockets: bool,
    #[serde(default)]
    pub flag_win: bool,
    /// `[square Black's king wins on, square White's king wins on]`.
    #[serde(default)]
    pub flag_squares: Option<[String; 2]>,
    #[serde(default = "default_declaration")]
    pub declaration: Declaration,
    #[serde(default)]
    pub no_capture_draw_plies: u32,
    pub max_plies: u32,
    #[serde(default)]
    pub match_consecutive_wins: u32,
    pub start: String,
    pub pieces: IndexMap<String, PieceSpec>,
    #[serde(default)]
    pub options: IndexMap<String, OptionSpec>,
}

fn default_declaration() -> Declaration {
    Declaration::None
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct PieceSpec {
    pub letter: String,
    pub betza: String,
    #[serde(default)]
    pub royal: bool,
    #[serde(default)]
    pub promoted: Option<PromotedSpec>,
    #[serde(default)]
    pub forced_promotion_ranks: u8,
    #[serde(default)]
    pub no_drop_ranks: u8,
    #[serde(default)]
    pub one_per_file: bool,
    #[serde(default = "default_drop_mate")]
    pub drop_mate: DropMate,
    #[serde(default)]
    pub drop_only_with_check: bool,
    /// Points for the 27-point declaration (CSA rules: rook and bishop 5, others 1).
    #[serde(default)]
    pub declaration_points: u8,
}

fn default_drop_mate() -> DropMate {
    DropMate::Allowed
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct PromotedSpec {
    pub name: String,
    pub betza: String,
}

/// A named rule option: a default choice and what each choice changes in the definition
/// (dotted key paths into this file, e.g. `"pieces.Knight.promoted.betza" = "WfF"`).
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct OptionSpec {
    pub description: String,
    pub default: String,
    pub choices: IndexMap<String, toml::Table>,
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Declaration {
    None,
    /// CSA 27-point impasse declaration (Black needs 28 points, White 27).
    Csa27,
}

/// Every problem found in a variant definition, each naming where it is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid variant definition{}:\n  - {}", .source_name.as_deref().map(|s| format!(" {s}")).unwrap_or_default(), .problems.join("\n  - "))]
pub struct VariantError {
    pub source_name: Option<String>,
    pub problems: Vec<String>,
}

/// Facts about one piece kind, derived from the definition.
#[derive(Clone, Debug)]
pub struct KindInfo {
    pub name: String,
    /// SFEN/USI token for Black: `P`, `+P`, `C`, …
    pub token: String,
    pub promoted: bool,
    pub promotes_to: Option<PieceKind>,
    /// The kind a captured piece of this kind becomes in hand.
    pub unpromoted: PieceKind,
    pub royal: bool,
    pub one_per_file: bool,
    pub drop_mate: DropMate,
    pub drop_only_with_check: bool,
    pub declaration_points: u8,
    pub movement: Movement,
}

/// Move tables of one kind for one colour.
#[derive(Clone, Debug)]
pub(crate) struct KindTables {
    /// Leaper destinations by square.
    pub steps: Vec<Bitboard>,
    /// Slides as (direction, range), range `UNLIMITED` for a full rider.
    pub slides: Vec<(usize, u8)>,
    /// `slide_range[d]`: how far the kind slides in direction d (0 = not at all).
    pub slide_range: [u8; 8],
    /// Destinations where this kind must promote.
    pub forced_promotion: Bitboard,
    /// Squares this kind may not be dropped on.
    pub no_drop: Bitboard,
}

/// A validated variant with its derived tables.
#[derive(Debug)]
pub struct Variant {
    pub name: String,
    pub title: String,
    pub geometry: Geometry,
    pub kinds: Vec<KindInfo>,
    pub promotion_zone: [Bitboard; 2],
    pub pockets: bool,
    /// Where each side's king wins on arrival, when the flag win is on.
    pub flag_squares: Option<[Square; 2]>,
    pub declaration: Declaration,
    pub no_capture_draw_plies: u32,
    pub max_plies: u32,
    pub match_consecutive_wins: u32,
    pub start_sfen: String,
    /// Options with the chosen value of each, in definition order.
    pub options: Vec<(String, String)>,
    /// Every option's description and choices, for help text.
    pub option_specs: IndexMap<String, OptionSpec>,
    pub(crate) tables: [Vec<KindTables>; 2],
    /// Kinds that may sit in a hand (unpromoted, not royal).
    pub hand_kinds: Vec<PieceKind>,
    pub royal_kind: PieceKind,
    /// Whether any kind slides (so ray scans are needed at all).
    pub(crate) has_sliders: bool,
    /// Kinds with leaper moves, and kinds with slides, for attack detection.
    pub(crate) leaper_kinds: Vec<PieceKind>,
    pub(crate) slider_kinds: Vec<PieceKind>,
}

/// Names of the shipped variants.
pub const BUILTIN: [&str; 4] = ["pocket-copper", "shogi", "hand-shogi", "minishogi"];

/// The definition text of a shipped variant.
pub fn builtin_source(name: &str) -> Option<&'static str> {
    Some(match name {
        "pocket-copper" => include_str!("../variants/pocket-copper.toml"),
        "shogi" => include_str!("../variants/shogi.toml"),
        "hand-shogi" => include_str!("../variants/hand-shogi.toml"),
        "minishogi" => include_str!("../variants/minishogi.toml"),
        _ => return None,
    })
}

impl Variant {
    /// A shipped variant with its default options, built once and shared.
    pub fn builtin(name: &str) -> Result<&'static Variant, VariantError> {
        static CACHE: OnceLock<Vec<&'static Variant>> = OnceLock::new();
        let all = CACHE.get_or_init(|| {
            BUILTIN
                .iter()
                .map(|n| {
                    let v = Variant::from_toml(builtin_source(n).unwrap(), &[]).unwrap_or_else(|e| panic!("shipped variant {n} is invalid: {e}"));
                    &*Box::leak(Box::new(v))
                })
                .collect()
        });
        all.iter()
            .copied()
            .find(|v| v.name == name)
            .ok_or_else(|| VariantError { source_name: None, problems: vec![format!("unknown variant '{name}' (known: {})", BUILTIN.join(", "))] })
    }

    /// A shipped variant or a definition file, with option choices applied.
    /// `source` is a builtin name or a path to a `.toml` file.
    pub fn load(source: &str, options: &[(String, String)]) -> Result<&'static Variant, VariantError> {
        if options.is_empty() {
            if let Ok(v) = Variant::builtin(source) {
                return Ok(v);
            }
        }
        let text = match builtin_source(source) {
            Some(t) => t.to_string(),
            None => std::fs::read_to_string(source).map_err(|e| VariantError {
                source_name: Some(source.to_string()),
                problems: vec![format!("not a shipped variant ({}) and not a readable file: {e}", BUILTIN.join(", "))],
            })?,
        };
        let v = Variant::from_toml(&text, options).map_err(|mut e| {
            e.source_name = Some(source.to_string());
            e
        })?;
        Ok(Variant::intern(&text, v))
    }

    /// One `&'static Variant` per (definition text, resolved options): loading the same
    /// variant again returns the same reference instead of leaking another copy, and a
    /// shipped variant loaded with its default options is [`Variant::builtin`] itself — so
    /// positions of equal variants compare equal (they compare variants by reference).
    fn intern(text: &str, v: Variant) -> &'static Variant {
        type Interned = Vec<(String, Vec<(String, String)>, &'static Variant)>;
        static INTERNED: std::sync::Mutex<Interned> = std::sync::Mutex::new(Vec::new());
        for name in BUILTIN {
            if builtin_source(name) == Some(text) {
                if let Ok(b) = Variant::builtin(name) {
                    if b.options == v.options {
                        return b;
                    }
                }
            }
        }
        let mut interned = INTERNED.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, _, found)) = interned.iter().find(|(t, o, _)| t == text && *o == v.options) {
            return found;
        }
        let options = v.options.clone();
        let leaked = v.leak();
        interned.push((text.to_string(), options, leaked));
        leaked
    }

    /// Moves the variant to the heap for the rest of the process: positions hold a
    /// `&'static Variant` so that copying them costs no reference counting.
    pub fn leak(self) -> &'static Variant {
        Box::leak(Box::new(self))
    }

    /// Parses and validates a definition, applying `options` (name, choice) over the
    /// defaults. Reports every problem found, not just the first.
    pub fn from_toml(text: &str, options: &[(String, String)]) -> Result<Variant, VariantError> {
        let err = |problems: Vec<String>| VariantError { source_name: None, problems };
        let mut doc: toml::Table = toml::from_str(text).map_err(|e| err(vec![format!("TOML: {e}")]))?;
        // Options are applied to the raw document so that any key can be an option.
        let option_specs: IndexMap<String, OptionSpec> = match doc.get("options") {
            Some(v) => v.clone().try_into().map_err(|e| err(vec![format!("options: {e}")]))?,
            None => IndexMap::new(),
        };
        let mut problems = Vec::new();
        for (name, _) in options {
            if !option_specs.contains_key(name) {
                problems.push(format!("unknown option '{name}' (options: {})", option_specs.keys().cloned().collect::<Vec<_>>().join(", ")));
            }
        }
        let mut chosen = Vec::new();
        for (name, spec) in &option_specs {
            let choice = options.iter().rev().find(|(n, _)| n == name).map(|(_, c)| c.clone()).unwrap_or(spec.default.clone());
            match spec.choices.get(&choice) {
                None => problems
                    .push(format!("option '{name}': unknown choice '{choice}' (choices: {})", spec.choices.keys().cloned().collect::<Vec<_>>().join(", "))),
                Some(patch) => {
                    for (path, value) in patch {
                        if let Err(e) = set_path(&mut doc, path, value.clone()) {
                            problems.push(format!("option '{name}' choice '{choice}': {e}"));
                        }
                    }
                }
            }
            if !spec.choices.contains_key(&spec.default) {
                problems.push(format!("option '{name}': default '{}' is not one of its choices", spec.default));
            }
            chosen.push((name.clone(), choice));
        }
        let spec: VariantSpec = match toml::Value::Table(doc).try_into() {
            Ok(s) => s,
            Err(e) => {
                problems.push(format!("{e}"));
                return Err(err(problems));
            }
        };
        let built = build(spec, chosen, option_specs, &mut problems);
        match built {
            Some(v) if problems.is_empty() => Ok(v),
            _ => Err(err(problems)),
        }
    }

    #[inline(always)]
    pub fn kind(&self, k: PieceKind) -> &KindInfo {
        &self.kinds[k.index()]
    }

    #[inline(always)]
    pub(crate) fn tables(&self, c: Color, k: PieceKind) -> &KindTables {
        &self.tables[c.index()][k.index()]
    }

    pub fn num_kinds(&self) -> usize {
        self.kinds.len()
    }

    pub fn kinds(&self) -> impl Iterator<Item = PieceKind> + '_ {
        (0..self.kinds.len()).map(PieceKind::from_index)
    }

    /// Kind for an SFEN token such as `P` or `+R` (case ignored), if the variant has it.
    pub fn kind_by_token(&self, token: &str) -> Option<PieceKind> {
        let up = token.to_ascii_uppercase();
        self.kinds.iter().position(|k| k.token == up).map(PieceKind::from_index)
    }

    /// Whether the left–right mirror maps legal play onto legal play (every piece moves
    /// symmetrically and the start and special squares are symmetric).
    pub fn mirror_symmetric(&self) -> bool {
        let mirror = |m: &Movement| Movement {
            leaps: m.leaps.iter().map(|&(f, r)| (-f, r)).collect(),
            slides: m
                .slides
                .iter()
                .map(|&(d, n)| {
                    let (f, r) = DIRECTIONS[d];
                    (DIRECTIONS.iter().position(|&x| x == (-f, r)).unwrap(), n)
                })
                .collect(),
        };
        self.kinds.iter().all(|k| mirror(&k.movement) == k.movement)
    }

    /// The start positions this variant names (the choices of its `start` option), as
    /// (name, SFEN); the family the balance research compares.
    pub fn start_family(&self) -> Vec<(String, String)> {
        match self.option_specs.get("start") {
            Some(spec) => {
                spec.choices.iter().filter_map(|(name, patch)| patch.get("start").and_then(|v| v.as_str()).map(|s| (name.clone(), s.to_string()))).collect()
            }
            None => vec![("default".into(), self.start_sfen.clone())],
        }
    }
}

fn set_path(doc: &mut toml::Table, path: &str, value: toml::Value) -> Result<(), String> {
    let parts: Vec<&str> = path.split('.').collect();
    let (last, parents) = parts.split_last().ok_or("empty key path")?;
    let mut table = doc;
    for (i, p) in parents.iter().enumerate() {
        // Creating the last missing level lets an option add e.g. a `promoted` table.
        if !table.contains_key(*p) && i + 1 == parents.len() {
            table.insert(p.to_string(), toml::Value::Table(toml::Table::new()));
        }
        table = match table.get_mut(*p) {
            Some(toml::Value::Table(t)) => t,
            Some(_) => return Err(format!("'{}' in '{path}' is not a table", parts[..=i].join("."))),
            None => return Err(format!("no key '{}' for '{path}'", parts[..=i].join("."))),
        };
    }
    table.insert(last.to_string(), value);
    Ok(())
}

fn build(spec: VariantSpec, options: Vec<(String, String)>, option_specs: IndexMap<String, OptionSpec>, problems: &mut Vec<String>) -> Option<Variant> {
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
            let mut steps = vec![Bitboard::EMPTY; geometry.num_squares()];
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
            let base = if k.promoted { None } else { spec.pieces.get(&k.name) };
            let forced = base.map(|p| geometry.far_ranks(c, p.forced_promotion_ranks)).unwrap_or_default();
            let no_drop = base.map(|p| geometry.far_ranks(c, p.no_drop_ranks)).unwrap_or_default();
            tables[c.index()].push(KindTables { steps, slides: mv.slides.iter().copied().collect(), slide_range, forced_promotion: forced, no_drop });
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
    let leaper_kinds = (0..kinds.len()).filter(|&i| !kinds[i].movement.leaps.is_empty()).map(PieceKind::from_index).collect();
    let slider_kinds = (0..kinds.len()).filter(|&i| !kinds[i].movement.slides.is_empty()).map(PieceKind::from_index).collect();
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
        leaper_kinds,
        slider_kinds,
    };
    if !ok {
        return None;
    }
    // Every start position must be a valid setup of the finished variant.
    for (name, sfen) in std::iter::once(("default".to_string(), variant.start_sfen.clone())).chain(variant.start_family()) {
        if let Err(e) = crate::sfen::Setup::parse(&variant, &sfen).and_then(|s| s.validate(&variant)) {
            problems.push(format!("start position '{name}': {e}"));
        }
    }
    Some(variant)
}
