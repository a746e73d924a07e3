//! Per-leaf cost counters for `copper bench-selfplay`: time and calls of each check a new
//! leaf gets (one-ply mate, three-ply mate, legal moves for the expansion, the
//! quiescence score of `qmix`). Off unless [`enable`] was called, so a search outside
//! the benchmark pays one relaxed load per check; on, two reads of the thread's CPU
//! clock (CPU time, not wall time: on a loaded machine a thread's waits are not its
//! work).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

/// CPU time of the calling thread, in nanoseconds (`CLOCK_THREAD_CPUTIME_ID`).
pub fn thread_cpu_nanos() -> u64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `t` is a valid, writable timespec; the clock id is a constant of the platform.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

static ON: AtomicBool = AtomicBool::new(false);

/// What a leaf's time is spent on (besides the network).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// [`crate::SearchGame::winning_move`] at a new leaf.
    MateInOne,
    /// [`crate::SearchGame::checkmate_within`] at a new leaf.
    MateInThree,
    /// The leaf's legal moves (the expansion's list).
    LegalMoves,
    /// The quiescence score mixed into the leaf's value (`players::qmix`).
    Quiescence,
    /// The root state played down the path to the leaf ([`crate::SearchGame::play`]).
    Replay,
}

const PARTS: usize = 5;
static NANOS: [AtomicU64; PARTS] = [const { AtomicU64::new(0) }; PARTS];
static CALLS: [AtomicU64; PARTS] = [const { AtomicU64::new(0) }; PARTS];

/// Turns the counters on (for the rest of the process) and zeroes them.
pub fn enable() {
    for i in 0..PARTS {
        NANOS[i].store(0, Relaxed);
        CALLS[i].store(0, Relaxed);
    }
    ON.store(true, Relaxed);
}

/// Whether the counters are on.
#[inline(always)]
pub fn enabled() -> bool {
    ON.load(Relaxed)
}

/// Runs `f`, counting its time against `part` when the counters are on.
#[inline(always)]
pub fn time<T>(part: Part, f: impl FnOnce() -> T) -> T {
    if !enabled() {
        return f();
    }
    let t = thread_cpu_nanos();
    let r = f();
    NANOS[part as usize].fetch_add(thread_cpu_nanos().saturating_sub(t), Relaxed);
    CALLS[part as usize].fetch_add(1, Relaxed);
    r
}

/// (seconds, calls) counted against `part` since [`enable`].
pub fn read(part: Part) -> (f64, u64) {
    (NANOS[part as usize].load(Relaxed) as f64 * 1e-9, CALLS[part as usize].load(Relaxed))
}
