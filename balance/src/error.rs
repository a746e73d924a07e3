//! What can go wrong in a study, each error naming the file, key or cell it is about so
//! that a researcher can fix the input without reading the code.

use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum BalanceError {
    /// A study file (or the saved `study.toml`) that does not parse.
    #[error("study file {path}: {problem}")]
    File { path: String, problem: String },
    /// A setting out of range or inconsistent; the text names the key.
    #[error("study: {0}")]
    Invalid(String),
    /// A start name that is not in the variant's start family.
    #[error("{key}: unknown start '{name}' (the start family of {variant} is: {known})")]
    UnknownStart { key: String, name: String, variant: String, known: String },
    /// A tier's player spec is malformed, or its player cannot be built.
    /// (Not a `source`: the message already holds it, and error chains would print it twice.)
    #[error("tiers: {0}")]
    Tier(players::spec::SpecError),
    #[error("variant: {0}")]
    Variant(rules::VariantError),
    /// The output directory holds a different study.
    #[error("{dir} holds a different study: {what}. Choose another --out, or change only games_per_cell, tiers or starts to extend it")]
    Resume { dir: String, what: String },
    /// `results.jsonl` holds a line that is not a result of this study.
    #[error("{path}: {problem}")]
    Results { path: String, problem: String },
    #[error("{path}: {error}")]
    Io { path: String, error: std::io::Error },
    /// A checkpoint tier's network (for its view of the starts) or a run directory.
    #[error("{0}")]
    Network(String),
    #[error("plot {path}: {problem}")]
    Plot { path: String, problem: String },
}

impl From<players::spec::SpecError> for BalanceError {
    fn from(e: players::spec::SpecError) -> Self {
        BalanceError::Tier(e)
    }
}

impl From<rules::VariantError> for BalanceError {
    fn from(e: rules::VariantError) -> Self {
        BalanceError::Variant(e)
    }
}

/// Wraps an I/O error with the path it happened on.
pub(crate) fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> BalanceError + '_ {
    move |error| BalanceError::Io { path: path.display().to_string(), error }
}
