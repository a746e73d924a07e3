//! Training data: a sliding window of recent shards, split by game into training and
//! validation, sampled without replacement under a cap on uses per sample, turned into
//! dense batches (with the left–right mirror where the variant allows it).

use encoding::{ActionSpace, InputPlanes, ACTION_VERSION, PLANES_VERSION};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use records::{read_shard, Record};
use rules::{Position, Variant};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One position of the window with where it came from.
#[derive(Clone, Debug)]
pub struct Sample {
    pub shard: usize,
    pub index: usize,
    /// The generation its shard's header names (0: the teacher's games, in a run with a teacher stage).
    pub generation: u32,
    pub record: Record,
}

/// The records of a set of shards. Shards that cannot be read are skipped and reported,
/// never fatal: one corrupt file loses only itself.
#[derive(Debug, Default)]
pub struct Window {
    pub shards: Vec<PathBuf>,
    /// Records in each shard (a shard is one game), aligned with `shards`.
    pub shard_records: Vec<usize>,
    pub train: Vec<Sample>,
    pub validation: Vec<Sample>,
    pub skipped: Vec<String>,
}

/// Whether a game belongs to the held-out validation set (a fixed hash of its id).
pub fn is_validation_game(game_id: u64, fraction: f32) -> bool {
    let h = game_id.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(17).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    ((h >> 40) as f64 / (1u64 << 24) as f64) < fraction as f64
}

impl Window {
    /// Loads `shards`, keeping those of `variant` whose encoding versions match and whose
    /// every record fits them ([`check_record`]); the others are skipped, saying why.
    pub fn load(variant: &'static Variant, shards: &[PathBuf], validation_fraction: f32) -> Window {
        Window::load_looking_ahead(variant, shards, validation_fraction, 0)
    }

    /// As [`Window::load`], with each self-play record's search value replaced by the one
    /// `value_horizon` plies later in its game ([`look_ahead`]; 0 keeps the record's own).
    /// The teacher's games (generation 0) keep theirs: the teacher's share is its own.
    pub(crate) fn load_looking_ahead(variant: &'static Variant, shards: &[PathBuf], validation_fraction: f32, value_horizon: u32) -> Window {
        let actions = ActionSpace::new(variant);
        let mut w = Window::default();
        for path in shards {
            match read_shard(path) {
                Err(e) => {
                    tracing::warn!("skipping shard: {e}");
                    w.skipped.push(e.to_string());
                }
                Ok(s) if s.header.variant != variant.name || s.header.options != variant.options => {
                    w.skipped.push(format!("{}: variant {} {:?} is not this run's", path.display(), s.header.variant, s.header.options));
                }
                Ok(s) if s.header.planes_version != PLANES_VERSION || s.header.action_version != ACTION_VERSION => {
                    w.skipped.push(format!(
                        "{}: encoding versions planes {} / actions {}, this build uses {PLANES_VERSION} / {ACTION_VERSION}",
                        path.display(),
                        s.header.planes_version,
                        s.header.action_version
                    ));
                }
                Ok(mut s) => {
                    if let Some((i, problem)) = s.records.iter().enumerate().find_map(|(i, r)| check_record(variant, &actions, r).err().map(|p| (i, p))) {
                        w.skipped.push(format!("{}: record {i}: {problem}", path.display()));
                        continue;
                    }
                    if value_horizon > 0 && s.header.generation > 0 {
                        look_ahead(&mut s.records, value_horizon);
                    }
                    let shard = w.shards.len();
                    w.shards.push(path.clone());
                    w.shard_records.push(s.records.len());
                    let generation = s.header.generation;
                    for (index, record) in s.records.into_iter().enumerate() {
                        let sample = Sample { shard, index, generation, record };
                        if is_validation_game(sample.record.game_id, validation_fraction) {
                            w.validation.push(sample);
                        } else {
                            w.train.push(sample);
                        }
                    }
                }
            }
        }
        w
    }
}

/// Replaces each record's search value by the search's value `horizon` plies later in
/// the same game (one shard, records in ply order), for the record's own side to move, or
/// by the record's game result where the game ends within `horizon` plies: the n-step
/// target of temporal-difference learning (Sutton & Barto, "Reinforcement Learning", 2nd
/// ed., §7.1), bootstrapped from the search's root value as MuZero's value target is
/// (Schrittwieser et al., Nature 588, 2020, n = 10). A later search sees the position
/// closer to its end than this one, and it is less correlated with the network's own
/// guess here than the root value of this position's search.
fn look_ahead(records: &mut [Record], horizon: u32) {
    let side = |r: &Record| r.sfen.split(' ').nth(1).map(str::to_owned);
    let sides: Vec<Option<String>> = records.iter().map(side).collect();
    let values: Vec<f32> = records.iter().map(|r| r.search_value).collect();
    for i in 0..records.len() {
        let target_ply = records[i].ply as u32 + horizon;
        // Records are in ply order; the first at or after the target ply.
        let later = (i + 1..records.len()).find(|&j| records[j].ply as u32 >= target_ply);
        records[i].search_value = match later {
            Some(j) if sides[j].is_some() && sides[j] == sides[i] => values[j],
            Some(j) if sides[j].is_some() && sides[i].is_some() => -values[j],
            Some(_) => records[i].search_value,
            None => records[i].result as f32,
        };
    }
}

/// Whether a record can become a training row for `variant`: its SFEN is a position of
/// the variant, its policy target is a distribution over that position's legal moves, its
/// result is a win, draw or loss, and its counters are consistent. A shard written by
/// another build or damaged behind a valid checksum is refused here, not at a panic in
/// the batcher.
pub fn check_record(variant: &'static Variant, actions: &ActionSpace, r: &Record) -> Result<(), String> {
    let pos = Position::from_sfen(variant, &r.sfen).map_err(|e| format!("SFEN {:?}: {e}", r.sfen))?;
    if !(-1..=1).contains(&r.result) {
        return Err(format!("result {} is not -1, 0 or 1", r.result));
    }
    if r.repetitions == 0 || r.ply > r.max_plies && r.max_plies > 0 {
        return Err(format!("repetitions {} / ply {} of max {} are inconsistent", r.repetitions, r.ply, r.max_plies));
    }
    if !r.policy.is_empty() {
        let legal = actions.legal_indices(&pos);
        let mut total = 0.0f64;
        for &(i, p) in &r.policy {
            if !legal.contains(&(i as usize)) {
                return Err(format!("policy index {i} is not a legal move of the position"));
            }
            if !(p.is_finite() && p >= 0.0) {
                return Err(format!("policy probability {p} is not a probability"));
            }
            total += p as f64;
        }
        if (total - 1.0).abs() > 1e-3 {
            return Err(format!("policy sums to {total}, not 1"));
        }
    }
    Ok(())
}

/// How many times each training sample has been used, by shard file name.
pub type UseCounts = BTreeMap<String, Vec<u8>>;

pub fn shard_key(path: &Path) -> String {
    // Parent directory (generation) and file name: unique within a run.
    let parent = path.parent().and_then(|p| p.file_name()).map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    format!("{parent}/{}", path.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default())
}

/// The order in which one generation's training visits samples: successive seeded
/// shuffles of the window (passes), each pass holding the samples still under `max_uses`
/// counting the earlier passes, until `wanted` entries are found or every sample is at
/// the cap. Deterministic in (seed, generation), so a resumed run replays exactly the
/// order an uninterrupted one would.
///
/// With `weights` (one per training sample, mean about 1), a pass holds each sample
/// ⌊w⌋ times and once more with probability w − ⌊w⌋, within its uses left: sampling in
/// proportion to the weight, as KataGo writes each row of its training data; there are
/// at most `max_uses` passes, so a sample of weight below 1 may end under its cap.
pub fn epoch_order(window: &Window, uses: &UseCounts, max_uses: u8, seed: u64, generation: u32, wanted: usize, weights: Option<&[f32]>) -> Vec<usize> {
    let all: Vec<usize> = (0..window.train.len()).collect();
    passes(window, &all, uses, max_uses, &mut order_rng(seed, generation, 0), wanted, weights)
}

/// As [`epoch_order`] for `steps` batches of `batch` samples, each batch holding
/// `round(share * batch)` of the teacher's positions (generation 0) and the rest from
/// the other generations, each part under its own passes. Fewer batches where either
/// part runs out of uses; the plain order where the window lacks one of the parts.
#[allow(clippy::too_many_arguments)]
pub fn mixed_epoch_order(
    window: &Window,
    uses: &UseCounts,
    max_uses: u8,
    seed: u64,
    generation: u32,
    batch: usize,
    steps: usize,
    share: f32,
    weights: Option<&[f32]>,
) -> Vec<usize> {
    let (teacher, own): (Vec<usize>, Vec<usize>) = (0..window.train.len()).partition(|&i| window.train[i].generation == 0);
    if teacher.is_empty() || own.is_empty() {
        return epoch_order(window, uses, max_uses, seed, generation, steps * batch, weights);
    }
    let from_teacher = ((share.clamp(0.0, 1.0) * batch as f32).round() as usize).min(batch);
    let from_own = batch - from_teacher;
    let t = passes(window, &teacher, uses, max_uses, &mut order_rng(seed, generation, 1), steps * from_teacher, weights);
    let o = passes(window, &own, uses, max_uses, &mut order_rng(seed, generation, 2), steps * from_own, weights);
    let fits = |len: usize, per: usize| len.checked_div(per).unwrap_or(steps);
    let steps = steps.min(fits(t.len(), from_teacher)).min(fits(o.len(), from_own));
    let mut order = Vec::with_capacity(steps * batch);
    for s in 0..steps {
        order.extend_from_slice(&t[s * from_teacher..(s + 1) * from_teacher]);
        order.extend_from_slice(&o[s * from_own..(s + 1) * from_own]);
    }
    order
}

fn order_rng(seed: u64, generation: u32, part: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed ^ (generation as u64).wrapping_mul(0xA24B_AED4_963E_E407) ^ part.wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// Successive shuffles of `candidates` (indices into the window's training samples),
/// each holding those still under `max_uses` counting the earlier passes (as often as
/// its weight says, where weights are given: [`epoch_order`]).
fn passes(window: &Window, candidates: &[usize], uses: &UseCounts, max_uses: u8, rng: &mut ChaCha8Rng, wanted: usize, weights: Option<&[f32]>) -> Vec<usize> {
    let mut used: Vec<u32> = candidates
        .iter()
        .map(|&i| {
            let s = &window.train[i];
            uses.get(&shard_key(&window.shards[s.shard])).and_then(|v| v.get(s.index)).copied().unwrap_or(0) as u32
        })
        .collect();
    let max_uses = max_uses as u32;
    let mut order = Vec::new();
    for _ in 0..max_uses {
        if order.len() >= wanted {
            break;
        }
        let mut this = Vec::new();
        for (k, &i) in candidates.iter().enumerate() {
            let copies = match weights {
                None => 1,
                Some(w) => {
                    let w = w[i].max(0.0);
                    w.floor() as u32 + u32::from(rng.random::<f32>() < w.fract())
                }
            };
            let copies = copies.min(max_uses.saturating_sub(used[k]));
            used[k] += copies;
            this.extend(std::iter::repeat_n(i, copies as usize));
        }
        if this.is_empty() && used.iter().all(|&u| u >= max_uses) {
            break;
        }
        this.shuffle(rng);
        order.extend(this);
    }
    order.truncate(wanted);
    order
}

/// Counts one use of each sample in `batch`.
pub fn record_uses(window: &Window, uses: &mut UseCounts, batch: &[usize]) {
    for &i in batch {
        let s = &window.train[i];
        let v = uses.entry(shard_key(&window.shards[s.shard])).or_default();
        if v.len() <= s.index {
            v.resize(s.index + 1, 0);
        }
        v[s.index] = v[s.index].saturating_add(1);
    }
}

/// Dense tensors of a batch, row-major, as the network's training step takes them.
#[derive(Clone, Debug, Default)]
pub struct DenseBatch {
    pub batch: usize,
    /// `[B, C, H, W]`
    pub input: Vec<f32>,
    /// `[B, A*H*W]`, rows sum to 1 (or 0 for moves without a full search)
    pub policy: Vec<f32>,
    /// `[B, A*H*W]`, 1 legal, 0 illegal
    pub legal: Vec<f32>,
    /// `[B, 3]`: win, draw, loss for the side to move
    pub wdl: Vec<f32>,
}

/// Builds dense batches from records.
pub struct Batcher {
    variant: &'static Variant,
    planes: InputPlanes,
    actions: ActionSpace,
    mirror: bool,
    search_value_share: f32,
    draw_rate: f32,
}

impl Batcher {
    pub fn new(variant: &'static Variant, mirror: bool) -> Batcher {
        Batcher {
            variant,
            planes: InputPlanes::new(variant),
            actions: ActionSpace::new(variant),
            mirror: mirror && variant.mirror_symmetric(),
            search_value_share: 0.0,
            draw_rate: 0.0,
        }
    }

    /// Value targets that mix the search's root value into the game result: with share
    /// s, root value q and draw rate d, the target is (1 − s)·onehot(result) +
    /// s·((1 − d)(1 + q)/2, d, (1 − d)(1 − q)/2) — a distribution whose expectation W − L
    /// is (1 − s)·z + s·(1 − d)·q. (The z/q average of "Lessons from AlphaZero, part 4",
    /// Oracle 2018.)
    pub fn with_search_value_share(mut self, share: f32) -> Batcher {
        self.search_value_share = share.clamp(0.0, 1.0);
        self
    }

    /// The draw rate d above: a score says who is ahead, not how likely a draw is, so its
    /// share of the target keeps the window's base rate of drawn positions. With d = 0 a
    /// network taught mostly by scores predicts almost no draws and pays −log of that
    /// on every position of a drawn game (the teacher stage's generation 0 did: its
    /// held-out value loss was above the constant prediction's).
    pub fn with_draw_rate(mut self, rate: f32) -> Batcher {
        self.draw_rate = if rate.is_finite() { rate.clamp(0.0, 1.0) } else { 0.0 };
        self
    }

    pub fn planes(&self) -> &InputPlanes {
        &self.planes
    }
    pub fn actions(&self) -> &ActionSpace {
        &self.actions
    }

    /// Dense batch of `records`; each is mirrored with probability ½ when allowed.
    pub fn build(&self, records: &[&Record], rng: &mut impl Rng) -> DenseBatch {
        let shared: Vec<(&Record, f32)> = records.iter().map(|&r| (r, self.search_value_share)).collect();
        self.build_with_shares(&shared, rng)
    }

    /// As [`Batcher::build`], each record with its own share of the search value in its
    /// value target (the teacher's positions keep the teacher's share in later
    /// generations, whose own share is the training config's).
    pub fn build_with_shares(&self, records: &[(&Record, f32)], rng: &mut impl Rng) -> DenseBatch {
        let (c, a) = (self.planes.size(), self.actions.size());
        let b = records.len();
        let mut out = DenseBatch { batch: b, input: vec![0.0; b * c], policy: vec![0.0; b * a], legal: vec![0.0; b * a], wdl: vec![0.0; b * 3] };
        let mut plain = vec![0.0; c];
        for (row, &(r, share)) in records.iter().enumerate() {
            // Window::load refused every record that `check_record` rejects.
            let pos = Position::from_sfen(self.variant, &r.sfen).expect("records are checked on load");
            let flip = self.mirror && rng.random::<bool>();
            let input = &mut out.input[row * c..(row + 1) * c];
            if flip {
                self.planes.encode(&pos, r.repetitions as usize, r.ply as usize, r.max_plies as u32, &mut plain);
                self.planes.mirror(&plain, input);
            } else {
                self.planes.encode(&pos, r.repetitions as usize, r.ply as usize, r.max_plies as u32, input);
            }
            let map = |i: usize| if flip { self.actions.mirror(i) } else { i };
            for i in self.actions.legal_indices(&pos) {
                out.legal[row * a + map(i)] = 1.0;
            }
            for &(i, p) in &r.policy {
                out.policy[row * a + map(i as usize)] = p;
            }
            let w = match r.result {
                1 => 0,
                0 => 1,
                _ => 2,
            };
            let s = share.clamp(0.0, 1.0);
            let q = if r.search_value.is_finite() { r.search_value.clamp(-1.0, 1.0) } else { 0.0 };
            let d = self.draw_rate;
            let wdl = &mut out.wdl[row * 3..row * 3 + 3];
            wdl[w] = 1.0 - s;
            wdl[0] += s * (1.0 - d) * (1.0 + q) / 2.0;
            wdl[1] += s * d;
            wdl[2] += s * (1.0 - d) * (1.0 - q) / 2.0;
        }
        out
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A sample of `generation` whose record no test here reads.
    pub(crate) fn blank_sample(shard: usize, index: usize, generation: u32) -> Sample {
        let record = Record {
            sfen: String::new(),
            repetitions: 1,
            ply: 0,
            max_plies: 0,
            policy: Vec::new(),
            full_search: false,
            search_value: 0.0,
            result: 0,
            start: String::new(),
            game_id: 0,
        };
        Sample { shard, index, generation, record }
    }

    /// Records of one game whose side to move alternates from Black, with the given plies,
    /// search values and (alternating) results.
    fn game(plies: &[u16], values: &[f32]) -> Vec<Record> {
        plies
            .iter()
            .zip(values)
            .map(|(&ply, &v)| {
                let side = if ply % 2 == 0 { "b" } else { "w" };
                Record {
                    sfen: format!("9/9/9/9/9/9/9/9/9 {side} - 1"),
                    ply,
                    search_value: v,
                    result: if ply % 2 == 0 { 1 } else { -1 },
                    ..blank_sample(0, 0, 1).record
                }
            })
            .collect()
    }

    #[test]
    fn looking_ahead_takes_the_later_search_value_for_the_own_side_or_the_result() {
        let values = [0.1, 0.2, 0.3, 0.4, 0.5];
        let mut two = game(&[0, 1, 2, 3, 4], &values);
        look_ahead(&mut two, 2);
        // Two plies on: the same side to move, its value as it is; past the end, the result.
        assert_eq!(two.iter().map(|r| r.search_value).collect::<Vec<_>>(), [0.3, 0.4, 0.5, -1.0, 1.0]);
        let mut one = game(&[0, 1, 2, 3, 4], &values);
        look_ahead(&mut one, 1);
        // One ply on: the opponent's value, negated.
        assert_eq!(one.iter().map(|r| r.search_value).collect::<Vec<_>>(), [-0.2, -0.3, -0.4, -0.5, 1.0]);
        // A missing ply: the first record at or after the target, signed by its side.
        let mut gap = game(&[0, 1, 3, 4], &[0.1, 0.2, 0.4, 0.5]);
        look_ahead(&mut gap, 2);
        assert_eq!(gap.iter().map(|r| r.search_value).collect::<Vec<_>>(), [-0.4, 0.4, -1.0, 1.0]);
    }

    /// A window of `teacher` positions of generation 0 (one shard) and `own` of
    /// generation 1 (another).
    fn window(teacher: usize, own: usize) -> Window {
        let mut w = Window {
            shards: vec![PathBuf::from("gen-0000/game-00000000.shard"), PathBuf::from("gen-0001/local/game-01000000.shard")],
            shard_records: vec![teacher, own],
            ..Window::default()
        };
        for (shard, n, generation) in [(0, teacher, 0), (1, own, 1)] {
            w.train.extend((0..n).map(|index| blank_sample(shard, index, generation)));
        }
        w
    }

    #[test]
    fn each_batch_holds_the_teachers_share() {
        let w = window(300, 100);
        let order = mixed_epoch_order(&w, &UseCounts::new(), 4, 7, 3, 8, 10, 0.25, None);
        assert_eq!(order.len(), 80);
        for batch in order.chunks(8) {
            assert_eq!(batch.iter().filter(|&&i| w.train[i].generation == 0).count(), 2, "{batch:?}");
        }
        // Within one pass no position comes twice, and the order is the same on a rerun.
        let mut seen = order.clone();
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), 80);
        assert_eq!(order, mixed_epoch_order(&w, &UseCounts::new(), 4, 7, 3, 8, 10, 0.25, None));
    }

    #[test]
    fn fewer_batches_when_a_part_runs_out_of_uses() {
        let w = window(300, 100);
        // Self-play's 100 positions, each usable once, fill 16 batches of 6.
        let order = mixed_epoch_order(&w, &UseCounts::new(), 1, 7, 3, 8, 50, 0.25, None);
        assert_eq!(order.len(), 16 * 8);
        // Those already used up by earlier generations are not drawn.
        let mut uses = UseCounts::new();
        uses.insert(shard_key(&w.shards[1]), vec![1; 40]);
        let order = mixed_epoch_order(&w, &uses, 1, 7, 3, 8, 50, 0.25, None);
        assert_eq!(order.len(), 10 * 8);
        assert!(order.iter().all(|&i| w.train[i].generation == 0 || w.train[i].index >= 40));
    }

    /// A weighted pass holds each sample ⌊w⌋ times and once more with probability
    /// w − ⌊w⌋, never past the use cap: over 2,000 seeds a sample of weight 0.5 is in a
    /// one-use order about half the time (binomial, sd 0.011), weight 0 never, and weight 3
    /// as often as its uses left allow.
    #[test]
    fn a_weighted_order_draws_each_sample_in_proportion_to_its_weight() {
        let w = window(0, 3);
        let weights = [0.0f32, 0.5, 3.0];
        let count = |order: &[usize], i: usize| order.iter().filter(|&&j| j == i).count();
        let mut with_half = 0usize;
        for seed in 0..2000 {
            let one_use = epoch_order(&w, &UseCounts::new(), 1, seed, 1, 100, Some(&weights));
            assert_eq!((count(&one_use, 0), count(&one_use, 2)), (0, 1), "{one_use:?}");
            with_half += count(&one_use, 1);
        }
        let share = with_half as f64 / 2000.0;
        assert!((share - 0.5).abs() < 0.05, "{share}");
        let three_uses = epoch_order(&w, &UseCounts::new(), 3, 7, 1, 100, Some(&weights));
        assert_eq!((count(&three_uses, 0), count(&three_uses, 2)), (0, 3), "{three_uses:?}");
        assert!(count(&three_uses, 1) <= 3);
        // Uses already spent count against the cap.
        let mut uses = UseCounts::new();
        uses.insert(shard_key(&w.shards[1]), vec![0, 0, 2]);
        assert_eq!(count(&epoch_order(&w, &uses, 3, 7, 1, 100, Some(&weights)), 2), 1);
    }

    #[test]
    fn a_window_of_one_part_is_ordered_as_before() {
        let w = window(0, 100);
        assert_eq!(mixed_epoch_order(&w, &UseCounts::new(), 2, 7, 3, 8, 10, 0.5, None), epoch_order(&w, &UseCounts::new(), 2, 7, 3, 80, None));
        let w = window(100, 0);
        assert_eq!(mixed_epoch_order(&w, &UseCounts::new(), 2, 7, 3, 8, 10, 0.5, None), epoch_order(&w, &UseCounts::new(), 2, 7, 3, 80, None));
    }
}
