//! How long a player may think, and the clock that enforces it.
//!
//! A limit is either a budget of work (nodes: MCTS simulations, alpha-beta nodes, USI
//! `go nodes`; or an alpha-beta depth) or a time control (fixed time per move, main time
//! plus byoyomi, or Fischer main time plus increment). Time controls are enforced by the
//! arena's [`Clock`]: a player who answers later than its remaining time allows, plus the
//! tournament's grace margin, loses on time.

use serde::{Deserialize, Serialize};
use std::time::Duration;

#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Limit {
    /// Simulations (MCTS), nodes (alpha-beta, USI `go nodes`).
    Nodes(u64),
    /// Alpha-beta depth in plies (USI `go depth`).
    Depth(u32),
    /// Fixed time per move, in milliseconds (USI `go movetime`).
    MoveTime(u64),
    /// Main time, then this much per move once it is spent (USI `btime wtime byoyomi`), ms.
    Byoyomi { main_ms: u64, byoyomi_ms: u64 },
    /// Main time with an increment after every move (USI `btime wtime binc winc`), ms.
    Fischer { main_ms: u64, increment_ms: u64 },
}

impl Limit {
    /// Whether the limit is a time control (the arena then runs one game per thread so
    /// that wall time is the player's own).
    pub fn is_timed(&self) -> bool {
        matches!(self, Limit::MoveTime(_) | Limit::Byoyomi { .. } | Limit::Fischer { .. })
    }

    /// Parses `nodes=N`, `depth=D`, `movetime=MS`, `byoyomi=MS` (optionally with
    /// `time=MS`), `time=MS` with `inc=MS`. `pairs` are the key=value items of a spec.
    pub fn from_pairs(pairs: &[(String, String)]) -> Result<Option<Limit>, String> {
        let get = |k: &str| -> Result<Option<u64>, String> {
            match pairs.iter().rev().find(|(n, _)| n == k) {
                None => Ok(None),
                Some((_, v)) => v.parse::<u64>().map(Some).map_err(|_| format!("{k}={v}: expected a whole number")),
            }
        };
        let nodes = get("nodes")?.or(get("sims")?).or(get("simulations")?);
        let depth = get("depth")?;
        let movetime = get("movetime")?;
        let byoyomi = get("byoyomi")?;
        let time = get("time")?;
        let inc = get("inc")?;
        let chosen =
            [nodes.is_some(), depth.is_some(), movetime.is_some(), byoyomi.is_some() || inc.is_some() || time.is_some()].iter().filter(|&&b| b).count();
        if chosen > 1 {
            return Err("give one limit: nodes (or sims), depth, movetime, or time with byoyomi/inc".into());
        }
        if byoyomi.is_some() && inc.is_some() {
            return Err("byoyomi and inc exclude each other".into());
        }
        Ok(if let Some(n) = nodes {
            if n == 0 {
                return Err("nodes must be at least 1".into());
            }
            Some(Limit::Nodes(n))
        } else if let Some(d) = depth {
            if d == 0 || d > 64 {
                return Err(format!("depth={d}: expected 1..=64"));
            }
            Some(Limit::Depth(d as u32))
        } else if let Some(ms) = movetime {
            Some(Limit::MoveTime(ms.max(1)))
        } else if let Some(b) = byoyomi {
            Some(Limit::Byoyomi { main_ms: time.unwrap_or(0), byoyomi_ms: b })
        } else if let Some(i) = inc {
            Some(Limit::Fischer { main_ms: time.unwrap_or(0), increment_ms: i })
        } else if let Some(t) = time {
            if t == 0 {
                return Err("time=0 with no byoyomi or increment leaves no time to move".into());
            }
            Some(Limit::Byoyomi { main_ms: t, byoyomi_ms: 0 })
        } else {
            None
        })
    }

    /// The limit as spec text (`nodes=800`, `time=10000,byoyomi=100`).
    pub fn to_spec(&self) -> String {
        match *self {
            Limit::Nodes(n) => format!("nodes={n}"),
            Limit::Depth(d) => format!("depth={d}"),
            Limit::MoveTime(ms) => format!("movetime={ms}"),
            Limit::Byoyomi { main_ms, byoyomi_ms } => format!("time={main_ms},byoyomi={byoyomi_ms}"),
            Limit::Fischer { main_ms, increment_ms } => format!("time={main_ms},inc={increment_ms}"),
        }
    }
}

/// One player's clock in one game.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Clock {
    pub limit: Limit,
    /// Main time left, ms.
    pub remaining_ms: u64,
}

/// What a player is told when asked to move: its limit and both clocks' remaining main
/// time (for the USI `go` command).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ClockView {
    pub limit: Limit,
    /// Remaining main time of Black and White, ms.
    pub remaining_ms: [u64; 2],
}

impl ClockView {
    /// The USI `go` arguments for this clock (`btime`/`wtime` are for both sides, as the
    /// protocol wants).
    pub(crate) fn usi_go(&self) -> String {
        let [b, w] = self.remaining_ms;
        match self.limit {
            Limit::Nodes(n) => format!("go nodes {n}"),
            Limit::Depth(d) => format!("go depth {d}"),
            Limit::MoveTime(ms) => format!("go movetime {ms}"),
            Limit::Byoyomi { byoyomi_ms, .. } => format!("go btime {b} wtime {w} byoyomi {byoyomi_ms}"),
            Limit::Fischer { increment_ms, .. } => format!("go btime {b} wtime {w} binc {increment_ms} winc {increment_ms}"),
        }
    }

    /// Time the mover may use on this move before it has lost, ms (`None` for budgets of work).
    pub(crate) fn allowance_ms(&self, mover: usize) -> Option<u64> {
        let left = self.remaining_ms[mover];
        match self.limit {
            Limit::Nodes(_) | Limit::Depth(_) => None,
            Limit::MoveTime(ms) => Some(ms),
            Limit::Byoyomi { byoyomi_ms, .. } => Some(left + byoyomi_ms),
            Limit::Fischer { increment_ms, .. } => Some(left + increment_ms),
        }
    }

    /// A sensible time to spend on this move (what our own engine aims for), ms.
    pub(crate) fn target_ms(&self, mover: usize, ply: usize) -> Option<u64> {
        let left = self.remaining_ms[mover];
        match self.limit {
            Limit::Nodes(_) | Limit::Depth(_) => None,
            Limit::MoveTime(ms) => Some(ms),
            Limit::Byoyomi { byoyomi_ms, .. } => Some(left / moves_to_go(ply) + byoyomi_ms),
            Limit::Fischer { increment_ms, .. } => Some((left / moves_to_go(ply) + increment_ms).min(left + increment_ms)),
        }
    }
}

/// Moves still to be played that the remaining main time is shared over: more early in
/// the game, never fewer than 10 (shogi games last about 120 plies, 60 per side).
fn moves_to_go(ply: usize) -> u64 {
    (60u64.saturating_sub(ply as u64 / 2)).max(10) + 10
}

impl Clock {
    pub fn new(limit: Limit) -> Clock {
        let remaining_ms = match limit {
            Limit::Byoyomi { main_ms, .. } | Limit::Fischer { main_ms, .. } => main_ms,
            _ => 0,
        };
        Clock { limit, remaining_ms }
    }

    /// Charges a move that took `used`. Returns false when the player overstepped its time
    /// by more than `margin` (a loss on time).
    pub fn charge(&mut self, used: Duration, margin: Duration) -> bool {
        let used_ms = used.as_millis() as u64;
        let margin_ms = margin.as_millis() as u64;
        match self.limit {
            Limit::Nodes(_) | Limit::Depth(_) => true,
            Limit::MoveTime(ms) => used_ms <= ms + margin_ms,
            Limit::Byoyomi { byoyomi_ms, .. } => {
                if used_ms <= self.remaining_ms {
                    self.remaining_ms -= used_ms;
                    true
                } else {
                    let over = used_ms - self.remaining_ms;
                    self.remaining_ms = 0;
                    over <= byoyomi_ms + margin_ms
                }
            }
            Limit::Fischer { increment_ms, .. } => {
                if used_ms > self.remaining_ms + increment_ms + margin_ms {
                    self.remaining_ms = 0;
                    false
                } else {
                    self.remaining_ms = (self.remaining_ms + increment_ms).saturating_sub(used_ms);
                    true
                }
            }
        }
    }
}

/// What the internal players (search players and baselines) keep back from a time limit:
/// one reserve for both, so that at a time limit they think equally long.
pub(crate) const INTERNAL_RESERVE: Duration = Duration::from_millis(30);

/// A budget that is a safe amount of time to think when the limit is a time control:
/// the target, less a reserve for latency (process scheduling, pipes, the opponent's
/// process on the same cores).
pub(crate) fn think_time(view: &ClockView, mover: usize, ply: usize, reserve: Duration) -> Option<Duration> {
    let allowance = view.allowance_ms(mover)?;
    let target = view.target_ms(mover, ply)?.min(allowance);
    // Never closer to the allowance than the reserve, unless the reserve is more than
    // half of it: then half the allowance.
    let safe = allowance.saturating_sub(reserve.as_millis() as u64).max(allowance / 2);
    Some(Duration::from_millis(target.min(safe).max(1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(s: &str) -> Vec<(String, String)> {
        s.split(',')
            .filter(|p| !p.is_empty())
            .map(|p| {
                let (a, b) = p.split_once('=').unwrap();
                (a.to_string(), b.to_string())
            })
            .collect()
    }

    #[test]
    fn limits_parse_and_print() {
        assert_eq!(Limit::from_pairs(&pairs("nodes=800")).unwrap(), Some(Limit::Nodes(800)));
        assert_eq!(Limit::from_pairs(&pairs("sims=24")).unwrap(), Some(Limit::Nodes(24)));
        assert_eq!(Limit::from_pairs(&pairs("time=1000,byoyomi=100")).unwrap(), Some(Limit::Byoyomi { main_ms: 1000, byoyomi_ms: 100 }));
        assert_eq!(Limit::from_pairs(&pairs("byoyomi=100")).unwrap(), Some(Limit::Byoyomi { main_ms: 0, byoyomi_ms: 100 }));
        assert_eq!(Limit::from_pairs(&pairs("time=60000,inc=1000")).unwrap(), Some(Limit::Fischer { main_ms: 60000, increment_ms: 1000 }));
        assert_eq!(Limit::from_pairs(&pairs("")).unwrap(), None);
        assert!(Limit::from_pairs(&pairs("nodes=5,depth=3")).is_err());
        assert!(Limit::from_pairs(&pairs("nodes=x")).is_err());
        assert!(Limit::from_pairs(&pairs("byoyomi=1,inc=2")).is_err());
        for l in [
            Limit::Nodes(3),
            Limit::Depth(2),
            Limit::MoveTime(50),
            Limit::Byoyomi { main_ms: 10, byoyomi_ms: 5 },
            Limit::Fischer { main_ms: 9, increment_ms: 1 },
        ] {
            assert_eq!(Limit::from_pairs(&pairs(&l.to_spec())).unwrap(), Some(l));
        }
    }

    #[test]
    fn byoyomi_clock_spends_main_time_then_byoyomi() {
        let mut c = Clock::new(Limit::Byoyomi { main_ms: 1000, byoyomi_ms: 100 });
        let m = Duration::from_millis(0);
        assert!(c.charge(Duration::from_millis(600), m));
        assert_eq!(c.remaining_ms, 400);
        // 400 ms of main time plus 100 ms of byoyomi: 500 is allowed, 501 is not.
        let mut d = c;
        assert!(d.charge(Duration::from_millis(500), m));
        assert_eq!(d.remaining_ms, 0);
        assert!(!c.charge(Duration::from_millis(501), m));
        let mut e = Clock::new(Limit::Byoyomi { main_ms: 0, byoyomi_ms: 100 });
        assert!(e.charge(Duration::from_millis(120), Duration::from_millis(20)));
        assert!(!e.charge(Duration::from_millis(121), Duration::from_millis(20)));
    }

    #[test]
    fn fischer_clock_adds_the_increment() {
        let mut c = Clock::new(Limit::Fischer { main_ms: 1000, increment_ms: 100 });
        assert!(c.charge(Duration::from_millis(300), Duration::ZERO));
        assert_eq!(c.remaining_ms, 800); // 1000 + 100 - 300
        assert!(!c.charge(Duration::from_millis(901), Duration::ZERO));
    }

    #[test]
    fn usi_go_lines() {
        let v = ClockView { limit: Limit::Byoyomi { main_ms: 0, byoyomi_ms: 100 }, remaining_ms: [0, 0] };
        assert_eq!(v.usi_go(), "go btime 0 wtime 0 byoyomi 100");
        let v = ClockView { limit: Limit::Fischer { main_ms: 5000, increment_ms: 50 }, remaining_ms: [4000, 3000] };
        assert_eq!(v.usi_go(), "go btime 4000 wtime 3000 binc 50 winc 50");
        assert_eq!(ClockView { limit: Limit::Nodes(100), remaining_ms: [0, 0] }.usi_go(), "go nodes 100");
    }

    #[test]
    fn think_time_stays_inside_the_allowance() {
        // Byoyomi 100 ms, no main time: the allowance is 100 ms; with a 30 ms reserve we
        // aim at 70 ms.
        let v = ClockView { limit: Limit::Byoyomi { main_ms: 0, byoyomi_ms: 100 }, remaining_ms: [0, 0] };
        let t = think_time(&v, 0, 0, Duration::from_millis(30)).unwrap();
        assert_eq!(t, Duration::from_millis(70));
        for main in [0u64, 10, 1000, 60_000] {
            for ply in [0usize, 50, 200] {
                let v = ClockView { limit: Limit::Fischer { main_ms: main, increment_ms: 100 }, remaining_ms: [main, main] };
                let t = think_time(&v, 1, ply, Duration::from_millis(30)).unwrap().as_millis() as u64;
                assert!(t <= main + 100, "{main} {ply} {t}");
            }
        }
        assert!(think_time(&ClockView { limit: Limit::Nodes(5), remaining_ms: [0, 0] }, 0, 0, Duration::ZERO).is_none());
    }
}
