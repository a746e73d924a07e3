//! Per-leaf cost counters for `copper bench-selfplay`: time and calls of each check a new
//! leaf gets (one-ply mate, three-ply mate, legal moves for the expansion, the
//! quiescence score of `qmix`). Off unless [`enable`] was called, so a search outside
//! the benchmark pays one relaxed load per check.
//!
//! On, every call is counted but only a random sample of calls is timed, on the thread's
//! CPU clock (CPU time, not wall time: on a loaded machine a thread's waits are not its
//! work), and a part's time is the sample's mean times its calls. The clock is a system
//! call (200–270 ns on a two-core Xeon VM, where self-play spends about 22 µs a
//! simulation outside the network): timing each of a simulation's four checks would add
//! about 2 µs of the benchmark's own to the time it reports. Each thread counts in its
//! own cache line, so the threads do not contend for the counters. A timed call still
//! counts one clock read's worth too much, taken off ([`enable`] measures it), and runs a
//! little slower than an untimed one (about 0.5 µs on that VM, see the test): the parts
//! are slight overestimates, their sum against the process's CPU time is not.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};

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
/// One call in `SAMPLE_EVERY` is timed, on average; the gap to the next timed call is
/// drawn uniformly from 1..=2·SAMPLE_EVERY−1 so that no periodic pattern of calls (a
/// simulation's fixed order of checks) lines up with the sample.
const SAMPLE_EVERY: u32 = 16;

/// One thread's counters, alone in its cache line(s).
#[repr(align(128))]
struct Slot {
    calls: [AtomicU64; PARTS],
    timed: [AtomicU64; PARTS],
    nanos: [AtomicU64; PARTS],
}

const SLOTS: usize = 64;
static SLOT: [Slot; SLOTS] =
    [const { Slot { calls: [const { AtomicU64::new(0) }; PARTS], timed: [const { AtomicU64::new(0) }; PARTS], nanos: [const { AtomicU64::new(0) }; PARTS] } };
        SLOTS];
static NEXT_SLOT: AtomicUsize = AtomicUsize::new(0);
/// What one clock read adds to an interval it closes, measured by [`enable`]: taken off
/// each timed call, which would otherwise count the clock's own system call against the
/// part (a tenth of a two-microsecond check).
static READ_NANOS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// This thread's slot (threads past `SLOTS` share, which the atomics allow).
    static MY_SLOT: usize = NEXT_SLOT.fetch_add(1, Relaxed) % SLOTS;
    /// Calls left before the next timed one, and the generator that draws the gap.
    static COUNTDOWN: Cell<u32> = const { Cell::new(1) };
    static RNG: Cell<u32> = Cell::new(0x9E37_79B9 ^ (NEXT_SLOT.load(Relaxed) as u32).wrapping_mul(0x85EB_CA6B) | 1);
}

/// The next gap between timed calls (xorshift32; statistical quality is not at stake).
fn next_gap() -> u32 {
    RNG.with(|r| {
        let mut x = r.get();
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        r.set(x);
        1 + x % (2 * SAMPLE_EVERY - 1)
    })
}

/// Turns the counters on (for the rest of the process) and zeroes them.
pub fn enable() {
    for s in &SLOT {
        for i in 0..PARTS {
            s.calls[i].store(0, Relaxed);
            s.timed[i].store(0, Relaxed);
            s.nanos[i].store(0, Relaxed);
        }
    }
    READ_NANOS.store(clock_read_nanos(2_000).round() as u64, Relaxed);
    ON.store(true, Relaxed);
}

/// Whether the counters are on.
#[inline(always)]
pub fn enabled() -> bool {
    ON.load(Relaxed)
}

/// Runs `f`, counting it against `part` (and timing it, if it is in the sample) when the
/// counters are on.
#[inline(always)]
pub fn time<T>(part: Part, f: impl FnOnce() -> T) -> T {
    if !enabled() {
        return f();
    }
    let slot = &SLOT[MY_SLOT.with(|s| *s)];
    slot.calls[part as usize].fetch_add(1, Relaxed);
    let left = COUNTDOWN.with(|c| {
        let left = c.get() - 1;
        c.set(if left == 0 { next_gap() } else { left });
        left
    });
    if left != 0 {
        return f();
    }
    let t = thread_cpu_nanos();
    let r = f();
    slot.nanos[part as usize].fetch_add(thread_cpu_nanos().saturating_sub(t), Relaxed);
    slot.timed[part as usize].fetch_add(1, Relaxed);
    r
}

/// (seconds, calls) counted against `part` since [`enable`]: the timed calls' mean, less
/// a clock read each, times all calls.
pub fn read(part: Part) -> (f64, u64) {
    let sum = |c: fn(&Slot) -> &[AtomicU64; PARTS]| SLOT.iter().map(|s| c(s)[part as usize].load(Relaxed)).sum::<u64>();
    let (calls, timed, nanos) = (sum(|s| &s.calls), sum(|s| &s.timed), sum(|s| &s.nanos));
    let nanos = nanos.saturating_sub(timed * READ_NANOS.load(Relaxed));
    let seconds = if timed == 0 { 0.0 } else { nanos as f64 * 1e-9 / timed as f64 * calls as f64 };
    (seconds, calls)
}

/// Calls timed (clock read twice) against every part since [`enable`].
pub fn timed_calls() -> u64 {
    SLOT.iter().flat_map(|s| s.timed.iter()).map(|t| t.load(Relaxed)).sum()
}

/// What one read of the thread's CPU clock costs here, in nanoseconds, as [`enable`]
/// measured it.
pub fn clock_read_cost() -> u64 {
    READ_NANOS.load(Relaxed)
}

/// The mean cost of one read of the thread's CPU clock, in nanoseconds (over `reads`
/// reads).
fn clock_read_nanos(reads: u32) -> f64 {
    let t = thread_cpu_nanos();
    for _ in 1..reads {
        std::hint::black_box(thread_cpu_nanos());
    }
    thread_cpu_nanos().saturating_sub(t) as f64 / reads.max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sample's scaled time estimates the whole: calls that each burn a known share
    /// of work, counted on two threads, come out within a few percent of timing them all.
    #[test]
    fn the_sampled_time_estimates_every_call_s_time() {
        enable();
        // Each step kept (black_box), so that the work takes the time its size says.
        let work = |n: u64| (0..n).fold(0u64, |a, i| std::hint::black_box(a.wrapping_mul(31).wrapping_add(i)));
        let whole: u64 = std::thread::scope(|s| {
            let hs: Vec<_> = (0..2)
                .map(|_| {
                    s.spawn(move || {
                        let t = thread_cpu_nanos();
                        for i in 0..8_000u64 {
                            // Alternating cheap and dear calls: a pattern the sample must not follow.
                            std::hint::black_box(time(Part::Quiescence, || work(if i % 2 == 0 { 2_000 } else { 20_000 })));
                        }
                        thread_cpu_nanos() - t
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).sum()
        });
        let (secs, calls) = read(Part::Quiescence);
        assert_eq!(calls, 16_000);
        // (The search's own tests may count other parts meanwhile; only `qmix` calls this one.)
        let timed: u64 = SLOT.iter().map(|s| s.timed[Part::Quiescence as usize].load(Relaxed)).sum();
        assert!((800..=1200).contains(&timed), "about one call in {SAMPLE_EVERY} timed: {timed}");
        // About 1,000 timed calls of a two-valued cost (coefficient of variation 0.8): the
        // estimate's standard error is about 2.6%. A timed call also runs about 5% slower
        // than an untimed one (the ratio over five seeds: 1.01–1.11, mean 1.06; the same
        // loop with every call timed, which bears it everywhere: 0.95 after the reads): the
        // bounds are that and more than four standard errors.
        let ratio = secs / (whole as f64 * 1e-9);
        assert!((0.85..1.25).contains(&ratio), "estimate {secs:.4} s against {:.4} s measured around the loop", whole as f64 * 1e-9);
    }
}
