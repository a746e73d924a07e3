//! A mutation soak of every parser of untrusted input: each [`Target`] starts from valid
//! seed inputs (start positions, shipped variant files and configs, a real shard, model and
//! checkpoint), mutates them (bit flips, extreme numbers, deletions, duplications,
//! splices, truncations) and feeds the result to the parser, which must answer with a value
//! or an error — never a panic. The binary (`soak`) adds what a test cannot: an allocation
//! guard (no input may make a parser allocate gigabytes) and a watchdog (no input may hang).
//!
//! It is the "equivalent soak" the hardening issue allows instead of cargo-fuzz: blind
//! (no coverage feedback), but structure-aware where checksums would stop blind mutation
//! at the door — shard, model and checkpoint targets re-frame the mutated bytes with valid
//! lengths and checksums so that they reach the decoders behind them.

use rand::{Rng, RngCore};
use std::path::{Path, PathBuf};

mod targets;
pub use targets::targets;

/// Runs a parser on one input and says whether it accepted it.
pub type Parse = Box<dyn Fn(&[u8]) -> bool>;

/// One parser under test.
pub struct Target {
    pub name: &'static str,
    /// What it checks, for the report.
    pub what: &'static str,
    /// Valid inputs to mutate.
    pub corpus: Vec<Vec<u8>>,
    /// Runs the parser on one input and says whether it accepted it; panics are the
    /// failures looked for. It may also assert properties of what it parsed (e.g. that an
    /// SFEN written back reads as the same position).
    pub run: Parse,
}

/// Totals of a soak of one target.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Report {
    pub executions: u64,
    /// Inputs the parser accepted (the rest were errors, as they should be when invalid).
    pub accepted: u64,
    /// Inputs that panicked, with the panic message.
    pub failures: Vec<(Vec<u8>, String)>,
}

/// Values a mutation writes over a number in text: the boundaries parsers get wrong.
const EXTREME_NUMBERS: &[&str] = &[
    "0",
    "-1",
    "1",
    "255",
    "256",
    "65535",
    "65536",
    "4294967295",
    "4294967296",
    "18446744073709551615",
    "99999999999999999999999",
    "-9223372036854775808",
    "1e309",
    "NaN",
    "-0",
    "0.5",
];
/// Bytes a mutation writes: zero, the sign bits, the ASCII that separates fields.
const INTERESTING_BYTES: &[u8] = &[0, 1, 0x7f, 0x80, 0xff, b' ', b'/', b'+', b'*', b'=', b'"', b'[', b']', b'\n', b'#', b',', b'-', b'9'];

/// One mutant of a corpus entry: 1–4 random edits.
pub fn mutate(rng: &mut impl RngCore, corpus: &[Vec<u8>], max_len: usize) -> Vec<u8> {
    let mut data = corpus[rng.random_range(0..corpus.len())].clone();
    for _ in 0..rng.random_range(1..=4) {
        let len = data.len();
        match rng.random_range(0..10) {
            0 if len > 0 => {
                let i = rng.random_range(0..len);
                data[i] ^= 1 << rng.random_range(0..8);
            }
            1 if len > 0 => {
                let i = rng.random_range(0..len);
                data[i] = rng.random();
            }
            2 if len > 0 => {
                let i = rng.random_range(0..len);
                data[i] = INTERESTING_BYTES[rng.random_range(0..INTERESTING_BYTES.len())];
            }
            3 if len > 0 => {
                // Delete a range.
                let a = rng.random_range(0..len);
                let b = (a + rng.random_range(1..=16.min(len - a))).min(len);
                data.drain(a..b);
            }
            4 if len > 0 => {
                // Duplicate a range in place.
                let a = rng.random_range(0..len);
                let b = (a + rng.random_range(1..=32)).min(len);
                let chunk = data[a..b].to_vec();
                let at = rng.random_range(0..=data.len());
                data.splice(at..at, chunk);
            }
            5 => {
                let at = rng.random_range(0..=len);
                let n = rng.random_range(1..=8);
                let bytes: Vec<u8> = (0..n).map(|_| rng.random()).collect();
                data.splice(at..at, bytes);
            }
            6 => {
                // Splice: a piece of another entry over this one.
                let other = &corpus[rng.random_range(0..corpus.len())];
                if !other.is_empty() && len > 0 {
                    let a = rng.random_range(0..other.len());
                    let b = (a + rng.random_range(1..=64)).min(other.len());
                    let at = rng.random_range(0..len);
                    let end = (at + (b - a)).min(len);
                    data.splice(at..end, other[a..b].iter().copied());
                }
            }
            7 if len > 0 => {
                data.truncate(rng.random_range(0..len));
            }
            8 => replace_number(rng, &mut data),
            _ if len >= 4 => {
                // Overwrite a 4- or 8-byte little-endian field with a boundary value.
                let v: u64 = [0, 1, u32::MAX as u64, u32::MAX as u64 + 1, u64::MAX, 1 << 40][rng.random_range(0..6)];
                let width = if len >= 8 && rng.random() { 8 } else { 4 };
                let at = rng.random_range(0..=len - width);
                data[at..at + width].copy_from_slice(&v.to_le_bytes()[..width]);
            }
            _ => {}
        }
    }
    data.truncate(max_len);
    data
}

/// Replaces one run of ASCII digits with an extreme number.
fn replace_number(rng: &mut impl RngCore, data: &mut Vec<u8>) {
    let starts: Vec<usize> = (0..data.len()).filter(|&i| data[i].is_ascii_digit() && (i == 0 || !data[i - 1].is_ascii_digit())).collect();
    if starts.is_empty() {
        return;
    }
    let a = starts[rng.random_range(0..starts.len())];
    let b = (a..data.len()).find(|&i| !data[i].is_ascii_digit()).unwrap_or(data.len());
    let with = EXTREME_NUMBERS[rng.random_range(0..EXTREME_NUMBERS.len())].as_bytes();
    data.splice(a..b, with.iter().copied());
}

/// Soaks `target` until `keep_going(executions)` says stop, with inputs from `seed`. Panics
/// are caught and reported (with the input); `on_input` sees every input before it runs
/// (the binary keeps it for its allocation guard and watchdog).
pub fn soak(target: &Target, seed: u64, mut keep_going: impl FnMut(u64) -> bool, mut on_input: impl FnMut(&[u8])) -> Report {
    let mut rng = rng_for(seed, target.name);
    let max_len = target.corpus.iter().map(Vec::len).max().unwrap_or(0) * 2 + 64;
    let mut report = Report::default();
    // Seeds first, as they are: they must parse.
    let mut seeds = target.corpus.iter();
    while keep_going(report.executions) {
        let input = match seeds.next() {
            Some(s) => s.clone(),
            None => mutate(&mut rng, &target.corpus, max_len),
        };
        on_input(&input);
        report.executions += 1;
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (target.run)(&input))) {
            Ok(accepted) => report.accepted += accepted as u64,
            Err(payload) => {
                let message = payload.downcast_ref::<String>().cloned().or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();
                report.failures.push((input, message));
            }
        }
    }
    report
}

/// The target's own generator: the same seed gives each target its own stream.
fn rng_for(seed: u64, name: &str) -> rand_chacha::ChaCha8Rng {
    use rand::SeedableRng;
    let salt = name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3));
    rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ salt)
}

/// A fresh scratch directory for targets that parse files.
pub fn scratch_dir(root: &Path, name: &str) -> PathBuf {
    let dir = root.join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}
