//! One generation of training, resumable at any checkpoint.

use crate::calibration::{calibrate, Calibration, Prediction};
use crate::checkpoint::{Checkpoint, CheckpointError};
use crate::data::{epoch_order, mixed_epoch_order, record_uses, shard_key, Batcher, Sample, UseCounts, Window};
use crate::TrainerConfig;
use model::{save_model_tagged, GameTag, LossStats, ModelIoError, Net, NetConfig, TrainBatch, TrainConfig, TrainStep};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rules::Variant;
use std::path::{Path, PathBuf};

/// Called after every optimiser step with (step, steps, loss).
pub type OnStep<'a> = dyn Fn(u32, u32, &StepLoss) + Sync + 'a;

/// What one call trains.
pub struct TrainJob<'a> {
    pub variant: &'static Variant,
    pub config: TrainerConfig,
    /// Network shape for a fresh start (a checkpoint's own config wins).
    pub net: NetConfig,
    pub generation: u32,
    /// Shards of the window, oldest first.
    pub shards: Vec<PathBuf>,
    pub checkpoint: PathBuf,
    /// Where the trained model is exported for self-play.
    pub export_dir: PathBuf,
    pub seed: u64,
    /// The value target's share of the search value for the teacher's positions (shards
    /// of generation 0) in every generation that trains on them: the teacher's score is
    /// the cleaner target, and the window's own share is for self-play values. `None`:
    /// those positions are treated as any other.
    pub teacher_value_share: Option<f32>,
    /// The share of each batch drawn from the teacher's positions, where the window holds
    /// both them and self-play's; `None`: every position alike.
    pub teacher_batch_share: Option<f32>,
    /// Called after every step with (step, steps, loss).
    pub on_step: Option<&'a OnStep<'a>>,
    /// Stop (as if killed) once this many steps of the generation are done, without
    /// writing a checkpoint a real kill would not write; for tests of resumption.
    pub stop_after: Option<u32>,
}

#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StepLoss {
    pub step: u64,
    pub total: f32,
    pub policy: f32,
    pub value: f32,
}

#[derive(Clone, Debug)]
pub struct GenerationReport {
    pub generation: u32,
    /// Steps run by this call (0 if the generation was already trained).
    pub steps: u32,
    /// Seconds spent training this generation, over every call that worked on it.
    pub seconds: f64,
    pub train_samples: usize,
    pub validation_samples: usize,
    pub validation: Option<LossStats>,
    /// Every step of the generation so far, including those of earlier (killed) calls.
    pub losses: Vec<StepLoss>,
    /// Shards that could not be used, with why.
    pub skipped: Vec<String>,
    /// False when `stop_after` interrupted the generation.
    pub complete: bool,
    /// The value head on the held-out games (with `validation`).
    pub calibration: Option<Calibration>,
    /// How often the window's training positions have been trained on.
    pub uses: UseSummary,
}

/// Uses of the window's training positions after this generation.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct UseSummary {
    pub positions: usize,
    /// Mean times a position of the window has been trained on.
    pub mean_uses: f64,
    /// Share of the window's positions at the `max_sample_uses` cap.
    pub at_cap: f64,
    /// Samples drawn by this generation's steps (steps × batch size).
    pub samples_drawn: usize,
}

impl UseSummary {
    fn of(window: &Window, uses: &UseCounts, max_uses: u8, samples_drawn: usize) -> UseSummary {
        let n = window.train.len();
        let counts: Vec<u8> =
            window.train.iter().map(|s| uses.get(&shard_key(&window.shards[s.shard])).and_then(|v| v.get(s.index)).copied().unwrap_or(0)).collect();
        let nf = n.max(1) as f64;
        UseSummary {
            positions: n,
            mean_uses: counts.iter().map(|&c| c as f64).sum::<f64>() / nf,
            at_cap: counts.iter().filter(|&&c| c >= max_uses).count() as f64 / nf,
            samples_drawn,
        }
    }
}

/// Drops the use counts of shards that have left the window: they never come back (the
/// window only slides forward), and kept, they would grow the checkpoint without bound.
pub fn prune_uses(uses: &mut UseCounts, window: &Window) {
    let keep: std::collections::BTreeSet<String> = window.shards.iter().map(|p| shard_key(p)).collect();
    uses.retain(|k, _| keep.contains(k));
}

#[derive(Debug, thiserror::Error)]
pub enum TrainError {
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
    #[error(transparent)]
    Model(#[from] ModelIoError),
    #[error("{0}")]
    Other(String),
}

fn fresh_net(config: &NetConfig, seed: u64, device: &model::Device) -> Result<Net, TrainError> {
    Net::seeded(config, device, seed).map_err(|e| TrainError::Other(e.to_string()))
}

fn train_config(c: &TrainerConfig) -> TrainConfig {
    TrainConfig { learning_rate: c.learning_rate, weight_decay: c.weight_decay, value_weight: c.value_weight }
}

fn batch_rng(seed: u64, generation: u32, step: u32) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed ^ ((generation as u64) << 32 | step as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// Starts a run's training from a trained model: writes a checkpoint of `generation`,
/// done, holding the model's weights (a fresh optimiser and no use counts), unless a
/// checkpoint exists. Generation 0 is a starting model (`--from-model`); a later one
/// is a run's own exported model when its checkpoint is missing. The model must have the
/// run's network shape and play the run's game.
pub fn start_from_model(checkpoint: &Path, model_dir: &Path, generation: u32, variant: &Variant, net: &NetConfig, seed: u64) -> Result<(), TrainError> {
    if Checkpoint::load(checkpoint)?.is_some() {
        return Ok(());
    }
    let loaded = model::load_model(model_dir, &model::cpu_device())?;
    let manifest = model::store::read_manifest(model_dir)?;
    let want = game_tag(variant);
    if manifest.game.as_ref().is_some_and(|g| *g != want) {
        return Err(TrainError::Other(format!("{}: the model plays {:?}, this run {:?}", model_dir.display(), manifest.game, want)));
    }
    if loaded.config() != net {
        return Err(TrainError::Other(format!("{}: the model's network {:?} is not the run's {:?}", model_dir.display(), loaded.config(), net)));
    }
    let c = Checkpoint {
        net: net.clone(),
        generation,
        generation_step: 0,
        total_steps: 0,
        generation_done: true,
        uses_at_generation_start: Default::default(),
        uses: Default::default(),
        seed,
        weights: model::store::weights_to_bytes(&loaded),
        optimizer: Vec::new(),
        generation_losses: Vec::new(),
        generation_seconds: 0.0,
        generation_order: Vec::new(),
        generation_order_key: 0,
    };
    c.save(checkpoint)?;
    Ok(())
}

/// Trains generation `job.generation` from the checkpoint (or from scratch), then
/// validates and exports the model. Safe to call again after a kill: it resumes from
/// the last checkpoint, and does nothing but re-export if the generation is done.
pub fn train_generation(job: &TrainJob) -> Result<GenerationReport, TrainError> {
    let cfg = &job.config;
    // A device this build or machine lacks is refused here, naming it, before any work.
    let device = cfg.device.probe().map_err(|e| TrainError::Other(format!("training.{e}")))?;
    let existing = Checkpoint::load(&job.checkpoint)?;
    let (mut net, mut ckpt) = match existing {
        Some(c) => {
            let net = model::store::net_from_bytes(&c.net, c.weights.clone(), &device, &job.checkpoint)?;
            (net, c)
        }
        None => {
            let net = fresh_net(&job.net, job.seed, &device)?;
            let c = Checkpoint {
                net: job.net.clone(),
                generation: job.generation,
                generation_step: 0,
                total_steps: 0,
                generation_done: false,
                uses_at_generation_start: Default::default(),
                uses: Default::default(),
                seed: job.seed,
                weights: Vec::new(),
                optimizer: Vec::new(),
                generation_losses: Vec::new(),
                generation_seconds: 0.0,
                generation_order: Vec::new(),
                generation_order_key: 0,
            };
            (net, c)
        }
    };
    let mut report = GenerationReport {
        generation: job.generation,
        steps: 0,
        seconds: 0.0,
        train_samples: 0,
        validation_samples: 0,
        validation: None,
        losses: Vec::new(),
        skipped: Vec::new(),
        complete: true,
        calibration: None,
        uses: UseSummary::default(),
    };
    if ckpt.generation > job.generation {
        if !job.export_dir.join(model::store::CONFIG_FILE).exists() {
            save_model_tagged(&net, &job.export_dir, &game_tag(job.variant))?;
        }
        return Ok(report);
    }
    // Trained but perhaps killed before its report was written: no steps remain, but
    // the report (losses, validation, uses) is rebuilt below as the first call made it.
    let already_done = ckpt.generation == job.generation && ckpt.generation_done;
    let mut step = TrainStep::new(train_config(cfg), device.clone());
    if !ckpt.optimizer.is_empty() {
        step.load_optimizer(ckpt.optimizer.clone()).map_err(|e| TrainError::Other(format!("{}: optimizer state: {e}", job.checkpoint.display())))?;
    }
    if ckpt.generation < job.generation {
        // A new generation starts from the previous one's final state.
        ckpt.generation = job.generation;
        ckpt.generation_step = 0;
        ckpt.generation_done = false;
        ckpt.uses_at_generation_start = ckpt.uses.clone();
        ckpt.generation_losses.clear();
        ckpt.generation_seconds = 0.0;
        ckpt.generation_order.clear();
    }
    let started = std::time::Instant::now();
    let earlier_seconds = ckpt.generation_seconds;
    report.losses = ckpt.generation_losses.clone();

    let window = Window::load_looking_ahead(job.variant, &job.shards, cfg.validation_fraction, cfg.value_horizon);
    prune_uses(&mut ckpt.uses_at_generation_start, &window);
    prune_uses(&mut ckpt.uses, &window);
    report.skipped = window.skipped.clone();
    report.train_samples = window.train.len();
    report.validation_samples = window.validation.len();
    let wanted = cfg.steps_per_generation as usize * cfg.batch_size;
    let order_key = order_key(&window, cfg);
    let stored = &ckpt.generation_order;
    let mut new_order = false;
    let order: Vec<usize> = if !stored.is_empty() && ckpt.generation_order_key == order_key {
        stored.iter().map(|&i| i as usize).collect()
    } else {
        let weights = if cfg.policy_surprise_weight > 0.0 && !already_done {
            if ckpt.generation_step > 0 {
                tracing::warn!(
                    generation = job.generation,
                    step = ckpt.generation_step,
                    "the generation's batch order is not in its checkpoint (or its window or settings changed): surprise measured by the half-trained network"
                );
            }
            surprise_weights(job.variant, &net, &window, cfg)
        } else {
            None
        };
        let order = match job.teacher_batch_share {
            Some(share) => mixed_epoch_order(
                &window,
                &ckpt.uses_at_generation_start,
                cfg.max_sample_uses,
                ckpt.seed,
                job.generation,
                cfg.batch_size,
                cfg.steps_per_generation as usize,
                share,
                weights.as_deref(),
            ),
            None => epoch_order(&window, &ckpt.uses_at_generation_start, cfg.max_sample_uses, ckpt.seed, job.generation, wanted, weights.as_deref()),
        };
        ckpt.generation_order = if weights.is_some() { order.iter().map(|&i| i as u32).collect() } else { Vec::new() };
        ckpt.generation_order_key = order_key;
        new_order = weights.is_some();
        order
    };
    let steps = cfg.steps_per_generation.min((order.len() / cfg.batch_size) as u32);
    let draws = window.train.iter().filter(|s| s.record.result == 0).count();
    let batcher =
        Batcher::new(job.variant, cfg.mirror).with_search_value_share(cfg.search_value_share).with_draw_rate(draws as f32 / window.train.len().max(1) as f32);
    tracing::info!(generation = job.generation, steps, samples = window.train.len(), resume_at = ckpt.generation_step, "training");

    let save = |net: &Net, step: &TrainStep, ckpt: &mut Checkpoint, losses: &[StepLoss]| -> Result<(), TrainError> {
        ckpt.generation_losses = losses.to_vec();
        ckpt.generation_seconds = earlier_seconds + started.elapsed().as_secs_f64();
        ckpt.weights = model::store::weights_to_bytes(net);
        ckpt.optimizer = step.optimizer_bytes().map_err(TrainError::Other)?;
        ckpt.save(&job.checkpoint)?;
        Ok(())
    };
    if new_order && ckpt.generation_step == 0 {
        // Kept before the first step: a kill before the first checkpoint would otherwise
        // measure the surprise again, on whatever machine and thread count resume it.
        save(&net, &step, &mut ckpt, &report.losses)?;
    }
    let mut s = ckpt.generation_step;
    while s < steps {
        let idx = &order[s as usize * cfg.batch_size..(s as usize + 1) * cfg.batch_size];
        let records: Vec<_> = idx
            .iter()
            .map(|&i| {
                let sample = &window.train[i];
                (&sample.record, value_share(sample, job.teacher_value_share, cfg.search_value_share))
            })
            .collect();
        let dense = batcher.build_with_shares(&records, &mut batch_rng(ckpt.seed, job.generation, s));
        let batch =
            TrainBatch { batch: dense.batch, input: &dense.input, policy_target: &dense.policy, value_target: &dense.wdl, legal_mask: Some(&dense.legal) };
        step.set_learning_rate(cfg.learning_rate_at(s, steps) * cfg.warmup_factor(ckpt.total_steps));
        let (n, loss) = step.step(net, &batch);
        net = n;
        record_uses(&window, &mut ckpt.uses, idx);
        s += 1;
        ckpt.generation_step = s;
        ckpt.total_steps += 1;
        let l = StepLoss { step: ckpt.total_steps, total: loss.total, policy: loss.policy, value: loss.value };
        report.losses.push(l);
        report.steps += 1;
        if let Some(f) = job.on_step {
            f(s, steps, &l);
        }
        if s % cfg.checkpoint_every == 0 || s == steps {
            save(&net, &step, &mut ckpt, &report.losses)?;
        }
        if job.stop_after.is_some_and(|n| s >= n) && s < steps {
            report.complete = false;
            return Ok(report);
        }
    }

    if let Some((losses, calibration)) = validate(&net, &batcher, &window, cfg) {
        report.validation = Some(losses);
        report.calibration = Some(calibration);
    }
    report.uses = UseSummary::of(&window, &ckpt.uses, cfg.max_sample_uses, steps as usize * cfg.batch_size);
    if already_done {
        report.seconds = ckpt.generation_seconds;
        if !job.export_dir.join(model::store::CONFIG_FILE).exists() {
            save_model_tagged(&net, &job.export_dir, &game_tag(job.variant))?;
        }
        return Ok(report);
    }
    save_model_tagged(&net, &job.export_dir, &game_tag(job.variant))?;
    ckpt.generation_done = true;
    save(&net, &step, &mut ckpt, &report.losses)?;
    report.seconds = ckpt.generation_seconds;
    Ok(report)
}

/// Sampling weights of the window's training samples by policy surprise (KataGo's
/// policy-surprise weighting: Wu, "Other methods implemented in KataGo", KataGo docs,
/// 2020–): each self-play position with a policy target weighs (1 − λ) + λ·KL/mean(KL),
/// KL(target ‖ prior) under `net`, the generation's starting network, so that the positions
/// where the search taught the network most are trained on more often; the others weigh 1.
/// The teacher's positions (generation 0) keep 1: their targets are the teacher's scores,
/// not the search's correction of this network.
fn surprise_weights(variant: &'static Variant, net: &Net, window: &Window, cfg: &TrainerConfig) -> Option<Vec<f32>> {
    let batcher = Batcher::new(variant, false);
    let measured: Vec<usize> = (0..window.train.len()).filter(|&i| window.train[i].generation > 0 && !window.train[i].record.policy.is_empty()).collect();
    let mut kl = Vec::with_capacity(measured.len());
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    for chunk in measured.chunks(cfg.batch_size.max(64)) {
        let records: Vec<_> = chunk.iter().map(|&i| &window.train[i].record).collect();
        let d = batcher.build(&records, &mut rng);
        let batch = TrainBatch { batch: d.batch, input: &d.input, policy_target: &d.policy, value_target: &d.wdl, legal_mask: Some(&d.legal) };
        kl.extend(model::train::eval_policy_kl(net, &batch));
    }
    surprise_from_kl(window.train.len(), &measured, &kl, cfg.policy_surprise_weight)
}

/// The weights of [`surprise_weights`] from the measured samples' KL divergences; `None`
/// where nothing was surprising (no position measured, or every KL 0): uniform sampling.
fn surprise_from_kl(samples: usize, measured: &[usize], kl: &[f32], share: f32) -> Option<Vec<f32>> {
    let mean = kl.iter().map(|&k| k as f64).sum::<f64>() / kl.len().max(1) as f64;
    if !(mean > 0.0 && mean.is_finite()) {
        return None;
    }
    let mut weights = vec![1.0f32; samples];
    for (&i, &k) in measured.iter().zip(kl) {
        weights[i] = (1.0 - share) + share * (k as f64 / mean) as f32;
    }
    let max = weights.iter().copied().fold(0.0f32, f32::max);
    tracing::info!(positions = measured.len(), mean_kl = mean, max_weight = max, "policy surprise");
    Some(weights)
}

/// What a stored batch order was drawn from: the window's shards and their sizes, and the
/// settings that shape the order. A resumed generation whose window or settings differ
/// draws a new order rather than indices that now name other positions.
fn order_key(window: &Window, cfg: &TrainerConfig) -> u64 {
    let mut h = std::hash::DefaultHasher::new();
    for (path, n) in window.shards.iter().zip(&window.shard_records) {
        std::hash::Hash::hash(&shard_key(path), &mut h);
        std::hash::Hash::hash(n, &mut h);
    }
    std::hash::Hash::hash(&(window.train.len(), cfg.batch_size, cfg.steps_per_generation, cfg.max_sample_uses), &mut h);
    std::hash::Hash::hash(&cfg.policy_surprise_weight.to_bits(), &mut h);
    std::hash::Hasher::finish(&h)
}

/// The share of the search value in a sample's value target: the teacher's share for
/// the teacher's positions (generation 0) where the run has a teacher, else the window's.
fn value_share(sample: &Sample, teacher_share: Option<f32>, share: f32) -> f32 {
    teacher_share.filter(|_| sample.generation == 0).unwrap_or(share)
}

/// Which `n` of `len` held-out positions are evaluated: evenly spaced over the whole
/// held-out set, which runs from the window's oldest generation to its newest (the first
/// `n` would measure only the oldest data).
pub fn validation_indices(len: usize, n: usize) -> Vec<usize> {
    let n = n.min(len);
    (0..n).map(|i| i * len / n).collect()
}

/// A saved model's losses on the games of `shards`, measured as a generation's validation
/// measures the held-out games (eval mode, no mirror, the game result as the value
/// target): on the held-out games, and on as many of the training positions, evenly
/// spaced. Their difference is how much the model has learnt the positions it trained
/// on rather than the game; the held-out figure is also the yardstick a model trained
/// elsewhere on the same games (another network, another schedule) is compared with.
pub fn split_losses(variant: &'static Variant, net: &Net, shards: &[PathBuf], cfg: &TrainerConfig) -> SplitLosses {
    let window = Window::load_looking_ahead(variant, shards, cfg.validation_fraction, cfg.value_horizon);
    let batcher = Batcher::new(variant, false);
    let held_out = validate(net, &batcher, &window, cfg).map(|(losses, _)| losses);
    let train_samples: Vec<&Sample> = window.train.iter().collect();
    let train = mean_losses(net, &batcher, &window, &train_samples, cfg).map(|(losses, _)| losses);
    SplitLosses { held_out, train, held_out_positions: window.validation.len(), train_positions: window.train.len() }
}

/// [`split_losses`]' result; `None` where the split has no position.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SplitLosses {
    pub held_out: Option<LossStats>,
    pub train: Option<LossStats>,
    pub held_out_positions: usize,
    pub train_positions: usize,
}

/// Mean eval-mode losses over (up to `validation_positions` of) the held-out games, and
/// the value head's calibration there. The value target is the game's result alone,
/// whatever the training target mixes in: this measures prediction of real outcomes.
/// The held-out games measured are the self-play games of the window where it has any:
/// a window that keeps the teacher's games holds far more of them (2,000 games against
/// four generations of ~190), and their targets (the teacher's scores) are not the ones
/// self-play trains towards, so a mixed figure mostly measures the distance from the
/// teacher (docs/ABLATIONS.md, "The held-out loss corrected").
fn validate(net: &Net, batcher: &Batcher, window: &Window, cfg: &TrainerConfig) -> Option<(LossStats, Calibration)> {
    let own: Vec<&Sample> = window.validation.iter().filter(|s| s.generation > 0).collect();
    let samples = if own.is_empty() { window.validation.iter().collect() } else { own };
    mean_losses(net, batcher, window, &samples, cfg)
}

/// Eval-mode losses over up to `validation_positions` of `samples` (evenly spaced) and the
/// value head's calibration there, the value target being the game's result alone.
fn mean_losses(net: &Net, batcher: &Batcher, window: &Window, samples: &[&Sample], cfg: &TrainerConfig) -> Option<(LossStats, Calibration)> {
    let n = samples.len().min(cfg.validation_positions);
    if n == 0 {
        return None;
    }
    let mut sum = [0.0f64; 3];
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let no_mirror = Batcher::new(batcher.planes().variant(), false);
    let sample: Vec<&Sample> = validation_indices(samples.len(), n).into_iter().map(|i| samples[i]).collect();
    let mut predictions = Vec::with_capacity(n);
    for chunk in sample.chunks(cfg.batch_size) {
        let records: Vec<_> = chunk.iter().map(|s| &s.record).collect();
        let d = no_mirror.build(&records, &mut rng);
        for (s, wdl) in chunk.iter().zip(model::train::eval_value_probs(net, &d.input, d.batch)) {
            let progress = s.index as f32 / window.shard_records[s.shard].max(1) as f32;
            predictions.push(Prediction { wdl, result: s.record.result, progress });
        }
        let l = model::train::eval_losses(
            net,
            &TrainBatch { batch: d.batch, input: &d.input, policy_target: &d.policy, value_target: &d.wdl, legal_mask: Some(&d.legal) },
            cfg.value_weight,
        );
        let w = chunk.len() as f64;
        sum[0] += l.total as f64 * w;
        sum[1] += l.policy as f64 * w;
        sum[2] += l.value as f64 * w;
    }
    let losses = LossStats { total: (sum[0] / n as f64) as f32, policy: (sum[1] / n as f64) as f32, value: (sum[2] / n as f64) as f32 };
    Some((losses, calibrate(&predictions)))
}

/// The game an exported model plays: the run's variant and the encoding versions.
pub fn game_tag(variant: &rules::Variant) -> GameTag {
    GameTag {
        variant: variant.name.clone(),
        options: variant.options.clone(),
        planes_version: encoding::PLANES_VERSION,
        action_version: encoding::ACTION_VERSION,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(generation: u32) -> Sample {
        crate::data::tests::blank_sample(0, 0, generation)
    }

    /// Hand-computed: KL 0.5, 1.5 and 1.0 (mean 1.0) at λ = 0.5 weigh 0.75, 1.25 and 1.0;
    /// an unmeasured sample weighs 1; the measured weights keep a mean of 1.
    #[test]
    fn surprise_weights_are_half_uniform_half_by_kl() {
        let w = surprise_from_kl(4, &[0, 2, 3], &[0.5, 1.5, 1.0], 0.5);
        assert_eq!(w, Some(vec![0.75, 1.0, 1.25, 1.0]));
        let w = surprise_from_kl(3, &[0, 1, 2], &[0.0, 3.0, 0.0], 1.0);
        assert_eq!(w, Some(vec![0.0, 3.0, 0.0]));
        // No surprise anywhere, or nothing measured: uniform sampling, no weights.
        assert_eq!(surprise_from_kl(2, &[0, 1], &[0.0, 0.0], 0.5), None);
        assert_eq!(surprise_from_kl(2, &[], &[], 0.5), None);
    }

    /// The teacher's positions keep the teacher's share in every generation that trains on
    /// them; self-play positions take the window's; a run without a teacher treats
    /// generation 0 (its uniform-prior games) as any other.
    #[test]
    fn the_teachers_positions_keep_the_teachers_value_share() {
        assert_eq!(value_share(&sample(0), Some(0.9), 0.25), 0.9);
        assert_eq!(value_share(&sample(3), Some(0.9), 0.25), 0.25);
        assert_eq!(value_share(&sample(0), None, 0.25), 0.25);
    }
}
