//! `soak`: runs every fuzz target (or those named) for a set time each and reports the
//! executions; exits non-zero on any failure, with the failing inputs saved.
//!
//! Beyond catching panics, two guards make the other failures visible: an allocator that
//! refuses any single allocation over `--max-alloc-mib` (an input that makes a parser
//! allocate gigabytes aborts the run, naming the target and saving the input), and a
//! watchdog that does the same for an input running longer than `--hang-seconds`.

use anyhow::{bail, Result};
use clap::Parser;
use fuzz_soak::{soak, targets};
use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

#[derive(Parser)]
#[command(about = "Mutation soak of every parser of untrusted input")]
struct Args {
    /// Seconds per target.
    #[arg(long, default_value_t = 30)]
    seconds: u64,
    /// Seed of the mutations (a run is reproducible from it).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Only these targets (default: all).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Where failing inputs and the scratch files go.
    #[arg(long, default_value = "data/fuzz")]
    out: PathBuf,
    /// Largest single allocation allowed, in MiB (a shard body may legitimately inflate to
    /// 1 GiB, read by doubling: 2 GiB).
    #[arg(long, default_value_t = 2100)]
    max_alloc_mib: usize,
    /// An input running longer than this is a hang.
    #[arg(long, default_value_t = 20)]
    hang_seconds: u64,
}

/// The input being run, for the guards to save (try-locked only: never waits).
static CURRENT: Mutex<Vec<u8>> = Mutex::new(Vec::new());
static CURRENT_TARGET: Mutex<&str> = Mutex::new("");
/// Where a guard writes the input it stops on (a raw fd, opened before the soak).
static GUARD_FD: AtomicI32 = AtomicI32::new(-1);
static MAX_ALLOC: AtomicUsize = AtomicUsize::new(usize::MAX);
static GUARD_TRIPPED: AtomicBool = AtomicBool::new(false);

/// Saves the current input through the pre-opened fd without allocating.
fn save_current_input() {
    let fd = GUARD_FD.load(Ordering::SeqCst);
    if fd < 0 {
        return;
    }
    if let Ok(input) = CURRENT.try_lock() {
        // SAFETY: `fd` was opened by main and is never closed while the soak runs; the
        // ManuallyDrop keeps this borrowed handle from closing it.
        let mut file = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) });
        let _ = file.write_all(&input);
        let _ = file.flush();
    }
}

/// Whether an allocation of `size` bytes is over the limit: the first such request saves
/// the input and is refused (the caller then aborts on the allocation failure).
fn refused(size: usize) -> bool {
    if size <= MAX_ALLOC.load(Ordering::Relaxed) || GUARD_TRIPPED.swap(true, Ordering::SeqCst) {
        return false;
    }
    let _ = std::io::stderr().write_all(b"soak: an input asked for an allocation over the limit; input saved, aborting\n");
    save_current_input();
    true
}

struct GuardedAlloc;

// SAFETY: every call is forwarded to the system allocator unchanged, except that a
// refused request returns null, which GlobalAlloc allows (the caller then reports an
// allocation failure).
unsafe impl GlobalAlloc for GuardedAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if refused(layout.size()) {
            return std::ptr::null_mut();
        }
        // SAFETY: forwarded with the caller's layout.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if refused(new_size) {
            return std::ptr::null_mut();
        }
        // SAFETY: `ptr` came from this allocator with `layout`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: GuardedAlloc = GuardedAlloc;

fn main() -> Result<()> {
    let args = Args::parse();
    let root = std::env::current_dir()?;
    std::fs::create_dir_all(args.out.join("failures"))?;
    let scratch = args.out.join("scratch");
    let all = targets(&root, &scratch);
    let chosen: Vec<_> = all.into_iter().filter(|t| args.only.is_empty() || args.only.iter().any(|o| o == t.name)).collect();
    if chosen.is_empty() {
        bail!("no target named {:?}", args.only);
    }
    // Panics are expected and caught per input; keep the log to the summary.
    std::panic::set_hook(Box::new(|_| {}));

    let started_input = std::sync::Arc::new(AtomicU64::new(0));
    let epoch = Instant::now();
    {
        let started_input = started_input.clone();
        let hang = args.hang_seconds;
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_millis(500));
            let t = started_input.load(Ordering::SeqCst);
            if t > 0 && epoch.elapsed().as_millis() as u64 > t + hang * 1000 {
                let target = CURRENT_TARGET.try_lock().map(|t| *t).unwrap_or("?");
                eprintln!("soak: target {target}: an input ran over {hang} s (a hang); input saved, aborting");
                save_current_input();
                std::process::abort();
            }
        });
    }

    println!("| target | what it checks | executions | accepted | failures |");
    println!("|---|---|---|---|---|");
    let mut failed = 0;
    let mut total = 0;
    for target in &chosen {
        let guard_file = std::fs::File::create(args.out.join("failures").join(format!("{}-guard.bin", target.name)))?;
        GUARD_FD.store(guard_file.as_raw_fd(), Ordering::SeqCst);
        *CURRENT_TARGET.lock().unwrap() = target.name;
        MAX_ALLOC.store(args.max_alloc_mib << 20, Ordering::SeqCst);
        let deadline = Instant::now() + Duration::from_secs(args.seconds);
        let report = soak(
            target,
            args.seed,
            |_| Instant::now() < deadline,
            |input| {
                let mut current = CURRENT.lock().unwrap();
                current.clear();
                current.extend_from_slice(input);
                started_input.store(epoch.elapsed().as_millis() as u64, Ordering::SeqCst);
            },
        );
        started_input.store(0, Ordering::SeqCst);
        MAX_ALLOC.store(usize::MAX, Ordering::SeqCst);
        GUARD_FD.store(-1, Ordering::SeqCst);
        drop(guard_file);
        let _ = std::fs::remove_file(args.out.join("failures").join(format!("{}-guard.bin", target.name)));
        for (i, (input, message)) in report.failures.iter().enumerate() {
            let path = args.out.join("failures").join(format!("{}-{i}.bin", target.name));
            std::fs::write(&path, input)?;
            eprintln!("soak: {}: {} ({})", target.name, message, path.display());
        }
        println!("| {} | {} | {} | {} | {} |", target.name, target.what, report.executions, report.accepted, report.failures.len());
        failed += report.failures.len();
        total += report.executions;
    }
    println!("\n{total} executions, {failed} failures (seed {}, {} s per target)", args.seed, args.seconds);
    if failed > 0 {
        bail!("{failed} inputs failed; saved under {}", args.out.join("failures").display());
    }
    Ok(())
}
