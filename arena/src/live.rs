//! A live view of a running tournament.
//!
//! After every finished game (once it is recorded in `results.jsonl`), and once before the
//! first game of an invocation, [`crate::tournament::run_with`] calls each of its
//! [`AfterGame`] hooks with the tournament's [`Progress`]: the report of every result so far
//! (the same the tournament returns at the end), games done and in all, and time. The hooks
//! run one at a time, in the order the games were recorded. [`write_live_text`], the hook
//! `copper arena` runs (through [`crate::tournament::run`]), rewrites `DIR/live.txt`
//! atomically (temporary file, fsync, rename), so that a reader never sees half a file:
//!
//! ```text
//! watch -n 5 cat DIR/live.txt
//! ```
//!
//! Another view (an HTML page, say) is one more hook at the same point.

use crate::report::{self, Report};
use std::path::Path;
use std::time::Duration;

/// The file [`write_live_text`] rewrites in the tournament directory.
pub const LIVE_FILE: &str = "live.txt";

/// Where a tournament stands after a finished game.
pub struct Progress<'a> {
    /// The tournament's directory.
    pub dir: &'a Path,
    /// Built from every result so far, resumed ones included, as the final report is.
    pub report: &'a Report,
    /// Games recorded so far (resumed ones included), and in the whole tournament.
    pub done: u64,
    pub total: u64,
    /// Games this invocation played, and its time so far.
    pub played: u64,
    pub elapsed: Duration,
}

impl Progress<'_> {
    /// The time the games left would take at this invocation's pace (none before its first
    /// game): elapsed / played × games left. (A match an SPRT stops ends sooner.)
    pub fn eta(&self) -> Option<Duration> {
        (self.played > 0).then(|| self.elapsed.mul_f64(self.total.saturating_sub(self.done) as f64 / self.played as f64))
    }
}

/// A hook called with the tournament's [`Progress`] after every finished game (see the
/// module documentation). An error is logged as a warning; the tournament goes on.
pub type AfterGame<'a> = &'a (dyn Fn(&Progress<'_>) -> std::io::Result<()> + Sync);

/// `h:mm:ss`.
fn clock(d: Duration) -> String {
    let s = d.as_secs();
    format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// The text of `live.txt`: one line of progress, then the table and ratings the arena
/// prints at the end ([`report::table`]).
pub(crate) fn live_text(p: &Progress<'_>) -> String {
    let eta = p.eta().map_or_else(|| "-".to_string(), clock);
    format!("games {}/{}, elapsed {}, eta {eta} ({} played in this run)\n\n{}", p.done, p.total, clock(p.elapsed), p.played, report::table(p.report))
}

/// The hook that rewrites `DIR/live.txt` ([`LIVE_FILE`]) atomically with [`live_text`].
pub fn write_live_text(p: &Progress<'_>) -> std::io::Result<()> {
    records::write_atomic(&p.dir.join(LIVE_FILE), live_text(p).as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_eta_is_the_pace_so_far_times_the_games_left() {
        let report = report::build(&["a".into(), "b".into()], &[(0, 1)], &[], 0, 0.0, None);
        let p = |done, played, secs| Progress { dir: Path::new("."), report: &report, done, total: 10, played, elapsed: Duration::from_secs(secs) };
        assert_eq!(p(0, 0, 0).eta(), None);
        // 3 games in 60 s, 4 left (3 of the 6 done were resumed): 4 × 20 s.
        assert_eq!(p(6, 3, 60).eta(), Some(Duration::from_secs(80)));
        assert_eq!(p(10, 2, 30).eta(), Some(Duration::ZERO));
        let text = live_text(&p(6, 2, 3725));
        assert!(text.starts_with("games 6/10, elapsed 1:02:05, eta 2:04:10 (2 played in this run)\n"), "{text}");
        assert!(text.ends_with(&report::table(&report)), "{text}");
    }
}
