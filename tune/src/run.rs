//! A tuning run: SPSA updates from batches of game pairs played by the arena's runner.
//!
//! Directory layout (`out_dir`):
//! - `tune.json`: the configuration, the optimiser's state and every update (rewritten
//!   atomically after each update; a killed run resumes from it and loses at most the
//!   batch in flight);
//! - `tuned.txt`: the player spec with the current values (the result when the run ends);
//! - `path-<parameter>.svg`: each parameter's value over the pairs played.
//!
//! Against itself (no opponent), each pair is θ⁺ against θ⁻ from one opening with colours
//! swapped, and `result` is θ⁺'s wins − losses. Against a fixed opponent, θ⁺ and θ⁻ each
//! play the pair from the same opening against it, and `result` is half the difference of
//! their wins − losses (the same −2…2 range per pair).

use crate::spsa::{Param, Probe, Schedule, Spsa};
use arena::openings::{OpeningError, Openings};
use arena::plot::{line_chart, Series};
use arena::runner::{run_jobs, Adjudication, Job, JobResult, RunSettings};
use indicatif::{ProgressBar, ProgressStyle};
use players::spec::{PlayerFactory, PlayerSpec, SpecError};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Mutex;
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum TuneError {
    #[error("{0}")]
    Spec(#[from] SpecError),
    #[error("variant: {0}")]
    Variant(#[from] rules::VariantError),
    #[error("openings: {0}")]
    Opening(#[from] OpeningError),
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}: not a tuning state file: {source}")]
    State { path: PathBuf, source: serde_json::Error },
    #[error("{0}")]
    Config(String),
}

/// What to tune and how.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TuneConfig {
    pub variant: String,
    /// Rule options NAME=CHOICE.
    pub options: BTreeMap<String, String>,
    /// The tuned player's spec without the tuned keys, e.g. `alphabeta,depth=2`.
    pub player: String,
    /// A fixed opponent's spec; `None`: θ⁺ plays θ⁻.
    pub opponent: Option<String>,
    pub params: Vec<Param>,
    /// Game pairs in the whole run (N of the schedule).
    pub pairs: u64,
    /// Pairs played at one θ before an update.
    pub batch: u32,
    /// Random plies from the start of each opening (one opening per pair).
    pub random_plies: u32,
    /// Game length limit in plies; 0: the variant's.
    pub max_plies: u32,
    pub seed: u64,
    /// Worker threads (games at once).
    pub threads: usize,
    pub out_dir: PathBuf,
}

impl TuneConfig {
    pub fn validate(&self) -> Result<(), TuneError> {
        if self.params.is_empty() {
            return Err(TuneError::Config("no parameter to tune (give --param NAME,START,MIN,MAX,C_END,R_END)".into()));
        }
        if self.pairs == 0 || self.batch == 0 {
            return Err(TuneError::Config("--pairs and --batch must be at least 1".into()));
        }
        for (i, p) in self.params.iter().enumerate() {
            if self.params[..i].iter().any(|q| q.name == p.name) {
                return Err(TuneError::Config(format!("parameter {} is given twice", p.name)));
            }
        }
        if let Some(max) = (self.max_plies > 0).then_some(self.max_plies) {
            if self.random_plies >= max {
                return Err(TuneError::Config(format!("--random-plies {} leaves no game within --max-plies {max}", self.random_plies)));
            }
        }
        Ok(())
    }

    /// The fields whose change would make a resumed run a different run, by name.
    fn differences(&self, old: &TuneConfig) -> Vec<&'static str> {
        let mut d = Vec::new();
        let mut check = |same: bool, name| {
            if !same {
                d.push(name)
            }
        };
        check(self.variant == old.variant, "variant");
        check(self.options == old.options, "options");
        check(self.player == old.player, "player");
        check(self.opponent == old.opponent, "opponent");
        check(self.params == old.params, "params");
        check(self.pairs == old.pairs, "pairs");
        check(self.batch == old.batch, "batch");
        check(self.random_plies == old.random_plies, "random_plies");
        check(self.max_plies == old.max_plies, "max_plies");
        check(self.seed == old.seed, "seed");
        d
    }

    fn variant(&self) -> Result<&'static rules::Variant, TuneError> {
        let options: Vec<(String, String)> = self.options.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        Ok(rules::Variant::load(&self.variant, &options)?)
    }
}

/// One update as played.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Step {
    pub probe: Probe,
    /// Pairs in the batch.
    pub pairs: u64,
    /// θ⁺'s wins − losses (against θ⁻), or half the difference of θ⁺'s and θ⁻'s against
    /// the opponent.
    pub result: f64,
    /// θ after the update.
    pub theta: Vec<f64>,
}

/// Everything `tune.json` holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TuneState {
    pub config: TuneConfig,
    pub spsa: Spsa,
    pub history: Vec<Step>,
}

impl TuneState {
    /// The tuned player as a spec: the base spec with each parameter's current value.
    pub fn tuned_spec(&self) -> String {
        spec_with(&self.config.player, &self.config.params, &self.spsa.theta, None)
    }

    /// Each parameter's mean over the updates of the last fifth of the pairs: a steadier
    /// reading of where the path settled than its last point.
    pub fn late_mean(&self) -> Vec<f64> {
        let from = self.spsa.schedule.pairs * 4 / 5;
        let late: Vec<&Step> = self.history.iter().filter(|s| s.probe.k >= from).collect();
        (0..self.spsa.theta.len())
            .map(|i| if late.is_empty() { self.spsa.theta[i] } else { late.iter().map(|s| s.theta[i]).sum::<f64>() / late.len() as f64 })
            .collect()
    }
}

/// `base` with `,NAME=VALUE` for each parameter (and `,name=NAME` when given). USI options
/// (`option.*`) get whole numbers, as engines' spin options take; other keys keep two
/// decimals (piece values round to centipawns when applied).
pub fn spec_with(base: &str, params: &[Param], values: &[f64], name: Option<&str>) -> String {
    let mut s = base.trim_end_matches(',').to_string();
    for (p, v) in params.iter().zip(values) {
        if p.name.starts_with("option.") {
            s += &format!(",{}={}", p.name, v.round() as i64);
        } else {
            let text = format!("{v:.2}");
            s += &format!(",{}={}", p.name, text.trim_end_matches('0').trim_end_matches('.'));
        }
    }
    if let Some(n) = name {
        s += &format!(",name={n}");
    }
    s
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> TuneError + '_ {
    move |source| TuneError::Io { path: path.to_path_buf(), source }
}

/// Runs (or resumes) the tuning run of `cfg`; returns its final state.
pub fn run_tune(cfg: &TuneConfig, progress: bool) -> Result<TuneState, TuneError> {
    cfg.validate()?;
    let variant = cfg.variant()?;
    std::fs::create_dir_all(&cfg.out_dir).map_err(io_err(&cfg.out_dir))?;
    let state_path = cfg.out_dir.join("tune.json");
    let mut state = match std::fs::read(&state_path) {
        Ok(bytes) => {
            let old: TuneState = serde_json::from_slice(&bytes).map_err(|source| TuneError::State { path: state_path.clone(), source })?;
            let diff = cfg.differences(&old.config);
            if !diff.is_empty() {
                return Err(TuneError::Config(format!(
                    "{} holds a run with other {}: use another --out, or the same settings to resume",
                    cfg.out_dir.display(),
                    diff.join(", ")
                )));
            }
            TuneState { config: cfg.clone(), ..old }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            TuneState { config: cfg.clone(), spsa: Spsa::new(cfg.params.clone(), Schedule::new(cfg.pairs)), history: Vec::new() }
        }
        Err(e) => return Err(io_err(&state_path)(e)),
    };
    // Every spec must build before a game is played (a misspelt piece, an engine path).
    let factory = |text: &str| -> Result<PlayerFactory, TuneError> {
        Ok(PlayerFactory::new(PlayerSpec::parse(text)?, variant, None, cfg.threads, Duration::from_secs(60))?)
    };
    factory(&spec_with(&cfg.player, &cfg.params, &state.spsa.theta, Some("plus")))?;
    // Built once (a checkpoint opponent loads its network here), lent to every batch.
    let mut opponent = cfg.opponent.as_deref().map(factory).transpose()?;
    let against_opponent = opponent.is_some();
    let openings = Openings::random(variant, cfg.random_plies, cfg.seed);
    let settings = RunSettings {
        threads: cfg.threads.max(1),
        games_in_flight: 1,
        max_plies: (cfg.max_plies > 0).then_some(cfg.max_plies),
        max_hands: 15,
        adjudication: Adjudication::default(),
        time_margin: Duration::from_millis(100),
        seed: cfg.seed,
    };
    let pb = if progress {
        let pb = ProgressBar::new(cfg.pairs);
        pb.set_style(
            ProgressStyle::with_template("tune [{bar:30}] {pos}/{len} pairs {elapsed_precise} eta {eta} {msg}").expect("valid template").progress_chars("=> "),
        );
        pb
    } else {
        ProgressBar::hidden()
    };
    pb.set_position(state.spsa.k);
    let stop = AtomicBool::new(false);
    let mut updates = 0usize;
    while !state.spsa.done() {
        let k = state.spsa.k;
        let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed ^ k.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let probe = state.spsa.probe(&mut rng);
        let pairs = u64::from(cfg.batch).min(cfg.pairs - k);
        let plus = factory(&spec_with(&cfg.player, &cfg.params, &probe.plus, Some("plus")))?;
        let minus = factory(&spec_with(&cfg.player, &cfg.params, &probe.minus, Some("minus")))?;
        let mut jobs = Vec::new();
        for p in 0..pairs {
            let opening = (k + p) as usize;
            let id = (k + p) * 4;
            if against_opponent {
                for (i, who) in [0usize, 1].into_iter().enumerate() {
                    jobs.push(Job { id: id + 2 * i as u64, first: who, second: 2, opening });
                    jobs.push(Job { id: id + 2 * i as u64 + 1, first: 2, second: who, opening });
                }
            } else {
                jobs.push(Job { id, first: 0, second: 1, opening });
                jobs.push(Job { id: id + 1, first: 1, second: 0, opening });
            }
        }
        let mut factories = vec![plus, minus];
        factories.extend(opponent.take());
        let results = Mutex::new(Vec::new());
        let run_settings = RunSettings { seed: cfg.seed ^ k.wrapping_mul(0xD1B5_4A32_D192_ED03), ..settings.clone() };
        run_jobs(&factories, &openings, &jobs, &run_settings, &stop, &|r: JobResult| results.lock().unwrap_or_else(|e| e.into_inner()).push(r))?;
        let results = results.into_inner().unwrap_or_else(|e| e.into_inner());
        if against_opponent {
            opponent = factories.pop();
        }
        let result = batch_result(&results, against_opponent);
        state.spsa.update(&probe, result, pairs);
        state.history.push(Step { probe, pairs, result, theta: state.spsa.theta.clone() });
        save(&state)?;
        updates += 1;
        if updates.is_multiple_of(10) {
            plot_paths(&state)?;
        }
        pb.set_position(state.spsa.k);
        pb.set_message(theta_text(&state));
        tracing::debug!(k = state.spsa.k, result, theta = ?state.spsa.theta, "spsa update");
    }
    pb.finish_and_clear();
    // Every update saved the state already; the plots are drawn once more at the end.
    plot_paths(&state)?;
    Ok(state)
}

/// wins − losses of θ⁺ (player 0) from the batch's results; with an opponent (player 2),
/// half the difference between θ⁺'s and θ⁻'s.
fn batch_result(results: &[JobResult], against_opponent: bool) -> f64 {
    let mut margin = [0.0f64; 2];
    for r in results {
        // From the first player's point of view: +1 win, 0 draw, −1 loss.
        let first = 2.0 * r.first_score - 1.0;
        if r.job.first < 2 {
            margin[r.job.first] += first;
        }
        if r.job.second < 2 {
            margin[r.job.second] -= first;
        }
    }
    if against_opponent {
        (margin[0] - margin[1]) / 2.0
    } else {
        margin[0]
    }
}

fn theta_text(state: &TuneState) -> String {
    state.config.params.iter().zip(&state.spsa.theta).map(|(p, t)| format!("{}={t:.1}", p.name)).collect::<Vec<_>>().join(" ")
}

fn save(state: &TuneState) -> Result<(), TuneError> {
    let dir = &state.config.out_dir;
    let path = dir.join("tune.json");
    let json = serde_json::to_vec_pretty(state).map_err(|source| TuneError::State { path: path.clone(), source })?;
    records::write_atomic(&path, &json).map_err(io_err(&path))?;
    let spec = dir.join("tuned.txt");
    records::write_atomic(&spec, format!("{}\n", state.tuned_spec()).as_bytes()).map_err(io_err(&spec))
}

/// File name part of a parameter: its key with anything but letters, digits, `-` and `_`
/// as `_`.
fn file_part(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect()
}

fn plot_paths(state: &TuneState) -> Result<(), TuneError> {
    for (i, p) in state.config.params.iter().enumerate() {
        let mut points = vec![(0.0, p.start)];
        points.extend(state.history.iter().map(|s| ((s.probe.k + s.pairs) as f64, s.theta[i])));
        let path = state.config.out_dir.join(format!("path-{}.svg", file_part(&p.name)));
        let series = [Series { name: &p.name, points, color: arena::plot::PALETTE[0] }];
        line_chart(&path, &format!("SPSA: {} over the run", p.name), "game pairs", &p.name, &series)
            .map_err(|e| TuneError::Io { path: path.clone(), source: std::io::Error::other(e) })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(dir: &Path, pairs: u64) -> TuneConfig {
        TuneConfig {
            variant: "minishogi".into(),
            options: BTreeMap::new(),
            player: "alphabeta,depth=1".into(),
            opponent: None,
            params: vec![Param::parse("noise, 300, 0, 600, 60, 0.2").unwrap()],
            pairs,
            batch: 2,
            random_plies: 2,
            max_plies: 0,
            seed: 7,
            threads: 2,
            out_dir: dir.to_path_buf(),
        }
    }

    #[test]
    fn specs_carry_the_values() {
        let params = vec![Param::parse("board.copper, 420, 0, 900, 20, 0.002").unwrap(), Param::parse("option.Hash, 16, 1, 64, 4, 0.002").unwrap()];
        assert_eq!(spec_with("alphabeta,depth=2", &params, &[431.256, 17.6], Some("plus")), "alphabeta,depth=2,board.copper=431.26,option.Hash=18,name=plus");
        assert_eq!(spec_with("alphabeta,", &params[..1], &[400.0], None), "alphabeta,board.copper=400");
    }

    #[test]
    fn a_batch_result_counts_wins_minus_losses_of_the_plus_player() {
        let r = |first, second, first_score| JobResult {
            job: Job { id: 0, first, second, opening: 0 },
            first: String::new(),
            second: String::new(),
            opening: String::new(),
            first_score,
            hands: Vec::new(),
            seconds: 0.0,
        };
        // θ⁺ wins as Black, draws as White: +1.
        assert_eq!(batch_result(&[r(0, 1, 1.0), r(1, 0, 0.5)], false), 1.0);
        // Against the opponent: θ⁺ wins both (+2), θ⁻ loses one and draws one (−1): (2 − (−1)) / 2.
        assert_eq!(batch_result(&[r(0, 2, 1.0), r(2, 0, 0.0), r(1, 2, 0.0), r(2, 1, 0.5)], true), 1.5);
    }

    /// The toy problem with a known optimum: alpha-beta's root noise only weakens it, so
    /// tuning `noise` of `alphabeta,depth=1` against itself must drive it from 150 cp
    /// to near 0. Five seeds, one thread each (so each run is reproducible): SPSA is a
    /// noisy walk and above ~200 cp the noise hardly matters any more, so a run may stray;
    /// at least four of five must settle below 50 cp. 600 pairs a run: at 300, 4 of 12
    /// seeds strayed above 140 cp once each game's random streams came from the game
    /// alone (`players::Player::new_job`); at 600 the first five settle at 3–13 cp.
    #[test]
    fn tuning_the_alphabeta_noise_finds_its_known_optimum_at_zero() {
        let dir = tempfile::tempdir().unwrap();
        let runs: Vec<TuneState> = std::thread::scope(|s| {
            let handles: Vec<_> = (1..=5u64)
                .map(|seed| {
                    let c = TuneConfig {
                        params: vec![Param::parse("noise, 150, 0, 250, 25, 0.2").unwrap()],
                        seed,
                        threads: 1,
                        ..config(&dir.path().join(format!("seed-{seed}")), 600)
                    };
                    s.spawn(move || run_tune(&c, false).unwrap())
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let late: Vec<f64> = runs.iter().map(|r| r.late_mean()[0].round()).collect();
        assert!(late.iter().filter(|&&x| x < 50.0).count() >= 4, "noise settled at {late:?} cp");
        let d = dir.path().join("seed-1");
        assert!(d.join("path-noise.svg").exists());
        let spec = std::fs::read_to_string(d.join("tuned.txt")).unwrap();
        assert!(spec.starts_with("alphabeta,depth=1,noise="), "{spec}");
        PlayerSpec::parse(spec.trim()).expect("the tuned spec is a player spec");
    }

    #[test]
    fn a_run_resumes_where_it_stopped_and_refuses_other_settings() {
        let dir = tempfile::tempdir().unwrap();
        // One thread: a noisy player's stream depends on the thread that plays the game.
        let config = |d: &Path, pairs| TuneConfig { threads: 1, ..config(d, pairs) };
        // The same run cut after two updates and resumed ends where the uncut run does.
        let whole = run_tune(&config(&dir.path().join("whole"), 8), false).unwrap();
        let legs = dir.path().join("legs");
        let first = run_tune(&config(&legs, 8), false).unwrap();
        let mut cut = first.clone();
        cut.spsa.theta = cut.history[1].theta.clone();
        cut.spsa.k = cut.history[1].probe.k + cut.history[1].pairs;
        cut.history.truncate(2);
        save(&cut).unwrap();
        let resumed = run_tune(&config(&legs, 8), false).unwrap();
        assert_eq!(resumed.history.len(), whole.history.len());
        assert_eq!(resumed.spsa.k, 8);
        // The same flips and, up to the last digit JSON keeps, the same values.
        for (a, b) in resumed.history.iter().zip(&whole.history) {
            assert_eq!((a.probe.k, &a.probe.flips), (b.probe.k, &b.probe.flips));
            assert!(a.theta.iter().zip(&b.theta).all(|(x, y)| (x - y).abs() < 1e-9), "{:?} vs {:?}", a.theta, b.theta);
        }
        let mut other = config(&legs, 8);
        other.player = "alphabeta,depth=2".into();
        let e = run_tune(&other, false).unwrap_err().to_string();
        assert!(e.contains("other player"), "{e}");
        std::fs::write(legs.join("tune.json"), b"{").unwrap();
        let e = run_tune(&config(&legs, 8), false).unwrap_err().to_string();
        assert!(e.contains("not a tuning state file"), "{e}");
    }

    #[test]
    fn against_a_fixed_opponent_every_batch_plays_it() {
        let dir = tempfile::tempdir().unwrap();
        let c = TuneConfig { opponent: Some("random".into()), ..config(dir.path(), 6) };
        let state = run_tune(&c, false).unwrap();
        assert_eq!((state.history.len(), state.spsa.k), (3, 6), "three batches of two pairs");
        // Each pair is θ⁺ and θ⁻ against the opponent from both sides: results are halves
        // of a difference of wins − losses over two games each, so within −2…2 per pair.
        assert!(state.history.iter().all(|s| s.result.abs() <= 2.0 * s.pairs as f64 && (2.0 * s.result).fract() == 0.0));
    }

    #[test]
    fn bad_configurations_say_what_is_wrong() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = config(dir.path(), 4);
        c.params.clear();
        assert!(run_tune(&c, false).unwrap_err().to_string().contains("no parameter"));
        let mut c = config(dir.path(), 4);
        c.params[0] = Param::parse("board.dragonfly, 300, 0, 600, 60, 0.02").unwrap();
        assert!(run_tune(&c, false).unwrap_err().to_string().contains("has no piece 'dragonfly'"));
        let mut c = config(dir.path(), 4);
        c.random_plies = 10;
        c.max_plies = 8;
        assert!(run_tune(&c, false).unwrap_err().to_string().contains("leaves no game"));
    }
}
