//! `copper tune`: SPSA over named parameters of any arena player — the alpha-beta's piece
//! values (`board.copper`, `pocket.copper`, …), the search's constants (`c_puct`), a USI
//! engine's options (`option.NAME`) — by games between the two perturbed players or of
//! each against a fixed opponent. The run lives in one directory and resumes there.
//!
//! - [`spsa`]: the optimiser (gains and update, with references);
//! - [`run`]: the games, the state file, the parameter path plot and the tuned spec.

pub mod run;
pub mod spsa;

pub use run::{run_tune, TuneConfig, TuneError, TuneState};
pub use spsa::{Param, ParamError, Schedule, Spsa};
