//! Entry points that turn text into a `Variant`: [`Variant::from_toml`] (resolve, build,
//! then check the start positions), the shipped definitions, and loading by name or path
//! with one shared `&'static Variant` per distinct variant.
//!
//! This is the only part of the variant module above [`crate::sfen`]: a variant is valid
//! only if every start position it names is a valid SFEN of it.

use super::build::build;
use super::spec::{resolve, VariantError};
use super::Variant;
use crate::sfen::Setup;
use std::sync::OnceLock;

/// Names of the shipped variants.
pub const BUILTIN: [&str; 4] = ["pocket-copper", "shogi", "hand-shogi", "minishogi"];

/// The definition text of a shipped variant.
pub fn builtin_source(name: &str) -> Option<&'static str> {
    Some(match name {
        "pocket-copper" => include_str!("../../variants/pocket-copper.toml"),
        "shogi" => include_str!("../../variants/shogi.toml"),
        "hand-shogi" => include_str!("../../variants/hand-shogi.toml"),
        "minishogi" => include_str!("../../variants/minishogi.toml"),
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
        let mut problems = Vec::new();
        let resolved = resolve(text, options, &mut problems)?;
        let built = build(resolved.spec, resolved.chosen, resolved.option_specs, &mut problems);
        if let Some(v) = &built {
            v.check_start_positions(&mut problems);
        }
        match built {
            Some(v) if problems.is_empty() => Ok(v),
            _ => Err(VariantError { source_name: None, problems }),
        }
    }

    /// Every start position must be a valid setup of the finished variant.
    fn check_start_positions(&self, problems: &mut Vec<String>) {
        for (name, sfen) in std::iter::once(("default".to_string(), self.start_sfen.clone())).chain(self.start_family()) {
            if let Err(e) = Setup::parse(self, &sfen).and_then(|s| s.validate(self)) {
                problems.push(format!("start position '{name}': {e}"));
            }
        }
    }
}
