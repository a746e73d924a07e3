//! Reanalysis (MuZero Reanalyse: Schrittwieser et al., "Online and Offline Reinforcement
//! Learning by Planning with a Learned Model", NeurIPS 2021, §4): positions of stored
//! games searched again by a newer network, so that the older positions of a training
//! window train toward what today's search says rather than what an older network's did.
//! The searches are self-play's full searches (same budget, root policy and leaf extras),
//! many in flight per thread with their leaves evaluated in one batch, as in self-play.

use crate::SelfplayConfig;
use encoding::ActionSpace;
use records::Record;
use rules::{Game, Position, Variant};
use search::{EvalRequest, Evaluator, Search};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// Why a stored game could not be replayed.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error("record {index}: SFEN {sfen:?}: {problem}")]
    Sfen { index: usize, sfen: String, problem: String },
    #[error("record {index} is at ply {found}, the record before it at ply {before}: not consecutive plies of one game")]
    NotConsecutive { index: usize, found: u16, before: u16 },
    #[error("record {index}: no legal move leads to it from the record before")]
    NoMove { index: usize },
    #[error("record {index} says its position had occurred {stored} times, the replayed game {replayed}")]
    Repetitions { index: usize, stored: u8, replayed: usize },
}

/// One stored game's records (one shard, in ply order, from its first move) replayed as
/// games: element `i` is the game at record `i`'s position, with the history before it,
/// so that a search sees the repetitions and the ply limit the original search saw.
pub fn replay(variant: &'static Variant, records: &[Record]) -> Result<Vec<Game>, ReplayError> {
    let position = |index: usize| {
        let r = &records[index];
        Position::from_sfen(variant, &r.sfen).map_err(|e| ReplayError::Sfen { index, sfen: r.sfen.clone(), problem: e.to_string() })
    };
    let mut games = Vec::with_capacity(records.len());
    let Some(first) = records.first() else { return Ok(games) };
    if first.ply != 0 {
        return Err(ReplayError::NotConsecutive { index: 0, found: first.ply, before: 0 });
    }
    let mut game = Game::new(position(0)?, Some(first.max_plies as u32));
    for (index, r) in records.iter().enumerate() {
        if index > 0 {
            let before = records[index - 1].ply;
            if r.ply != before + 1 {
                return Err(ReplayError::NotConsecutive { index, found: r.ply, before });
            }
            let next = position(index)?;
            let m = game
                .legal_moves()
                .iter()
                .copied()
                .find(|&m| {
                    let mut p = game.position().clone();
                    p.play_unchecked(m);
                    p.key() == next.key() && p.to_sfen() == r.sfen
                })
                .ok_or(ReplayError::NoMove { index })?;
            game.play_unchecked(m);
        }
        let replayed = game.repetitions();
        if replayed.min(255) as u8 != r.repetitions {
            return Err(ReplayError::Repetitions { index, stored: r.repetitions, replayed });
        }
        games.push(game.clone());
    }
    Ok(games)
}

/// A position's new targets: the full search's policy over its legal moves as (action
/// index, probability), and its root value for the side to move (as
/// `selfplay.record_value` picks it), as a self-play record of a full search holds them.
#[derive(Clone, Debug, PartialEq)]
pub struct Reanalysed {
    pub policy: Vec<(u32, f32)>,
    pub value: f32,
}

/// Searches each of `roots` (a game and the seed of its search's randomness) with
/// self-play's full search on `evaluator`, on `threads` threads each keeping
/// `config.games_in_flight` searches going; `None` for a root that is over. `on_done` is
/// called once per root searched (for a progress bar). Results in the roots' order.
pub fn reanalyse<E: Evaluator<Game> + ?Sized>(
    variant: &'static Variant,
    config: &SelfplayConfig,
    evaluator: &E,
    roots: &[(Game, u64)],
    threads: usize,
    on_done: &(dyn Fn() + Sync),
) -> Vec<Option<Reanalysed>> {
    let actions = ActionSpace::new(variant);
    let next = AtomicUsize::new(0);
    let results: Vec<std::sync::Mutex<Option<Reanalysed>>> = roots.iter().map(|_| std::sync::Mutex::new(None)).collect();
    let in_flight = (config.games_in_flight as usize).min(roots.len().div_ceil(threads.max(1))).max(1);
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            scope.spawn(|| {
                let claim = || {
                    let i = next.fetch_add(1, Relaxed);
                    roots.get(i).map(|(game, seed)| (i, Search::with_seed(game.clone(), config.search_config(true, game.ply()), *seed)))
                };
                let mut searches: Vec<(usize, Search<Game>)> = std::iter::from_fn(claim).take(in_flight).collect();
                let mut batch: Vec<EvalRequest<Game>> = Vec::new();
                let mut owners: Vec<usize> = Vec::new();
                while !searches.is_empty() {
                    batch.clear();
                    owners.clear();
                    for (k, (_, s)) in searches.iter_mut().enumerate() {
                        if let Some(req) = s.next_leaf() {
                            batch.push(req);
                            owners.push(k);
                        }
                    }
                    if !batch.is_empty() {
                        for (&k, e) in owners.iter().zip(evaluator.evaluate(&batch)) {
                            searches[k].1.apply(e);
                        }
                    }
                    let mut k = 0;
                    while k < searches.len() {
                        if !searches[k].1.is_done() {
                            k += 1;
                            continue;
                        }
                        let (i, s) = searches.swap_remove(k);
                        let r = s.result();
                        if r.chosen.is_some() {
                            let side = s.root().position().side_to_move();
                            let policy = r.policy.iter().map(|&(m, p)| (actions.encode(side, m) as u32, p)).collect();
                            let value = if config.record_value == "target" { r.policy_value } else { r.value };
                            *results[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(Reanalysed { policy, value });
                        }
                        on_done();
                        if let Some(more) = claim() {
                            searches.push(more);
                        }
                    }
                }
            });
        }
    });
    results.into_iter().map(|r| r.into_inner().unwrap_or_else(|e| e.into_inner())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{play_games, SelfplayJob, Stats};
    use search::UniformEvaluator;

    fn variant() -> &'static Variant {
        Variant::builtin("minishogi").unwrap()
    }

    fn played(dir: &std::path::Path, config: SelfplayConfig) -> Vec<Record> {
        let job = SelfplayJob {
            variant: variant(),
            config,
            generation: 1,
            out_dir: dir.to_path_buf(),
            game_ids: (1..=4).collect(),
            threads: 1,
            seed: 3,
            on_finished: None,
        };
        let games = play_games(&job, &UniformEvaluator, &Stats::default()).unwrap();
        // The longest of four games.
        games.iter().map(|g| records::read_shard(&g.shard).unwrap().records).max_by_key(|r| r.len()).unwrap()
    }

    fn small() -> SelfplayConfig {
        SelfplayConfig {
            simulations: 16,
            fast_simulations: 4,
            full_search_fraction: 0.5,
            max_plies: 60,
            games_in_flight: 4,
            resign_threshold: -1.0,
            ..SelfplayConfig::default()
        }
    }

    /// A stored game replays move for move: every position, ply and repetition count of
    /// its records, and the moves between them are legal ones.
    #[test]
    fn a_stored_game_replays_to_its_records() {
        let dir = tempfile::tempdir().unwrap();
        let records = played(dir.path(), small());
        assert!(records.len() > 10);
        let games = replay(variant(), &records).unwrap();
        assert_eq!(games.len(), records.len());
        for (g, r) in games.iter().zip(&records) {
            assert_eq!(g.position().to_sfen(), r.sfen);
            assert_eq!(g.ply(), r.ply as usize);
            assert_eq!(g.max_plies(), r.max_plies as u32);
        }
        assert!(games.windows(2).all(|w| w[1].continues(&w[0]) && w[1].ply() == w[0].ply() + 1));
    }

    #[test]
    fn a_broken_game_is_refused_saying_where() {
        let dir = tempfile::tempdir().unwrap();
        let records = played(dir.path(), small());
        let mut gap = records.clone();
        gap.remove(5);
        assert!(matches!(replay(variant(), &gap), Err(ReplayError::NotConsecutive { index: 5, .. })));
        let mut jump = records.clone();
        jump[6].sfen = records[8].sfen.clone();
        assert!(matches!(replay(variant(), &jump), Err(ReplayError::NoMove { index: 6 })));
        let mut bad = records.clone();
        bad[3].sfen = "not a position".into();
        assert!(matches!(replay(variant(), &bad), Err(ReplayError::Sfen { index: 3, .. })));
        let mut reps = records;
        reps[4].repetitions = 3;
        assert!(matches!(replay(variant(), &reps), Err(ReplayError::Repetitions { index: 4, stored: 3, .. })));
    }

    /// Each position gets a full search's targets from the evaluator it is given — a
    /// distribution over exactly its legal moves, led by the move the evaluator's prior
    /// favours — and the same targets on one thread or three.
    #[test]
    fn reanalysis_gives_the_new_evaluators_full_search_targets() {
        let dir = tempfile::tempdir().unwrap();
        let config = small();
        let records = played(dir.path(), config.clone());
        let games = replay(variant(), &records).unwrap();
        let roots: Vec<(Game, u64)> = games
            .iter()
            .enumerate()
            .filter(|(_, g)| g.legal_moves().len() >= 2 && g.checkmate_within(3, 100_000).is_none())
            .map(|(i, g)| (g.clone(), 11 + i as u64))
            .collect();
        assert!(roots.len() >= 10);
        // A network that likes each position's first legal move, and values nothing (where
        // no mate is near, nothing the search finds outweighs that prior).
        let fond = search::FnEvaluator(|r: &EvalRequest<Game>| {
            let n = r.moves.len();
            let mut priors = vec![0.1 / (n - 1).max(1) as f32; n];
            priors[0] = 0.9;
            search::Evaluation { priors, value: 0.0 }
        });
        let count = AtomicUsize::new(0);
        let one = reanalyse(variant(), &config, &fond, &roots, 1, &|| {
            count.fetch_add(1, Relaxed);
        });
        assert_eq!(count.load(Relaxed), roots.len());
        assert_eq!(one, reanalyse(variant(), &config, &fond, &roots, 3, &|| {}));
        let actions = ActionSpace::new(variant());
        for (r, (game, _)) in one.iter().zip(&roots) {
            let r = r.as_ref().expect("a position with a move searched");
            let side = game.position().side_to_move();
            let legal = game.legal_moves();
            let mut want: Vec<u32> = legal.iter().map(|&m| actions.encode(side, m) as u32).collect();
            let mut got: Vec<u32> = r.policy.iter().map(|&(a, _)| a).collect();
            want.sort_unstable();
            got.sort_unstable();
            assert_eq!(got, want);
            assert!((r.policy.iter().map(|&(_, p)| p).sum::<f32>() - 1.0).abs() < 1e-4);
            let favoured = actions.encode(side, legal[0]) as u32;
            let best = r.policy.iter().max_by(|a, b| a.1.total_cmp(&b.1)).unwrap();
            assert_eq!(best.0, favoured, "{}", game.position().to_sfen());
            assert!((-1.0..=1.0).contains(&r.value));
        }
    }
}
