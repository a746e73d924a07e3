//! `games.jsonl` beside a generation's shards: one line per finished game saying how it
//! ended and how far its searches moved from the network's prior. The generation's
//! report is computed from these lines, so a run killed and resumed reports exactly what
//! an uninterrupted one would (each line is appended before its game's shard is written;
//! a game replayed after a kill between the two appends a second, identical line, and the
//! last line of an id wins).

use records::jsonl::{self, JsonlError};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

pub const GAMES_FILE: &str = "games.jsonl";

/// Path of the game log of a self-play directory.
pub fn games_path(dir: &Path) -> PathBuf {
    dir.join(GAMES_FILE)
}

/// One finished self-play game.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct GameLine {
    pub game_id: u64,
    pub start: String,
    pub plies: u32,
    /// +1 Black won, 0 draw, −1 White won.
    pub black_result: i8,
    /// How it ended: a rules reason (`checkmate`, `repetition`, `max-plies`, …) or
    /// `resignation`.
    pub ending: String,
    /// Resignation was disabled in this game (the `no_resign_fraction` games)...
    pub resign_disabled: bool,
    /// ... and a side's value fell below the resignation threshold for long enough...
    pub would_resign: bool,
    /// ... and that side did not lose after all: a resignation would have been wrong.
    pub false_resignation: bool,
    /// Moves chosen by a full search (the policy targets).
    pub full_searches: u32,
    /// Over the full searches: Σ entropy of the network's prior over the legal moves
    /// (nats), and Σ KL(improved policy ‖ prior) (nats), how far search moved the policy.
    pub prior_entropy_sum: f64,
    pub improvement_kl_sum: f64,
    pub simulations: u64,
}

/// Entropy of `prior` and KL(`target` ‖ `prior`), in nats, both over the same moves.
/// Moves the target gives no mass contribute nothing to the KL; a target mass on a move
/// with a zero prior is counted against a prior of 1e-12 (finite, and large).
pub fn entropy_and_kl(prior: &[f32], target: &[f32]) -> (f64, f64) {
    let sum: f64 = prior.iter().map(|&p| p.max(0.0) as f64).sum();
    if sum <= 0.0 {
        return (0.0, 0.0);
    }
    let mut entropy = 0.0;
    let mut kl = 0.0;
    for (&p, &t) in prior.iter().zip(target) {
        let p = p.max(0.0) as f64 / sum;
        if p > 0.0 {
            entropy -= p * p.ln();
        }
        let t = t as f64;
        if t > 0.0 {
            kl += t * (t / p.max(1e-12)).ln();
        }
    }
    (entropy, kl)
}

/// Appends one game's line (synced to disk before it returns).
pub fn append_game(dir: &Path, line: &GameLine) -> Result<(), JsonlError> {
    jsonl::append(&games_path(dir), line)
}

/// The game lines of a self-play directory, one per game id (the last line of an id
/// wins), in id order. A missing file is no games.
pub fn read_games(dir: &Path) -> Result<Vec<GameLine>, JsonlError> {
    let path = games_path(dir);
    if !path.exists() {
        return Ok(Vec::new());
    }
    let mut by_id: BTreeMap<u64, GameLine> = BTreeMap::new();
    for line in jsonl::read::<GameLine>(&path)? {
        by_id.insert(line.game_id, line);
    }
    Ok(by_id.into_values().collect())
}

/// What a generation's games add up to.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct GamesSummary {
    pub games: u64,
    pub positions: u64,
    pub black_wins: u64,
    pub white_wins: u64,
    pub draws: u64,
    /// Games by how they ended.
    pub endings: BTreeMap<String, u64>,
    pub resignations: u64,
    pub would_resign: u64,
    pub false_resignations: u64,
    pub full_searches: u64,
    /// Mean entropy of the prior at full searches (nats).
    pub prior_entropy: f64,
    /// Mean KL(improved policy ‖ prior) at full searches (nats).
    pub improvement_kl: f64,
    pub simulations: u64,
}

impl GamesSummary {
    /// Sums the lines whose ids are in `ids` (those of one generation).
    pub fn of(lines: &[GameLine], ids: &BTreeSet<u64>) -> GamesSummary {
        let mut s = GamesSummary::default();
        let (mut entropy, mut kl) = (0.0, 0.0);
        for l in lines.iter().filter(|l| ids.contains(&l.game_id)) {
            s.games += 1;
            s.positions += l.plies as u64;
            match l.black_result {
                1 => s.black_wins += 1,
                -1 => s.white_wins += 1,
                _ => s.draws += 1,
            }
            *s.endings.entry(l.ending.clone()).or_default() += 1;
            s.resignations += (l.ending == "resignation") as u64;
            s.would_resign += l.would_resign as u64;
            s.false_resignations += l.false_resignation as u64;
            s.full_searches += l.full_searches as u64;
            entropy += l.prior_entropy_sum;
            kl += l.improvement_kl_sum;
            s.simulations += l.simulations;
        }
        if s.full_searches > 0 {
            s.prior_entropy = entropy / s.full_searches as f64;
            s.improvement_kl = kl / s.full_searches as f64;
        }
        s
    }

    pub fn average_plies(&self) -> f64 {
        if self.games == 0 {
            0.0
        } else {
            self.positions as f64 / self.games as f64
        }
    }

    /// Share of games that ended in `ending`.
    pub fn share(&self, ending: &str) -> f64 {
        if self.games == 0 {
            0.0
        } else {
            self.endings.get(ending).copied().unwrap_or(0) as f64 / self.games as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entropy_and_kl_by_hand() {
        // Prior (½, ¼, ¼): entropy = ½ ln 2 + 2 · ¼ ln 4 = 1.5 ln 2 = 1.039721.
        // Target (0, ½, ½): KL = 2 · ½ ln(½ / ¼) = ln 2 = 0.693147.
        let (h, kl) = entropy_and_kl(&[0.5, 0.25, 0.25], &[0.0, 0.5, 0.5]);
        assert!((h - 1.5 * 2f64.ln()).abs() < 1e-6, "{h}");
        assert!((kl - 2f64.ln()).abs() < 1e-6, "{kl}");
        // An unnormalised prior is normalised first; the same target as the prior: KL 0.
        let (h2, kl2) = entropy_and_kl(&[2.0, 1.0, 1.0], &[0.5, 0.25, 0.25]);
        assert!((h2 - h).abs() < 1e-6 && kl2.abs() < 1e-7, "{h2} {kl2}");
        assert_eq!(entropy_and_kl(&[], &[]), (0.0, 0.0));
    }

    fn line(id: u64, black_result: i8, ending: &str) -> GameLine {
        GameLine {
            game_id: id,
            start: "seed".into(),
            plies: 10 + id as u32,
            black_result,
            ending: ending.into(),
            resign_disabled: false,
            would_resign: false,
            false_resignation: false,
            full_searches: 2,
            prior_entropy_sum: 2.0,
            improvement_kl_sum: 1.0,
            simulations: 100,
        }
    }

    #[test]
    fn summary_counts_one_line_per_game_of_the_generation() {
        let dir = tempfile::tempdir().unwrap();
        append_game(dir.path(), &line(1, 1, "checkmate")).unwrap();
        append_game(dir.path(), &line(2, 0, "max-plies")).unwrap();
        // Game 2 replayed after a kill between its line and its shard: counted once.
        append_game(dir.path(), &line(2, 0, "max-plies")).unwrap();
        append_game(dir.path(), &line(3, -1, "resignation")).unwrap();
        append_game(dir.path(), &line(7, -1, "checkmate")).unwrap();
        let lines = read_games(dir.path()).unwrap();
        assert_eq!(lines.iter().map(|l| l.game_id).collect::<Vec<_>>(), vec![1, 2, 3, 7]);
        let s = GamesSummary::of(&lines, &[1, 2, 3].into_iter().collect());
        assert_eq!((s.games, s.black_wins, s.white_wins, s.draws, s.resignations), (3, 1, 1, 1, 1));
        assert_eq!(s.positions, 11 + 12 + 13);
        assert_eq!(s.endings.get("checkmate"), Some(&1));
        assert_eq!(s.endings.get("max-plies"), Some(&1));
        assert!((s.share("resignation") - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(s.full_searches, 6);
        assert!((s.prior_entropy - 1.0).abs() < 1e-12 && (s.improvement_kl - 0.5).abs() < 1e-12);
        assert!(read_games(&dir.path().join("none")).unwrap().is_empty());
    }
}
