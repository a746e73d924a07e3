//! The allocator that training wants: mimalloc, keeping the memory it frees.
//!
//! A training step allocates and frees activation-sized buffers (megabytes each) dozens of
//! times. glibc's malloc hands such blocks back to the OS and the next step faults them in
//! again, zeroed by the kernel: 7% of a 4x48 step in the kernel. mimalloc reuses most of
//! them, but it still returns ("purges") freed memory to the OS; with purging off, a step's
//! buffers come from the previous step's (4x48 at batch 256, `MIMALLOC_PURGE_DELAY=-1`
//! against the default: +20–25% samples/s, system time from 0.6 s to 0.1 s per 3 s).
//! The price: the process keeps its peak memory, which for training is its working set.
//!
//! Each binary declares `#[global_allocator] static A: model::allocator::MiMalloc =
//! model::allocator::MiMalloc;` and calls [`keep_freed_memory`] first thing in `main`.

pub use mimalloc::MiMalloc;

/// mimalloc's `mi_option_purge_delay` (mimalloc.h, `mi_option_e`; v3, which the crate
/// builds, and v2 alike); the
/// Rust bindings name the options around it (14 `eager_commit_delay`, 16
/// `use_numa_nodes`) but not this one.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Turns mimalloc's purging of freed memory off (no effect under another allocator).
pub fn keep_freed_memory() {
    // SAFETY: sets a process-wide option by value; mimalloc reads options atomically.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1) };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The option number names purge_delay: before it is set it holds purge_delay's
    /// default in mimalloc v3 (1000 ms, `src/options.c`), and it reads back what was set.
    #[test]
    fn the_purge_delay_option_reads_back() {
        // SAFETY (both reads): reads a process-wide option.
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
            assert_eq!(unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) }, 1000);
        }
        keep_freed_memory();
        assert_eq!(unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) }, -1);
    }
}
