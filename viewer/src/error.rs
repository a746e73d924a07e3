//! Why a page could not be made: each error names the file (and the line or game) at fault.

use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum ViewError {
    #[error("{}: {source}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The source is none of the kinds `copper view` reads.
    #[error("{}: not a tournament directory (tournament.toml), a balance study (study.toml), a run directory (config.toml and selfplay/), a game file (.jsonl, .kifu, .csa, .sfen, .txt) or a shard", .path.display())]
    UnknownSource { path: PathBuf },
    /// A file that is there but cannot be read as what it should be.
    #[error("{}: {problem}", .path.display())]
    Invalid { path: PathBuf, problem: String },
    /// A game that does not replay under our rules.
    #[error("{}: game {game}: {source}", .path.display())]
    Game {
        path: PathBuf,
        /// Which game of the file (1-based, or its id).
        game: String,
        #[source]
        source: Box<gamerecords::RecordError>,
    },
    #[error(transparent)]
    Tournament(#[from] arena::TournamentError),
    #[error(transparent)]
    Balance(#[from] balance::BalanceError),
}

pub(crate) fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> ViewError + '_ {
    move |source| ViewError::Io { path: path.to_path_buf(), source }
}

pub(crate) fn invalid(path: &Path, problem: impl std::fmt::Display) -> ViewError {
    ViewError::Invalid { path: path.to_path_buf(), problem: problem.to_string() }
}
