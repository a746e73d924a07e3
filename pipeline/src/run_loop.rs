//! The training loop, `copper train`: generation after generation of self-play →
//! training → evaluation in one process, the trainer and one worker (`crate::fleet`'s two
//! roles) over the run directory as a local store, so the same command resumes after any
//! kill without losing a finished game or corrupting a checkpoint.

use crate::config::RunConfig;
use anyhow::{Context, Result};
use std::path::Path;
use std::time::Duration;

pub fn train_loop(cfg: &RunConfig, show_progress: bool) -> Result<()> {
    train_loop_with(cfg, show_progress, &mut |_| {})
}

/// The file that `copper train` holds locked while it runs on a directory.
const LOCK_FILE: &str = ".train.lock";

/// Locks `dir` for this process until the returned file is dropped. Both roles run here
/// under the one id "local", so the fleet's claims cannot tell a second `copper train` on
/// the same directory from the first: both would win every generation and write over each
/// other. The operating system lets go of the lock when a process dies, so a killed run
/// resumes at once.
fn lock_run_dir(dir: &Path) -> Result<std::fs::File> {
    let path = dir.join(LOCK_FILE);
    let file = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(&path).with_context(|| format!("opening {}", path.display()))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => anyhow::bail!(
            "{} is in use: another `copper train` holds {}; wait for it to finish or stop it (a stopped one lets go at once), or choose another run_dir",
            dir.display(),
            path.display()
        ),
        Err(std::fs::TryLockError::Error(e)) => Err(e).with_context(|| format!("locking {}", path.display())),
    }
}

/// [`train_loop`], calling `after_generation(run_dir)` once each generation's reports are
/// written (e.g. to rewrite the run's page, `copper view`).
///
/// The trainer and one worker (`cfg.threads` threads) in one process over the run
/// directory as a local store: the same roles `copper trainer` and `copper worker` run
/// apart ([`crate::fleet`]).
pub fn train_loop_with(cfg: &RunConfig, show_progress: bool, after_generation: &mut dyn FnMut(&Path)) -> Result<()> {
    std::fs::create_dir_all(&cfg.run_dir).with_context(|| format!("creating {}", cfg.run_dir.display()))?;
    let _lock = lock_run_dir(&cfg.run_dir)?;
    let store = store::Store::open(&cfg.run_dir.to_string_lossy())?;
    let variant = cfg.variant()?;
    tracing::info!(run = %cfg.run_dir.display(), variant = %variant.title, generations = cfg.generations, "training loop");
    let trainer = crate::fleet::TrainerOptions {
        id: "local".into(),
        work_dir: None,
        poll: Duration::from_millis(100),
        settle: Duration::from_millis(20),
        lease: Duration::from_secs(60),
        no_more_games: Some(std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false))),
        // The config is the caller's own: nothing read from the run directory is checked.
        allowed_engines: players::EngineAllowList::default(),
    };
    let worker = crate::fleet::WorkerOptions {
        id: "local".into(),
        threads: cfg.threads,
        work_dir: cfg.run_dir.join(".worker"),
        poll: Duration::from_millis(100),
        max_games: None,
    };
    crate::fleet::publish_config(&store, Some(cfg))?;
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        // The worker sees the last model and stops by itself; told to stop, it also
        // stops when the trainer failed.
        let playing = scope.spawn(|| {
            let r = crate::fleet::run_worker(&store, &worker, &stop);
            trainer.no_more_games.as_ref().expect("set above").store(true, std::sync::atomic::Ordering::Relaxed);
            r
        });
        let trained = crate::fleet::run_trainer(&store, Some(cfg), &trainer, show_progress, after_generation);
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let played = playing.join().map_err(|_| anyhow::anyhow!("the self-play worker panicked"))?;
        trained?;
        played.map(|_| ())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_trainer_of_one_directory_is_refused_until_the_first_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let first = lock_run_dir(dir.path()).unwrap();
        let second = lock_run_dir(dir.path()).unwrap_err().to_string();
        assert!(second.contains("is in use") && second.contains(LOCK_FILE), "{second}");
        drop(first);
        let _third = lock_run_dir(dir.path()).expect("free once the first is dropped");
        assert!(lock_run_dir(&dir.path().join("missing")).unwrap_err().to_string().contains("opening"));
    }
}
