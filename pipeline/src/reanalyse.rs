//! Reanalysis before a generation trains (`training.reanalyse_fraction`; MuZero
//! Reanalyse, Schrittwieser et al., NeurIPS 2021): a share of the window's older
//! self-play positions — those played by a model before the newest — searched again by
//! the newest model with self-play's full search, their policy target and search value
//! replaced (or, with `training.reanalyse_keep` k > 0, averaged: k of the old kept). The
//! game's result stays: no search changes who won.
//!
//! The new targets go into copies of the games' shards under `reanalysed/gen-NNNN/`,
//! which stand in for the originals in that generation's window. A copy keeps its
//! original's worker and file names, so the trainer's use counts and stored order follow
//! the position, not the file. The next generation starts from the newest copy, so a
//! position keeps the freshest targets any generation gave it. The set is marked done by
//! `reanalysed/gen-NNNN.json` (its summary), written last: a killed trainer redoes an
//! unfinished set and reuses a finished one.

use crate::config::RunConfig;
use crate::stages::{bar, read_json, selfplay_evaluator, write_json, RunDir};
use anyhow::{Context, Result};
use records::{read_shard, write_shard, Record};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// What one generation's reanalysis did (`reanalysed/gen-NNNN.json`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct ReanalysisSummary {
    pub generation: u32,
    /// The model whose search made the new targets (the newest, `generation` − 1).
    pub model: u32,
    /// Shards in the window, and of those the ones standing in as copies.
    pub window_shards: u64,
    pub copies: u64,
    pub positions: u64,
    /// Of those, positions whose record had a policy target before: the mean
    /// KL(new ‖ old) in nats (how far the newest search moved the target) …
    pub had_target: u64,
    pub mean_kl_from_old: f64,
    /// … and over all of them, the mean |new − old| of the search value.
    pub mean_value_change: f64,
    /// Games that could not be replayed (kept as they were), with why.
    pub skipped: Vec<String>,
    pub seconds: f64,
}

fn summary_path(run: &RunDir, g: u32) -> PathBuf {
    run.0.join("reanalysed").join(format!("gen-{g:04}.json"))
}

fn copies_dir(run: &RunDir, g: u32) -> PathBuf {
    run.0.join("reanalysed").join(format!("gen-{g:04}"))
}

/// Where a shard's copy of generation `g` lives: its path inside the run (or, for a
/// shard from elsewhere, its last three components) under `reanalysed/gen-NNNN/`.
fn copy_path(run: &RunDir, g: u32, shard: &Path) -> PathBuf {
    let inside =
        shard.strip_prefix(&run.0).map(Path::to_path_buf).unwrap_or_else(|_| shard.iter().rev().take(3).collect::<Vec<_>>().into_iter().rev().collect());
    copies_dir(run, g).join(inside)
}

/// Whether generation `g` searches `ply` of game `game_id` again: a fixed hash below
/// `fraction`, drawn afresh each generation.
fn chosen(game_id: u64, ply: u16, g: u32, fraction: f32) -> bool {
    (mix(game_id ^ mix(ply as u64 ^ ((g as u64) << 20))) >> 11) as f64 / (1u64 << 53) as f64 > 1.0 - fraction as f64
}

/// SplitMix64's finaliser (Steele, Lea & Flood, OOPSLA 2014).
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// KL(p ‖ q) in nats between two targets given as (action, probability); actions
/// missing from `q` count at a floor, as a policy target over legal moves never does.
fn kl(p: &[(u32, f32)], q: &[(u32, f32)]) -> f64 {
    let q: std::collections::HashMap<u32, f32> = q.iter().copied().collect();
    p.iter().filter(|(_, pa)| *pa > 0.0).map(|&(a, pa)| pa as f64 * (pa as f64 / q.get(&a).copied().unwrap_or(0.0).max(1e-6) as f64).ln()).sum()
}

/// The new policy target `1 − keep` of `new` and `keep` of `old` (both over the legal
/// moves, as (action, probability)), in `new`'s order with `old`'s other actions after.
fn blend(old: &[(u32, f32)], new: &[(u32, f32)], keep: f32) -> Vec<(u32, f32)> {
    let mut out: Vec<(u32, f32)> = new.iter().map(|&(a, p)| (a, (1.0 - keep) * p)).collect();
    for &(a, p) in old {
        match out.iter_mut().find(|(b, _)| *b == a) {
            Some((_, q)) => *q += keep * p,
            None if keep * p > 0.0 => out.push((a, keep * p)),
            None => {}
        }
    }
    out
}

/// Generation `g`'s window with reanalysed copies standing in for the shards of its
/// older self-play games, searched by `model_dir` (generation `g` − 1). Returns the
/// window's shards, copies where they exist. Validation games and the teacher's games
/// keep theirs: the held-out loss measures the same targets as without reanalysis.
pub fn reanalyse_window(run: &RunDir, cfg: &RunConfig, g: u32, shards: Vec<PathBuf>, model_dir: &Path, show: bool) -> Result<Vec<PathBuf>> {
    let (fraction, keep) = (cfg.training.reanalyse_fraction, cfg.training.reanalyse_keep);
    if fraction <= 0.0 || g < 2 {
        return Ok(shards);
    }
    let stand_in = |shards: Vec<PathBuf>| shards.into_iter().map(|s| Some(copy_path(run, g, &s)).filter(|c| c.exists()).unwrap_or(s)).collect();
    if read_json::<ReanalysisSummary>(&summary_path(run, g))?.is_some() {
        return Ok(stand_in(shards));
    }
    let started = Instant::now();
    let variant = cfg.variant()?;
    let mut summary = ReanalysisSummary { generation: g, model: g - 1, window_shards: shards.len() as u64, ..Default::default() };
    // Each older self-play shard: its newest records (the last copy, else the original),
    // and the positions this generation searches again.
    struct Pending {
        shard: PathBuf,
        header: records::ShardHeader,
        records: Vec<Record>,
        picked: Vec<usize>,
    }
    let mut pending: Vec<Pending> = Vec::new();
    let mut roots: Vec<(rules::Game, u64)> = Vec::new();
    for shard in &shards {
        let previous = copy_path(run, g - 1, shard);
        let source = if previous.exists() { previous } else { shard.clone() };
        let Ok(s) = read_shard(&source) else { continue }; // the trainer reports it
        if s.header.generation == 0 || s.header.generation >= g {
            continue;
        }
        let picked: Vec<usize> = (0..s.records.len())
            .filter(|&i| {
                let r = &s.records[i];
                !trainer::data::is_validation_game(r.game_id, cfg.training.validation_fraction) && chosen(r.game_id, r.ply, g, fraction)
            })
            .collect();
        if !picked.is_empty() {
            match selfplay::replay(variant, &s.records) {
                Ok(games) => {
                    roots.extend(picked.iter().map(|&i| (games[i].clone(), mix(cfg.seed ^ mix(s.records[i].game_id ^ mix(((g as u64) << 16) | i as u64))))))
                }
                Err(e) => {
                    summary.skipped.push(format!("{}: {e}", source.display()));
                    continue;
                }
            }
        }
        if !picked.is_empty() || source != *shard {
            pending.push(Pending { shard: shard.clone(), header: s.header, records: s.records, picked });
        }
    }
    let pb = bar(roots.len() as u64, "reanalyse", show);
    // No model is loaded (nor calibrated) for a generation that drew nothing to search.
    let found = if roots.is_empty() {
        Vec::new()
    } else {
        let evaluator = selfplay_evaluator(cfg, model_dir)?.0;
        selfplay::reanalyse(variant, &cfg.selfplay, &*evaluator, &roots, cfg.threads, &|| pb.inc(1))
    };
    pb.finish();
    let mut results = found.into_iter();
    let (mut kl_sum, mut value_sum) = (0.0, 0.0);
    for p in &mut pending {
        for &i in &p.picked {
            let Some(new) = results.next().flatten() else { continue };
            let r = &mut p.records[i];
            if r.full_search {
                summary.had_target += 1;
                kl_sum += kl(&new.policy, &r.policy);
            }
            summary.positions += 1;
            value_sum += (new.value - r.search_value).abs() as f64;
            // A fast search's record has no policy target to keep; its value is kept.
            r.policy = if r.full_search && keep > 0.0 { blend(&r.policy, &new.policy, keep) } else { new.policy };
            r.search_value = (1.0 - keep) * new.value + keep * r.search_value;
            r.full_search = true;
        }
        let out = copy_path(run, g, &p.shard);
        std::fs::create_dir_all(out.parent().expect("a copy is inside the run")).with_context(|| format!("creating {}", out.display()))?;
        write_shard(&out, &p.header, &p.records).with_context(|| format!("writing {}", out.display()))?;
        summary.copies += 1;
    }
    summary.mean_kl_from_old = kl_sum / summary.had_target.max(1) as f64;
    summary.mean_value_change = value_sum / summary.positions.max(1) as f64;
    summary.seconds = started.elapsed().as_secs_f64();
    write_json(&summary_path(run, g), &summary)?;
    tracing::info!(
        generation = g,
        positions = summary.positions,
        copies = summary.copies,
        kl = summary.mean_kl_from_old,
        value_change = summary.mean_value_change,
        seconds = summary.seconds,
        "reanalysed with model {}",
        g - 1
    );
    for s in &summary.skipped {
        tracing::warn!("reanalysis skipped {s}");
    }
    // The generation before's copies are carried in this one's: only the newest set is kept.
    let _ = std::fs::remove_dir_all(copies_dir(run, g - 1));
    Ok(stand_in(shards))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The share drawn is the fraction asked for, and a position drawn in one generation
    /// is no likelier to be drawn in the next.
    #[test]
    fn the_draw_takes_the_fraction_afresh_each_generation() {
        let n = 200_000u64;
        let draws = |g: u32| -> Vec<bool> { (0..n).map(|k| chosen(k / 300, (k % 300) as u16, g, 0.1)).collect() };
        let (a, b) = (draws(5), draws(6));
        let share = |v: &[bool]| v.iter().filter(|&&x| x).count() as f64 / n as f64;
        // Binomial(200,000, 0.1): sd 0.00067; 5 sd.
        assert!((share(&a) - 0.1).abs() < 0.0034, "{}", share(&a));
        assert!((share(&b) - 0.1).abs() < 0.0034, "{}", share(&b));
        let both = a.iter().zip(&b).filter(|(x, y)| **x && **y).count() as f64 / n as f64;
        // Independent draws: 0.01 of positions both times (sd 0.00022).
        assert!((both - 0.01).abs() < 0.0012, "{both}");
        assert!((0..1000).all(|k| !chosen(k, 3, 5, 0.0)) && (0..1000).all(|k| chosen(k, 3, 5, 1.0)));
    }

    /// KL by hand: p = (½, ½), q = (¼, ¾) over the same two actions.
    #[test]
    fn kl_of_two_targets_by_hand() {
        let p = [(3, 0.5), (9, 0.5)];
        let q = [(9, 0.75), (3, 0.25)];
        let want = 0.5 * (0.5f64 / 0.25).ln() + 0.5 * (0.5f64 / 0.75).ln();
        assert!((kl(&p, &q) - want).abs() < 1e-6);
        assert_eq!(kl(&p, &p), 0.0);
    }

    /// A blend by hand: old (a ½, b ½), new (b ¾, c ¼), keep ¼:
    /// a ⅛, b ¾·¾ + ¼·½ = 11/16, c 3/16; it sums to 1, and keep 0 gives the new target.
    #[test]
    fn a_blend_keeps_its_share_of_the_old_target() {
        let old = [(1, 0.5), (2, 0.5)];
        let new = [(2, 0.75), (3, 0.25)];
        let b = blend(&old, &new, 0.25);
        let get = |a: u32| b.iter().find(|(x, _)| *x == a).map(|p| p.1).unwrap();
        assert_eq!(b.len(), 3);
        for (a, want) in [(1, 0.125), (2, 11.0 / 16.0), (3, 3.0 / 16.0)] {
            assert!((get(a) - want).abs() < 1e-6, "{a}: {}", get(a));
        }
        assert!((b.iter().map(|p| p.1).sum::<f32>() - 1.0).abs() < 1e-6);
        assert_eq!(blend(&old, &new, 0.0), new.to_vec());
    }
}
