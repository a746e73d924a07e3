//! The definition file's schema ([`VariantSpec`]) and the text-level steps before any
//! table is built: TOML parsing and applying option choices to the raw document.

use crate::piece::DropMate;
use indexmap::IndexMap;
use serde::Deserialize;

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

/// A definition with the option choices applied.
pub(crate) struct Resolved {
    pub spec: VariantSpec,
    /// Every option with the choice made, in definition order.
    pub chosen: Vec<(String, String)>,
    pub option_specs: IndexMap<String, OptionSpec>,
}

/// Parses a definition and applies `options` (name, choice) over the defaults. Problems
/// that still let the spec be read go to `problems`; the error carries them all when it
/// cannot be read at all.
pub(crate) fn resolve(text: &str, options: &[(String, String)], problems: &mut Vec<String>) -> Result<Resolved, VariantError> {
    let err = |problems: Vec<String>| VariantError { source_name: None, problems };
    let mut doc: toml::Table = toml::from_str(text).map_err(|e| err(vec![format!("TOML: {e}")]))?;
    // Options are applied to the raw document so that any key can be an option.
    let option_specs: IndexMap<String, OptionSpec> = match doc.get("options") {
        Some(v) => v.clone().try_into().map_err(|e| err(vec![format!("options: {e}")]))?,
        None => IndexMap::new(),
    };
    for (name, _) in options {
        if !option_specs.contains_key(name) {
            problems.push(format!("unknown option '{name}' (options: {})", option_specs.keys().cloned().collect::<Vec<_>>().join(", ")));
        }
    }
    let mut chosen = Vec::new();
    for (name, spec) in &option_specs {
        let choice = options.iter().rev().find(|(n, _)| n == name).map(|(_, c)| c.clone()).unwrap_or(spec.default.clone());
        match spec.choices.get(&choice) {
            None => {
                problems.push(format!("option '{name}': unknown choice '{choice}' (choices: {})", spec.choices.keys().cloned().collect::<Vec<_>>().join(", ")))
            }
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
    match toml::Value::Table(doc).try_into() {
        Ok(spec) => Ok(Resolved { spec, chosen, option_specs }),
        Err(e) => {
            problems.push(format!("{e}"));
            Err(err(std::mem::take(problems)))
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
