//! The instruction sets the hand-vectorised kernels are compiled for, and which one runs.
//!
//! A kernel declared with [`multiversioned!`] is compiled three times — for AVX-512 (F and
//! VL), for AVX2 with FMA, and for the baseline target (scalar code as far as the compiler
//! does not vectorise it for SSE2) — and the best clone this CPU has runs, detected once.
//! It replaces the `multiversion` crate's attribute, whose clones are private to the
//! generated dispatcher, so that only the host's best clone could ever be tested: here the
//! choice goes through [`level`], and in tests [`for_each_level`] runs a check under every
//! clone the CPU supports, the scalar one included.

use std::sync::atomic::{AtomicU8, Ordering};

/// A set of clones of every multiversioned kernel, from the baseline up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Level {
    /// The baseline target's clone.
    Scalar = 1,
    /// `avx2` and `fma`.
    Avx2Fma = 2,
    /// `avx512f` and `avx512vl`.
    Avx512 = 3,
}

impl Level {
    fn from_u8(v: u8) -> Option<Level> {
        match v {
            1 => Some(Level::Scalar),
            2 => Some(Level::Avx2Fma),
            3 => Some(Level::Avx512),
            _ => None,
        }
    }
}

/// The best level of this CPU (0 until first detected).
static DETECTED: AtomicU8 = AtomicU8::new(0);

/// The best level this CPU supports.
pub(crate) fn detected() -> Level {
    if let Some(l) = Level::from_u8(DETECTED.load(Ordering::Relaxed)) {
        return l;
    }
    let l = detect();
    DETECTED.store(l as u8, Ordering::Relaxed);
    l
}

#[cfg(target_arch = "x86_64")]
fn detect() -> Level {
    if is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512vl") {
        Level::Avx512
    } else if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") {
        Level::Avx2Fma
    } else {
        Level::Scalar
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn detect() -> Level {
    Level::Scalar
}

/// The level a multiversioned kernel runs at: the CPU's best, or in tests the one
/// [`for_each_level`] forces.
#[inline]
pub(crate) fn level() -> Level {
    #[cfg(test)]
    if let Some(l) = Level::from_u8(testing::FORCED.load(Ordering::Relaxed)) {
        return l;
    }
    detected()
}

/// A kernel compiled once per [`Level`] and dispatched by [`level`]: `multiversioned! {
/// fn name<'a>(arg: Type, …) -> Ret { body } }` (plain `ident: Type` arguments, lifetime
/// parameters only). The body is compiled into each clone, with the helpers it calls
/// inlined there when they are `#[inline(always)]`.
macro_rules! multiversioned {
    (
        $(#[$attr:meta])*
        $vis:vis fn $name:ident $(<$($lt:lifetime),+>)? ( $($arg:ident : $ty:ty),* $(,)? ) $(-> $ret:ty)? $body:block
    ) => {
        $(#[$attr])*
        $vis fn $name $(<$($lt),+>)? ( $($arg : $ty),* ) $(-> $ret)? {
            #[cfg(target_arch = "x86_64")]
            #[allow(clippy::too_many_arguments)]
            #[target_feature(enable = "avx512f,avx512vl")]
            unsafe fn avx512 $(<$($lt),+>)? ( $($arg : $ty),* ) $(-> $ret)? $body
            #[cfg(target_arch = "x86_64")]
            #[allow(clippy::too_many_arguments)]
            #[target_feature(enable = "avx2,fma")]
            unsafe fn avx2_fma $(<$($lt),+>)? ( $($arg : $ty),* ) $(-> $ret)? $body
            #[allow(clippy::too_many_arguments)]
            fn scalar $(<$($lt),+>)? ( $($arg : $ty),* ) $(-> $ret)? $body
            let level = $crate::simd::level();
            #[cfg(test)]
            $crate::simd::testing::ran(level);
            match level {
                // SAFETY: `level` is at most the detected level (tests force only supported
                // ones), so the CPU has these features.
                #[cfg(target_arch = "x86_64")]
                $crate::simd::Level::Avx512 => unsafe { avx512($($arg),*) },
                // SAFETY: as above.
                #[cfg(target_arch = "x86_64")]
                $crate::simd::Level::Avx2Fma => unsafe { avx2_fma($($arg),*) },
                #[allow(unreachable_patterns)]
                _ => scalar($($arg),*),
            }
        }
    };
}
pub(crate) use multiversioned;

#[cfg(test)]
pub(crate) mod testing {
    use super::*;
    use std::sync::atomic::AtomicU64;
    use std::sync::Mutex;

    /// The forced level (0: none).
    pub(crate) static FORCED: AtomicU8 = AtomicU8::new(0);
    /// Multiversioned calls per level (index `Level as usize`).
    static RAN: [AtomicU64; 4] = [AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0)];

    /// Every level this CPU can run, from the baseline up.
    pub(crate) fn supported() -> Vec<Level> {
        [Level::Scalar, Level::Avx2Fma, Level::Avx512].into_iter().filter(|&l| l <= detected()).collect()
    }

    pub(crate) fn ran(level: Level) {
        RAN[level as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// Unforces on drop, also when the check panics.
    struct Unforce;
    impl Drop for Unforce {
        fn drop(&mut self) {
            FORCED.store(0, Ordering::Relaxed);
        }
    }

    /// Runs `check` once under every level this CPU supports (the baseline first), and
    /// asserts that each run called some multiversioned kernel at that level. Calls are
    /// serialised; a test running beside one meanwhile runs at the forced level, which
    /// the CPU supports.
    pub(crate) fn for_each_level(mut check: impl FnMut(Level)) {
        static ONE: Mutex<()> = Mutex::new(());
        let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
        for level in supported() {
            let _unforce = Unforce;
            FORCED.store(level as u8, Ordering::Relaxed);
            let before = RAN[level as usize].load(Ordering::Relaxed);
            check(level);
            assert!(RAN[level as usize].load(Ordering::Relaxed) > before, "the check ran no multiversioned kernel at {level:?}");
        }
    }

    multiversioned! {
        fn which() -> Level {
            level()
        }
    }

    #[test]
    fn every_supported_level_runs_its_own_clone() {
        let mut seen = Vec::new();
        for_each_level(|l| {
            assert_eq!(which(), l);
            seen.push(l);
        });
        assert_eq!(seen, supported());
        assert_eq!(seen[0], Level::Scalar);
        assert_eq!(*seen.last().unwrap(), detected());
        #[cfg(target_arch = "x86_64")]
        if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") {
            assert!(seen.contains(&Level::Avx2Fma), "{seen:?}");
        }
    }
}
