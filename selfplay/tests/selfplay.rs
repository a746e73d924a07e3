use encoding::ActionSpace;
use records::read_shard;
use rules::{Position, Variant};
use search::UniformEvaluator;
use selfplay::{play_games, SelfplayConfig, SelfplayJob, Stats};

fn job(dir: &std::path::Path, threads: usize, ids: Vec<u64>) -> SelfplayJob {
    let config = SelfplayConfig {
        games: ids.len() as u32,
        games_in_flight: 3,
        simulations: 8,
        fast_simulations: 4,
        full_search_fraction: 0.5,
        max_plies: 60,
        ..SelfplayConfig::default()
    };
    SelfplayJob {
        variant: Variant::builtin("minishogi").unwrap(),
        config,
        generation: 0,
        out_dir: dir.to_path_buf(),
        game_ids: ids,
        threads,
        seed: 42,
        on_finished: None,
    }
}

#[test]
fn records_written_by_self_play_read_back_consistently() {
    let dir = tempfile::tempdir().unwrap();
    let stats = Stats::default();
    let games = play_games(&job(dir.path(), 2, (0..6).collect()), &UniformEvaluator, &stats).unwrap();
    assert_eq!(games.len(), 6);
    assert_eq!(stats.snapshot().games, 6);
    let v = Variant::builtin("minishogi").unwrap();
    let actions = ActionSpace::new(v);
    for g in &games {
        let shard = read_shard(&g.shard).unwrap();
        assert_eq!(shard.records.len(), g.plies.min(60), "one record per move played");
        for r in &shard.records {
            assert_eq!(r.game_id, g.game_id);
            let pos = Position::from_sfen(v, &r.sfen).unwrap();
            assert_eq!(r.result as f32, g.end.outcome.value_for(pos.side_to_move()));
            if r.full_search {
                let total: f32 = r.policy.iter().map(|p| p.1).sum();
                assert!((total - 1.0).abs() < 1e-3, "policy sums to {total}");
                let legal = pos.legal_moves();
                assert_eq!(r.policy.len(), legal.len(), "target over every legal move");
                for &(i, _) in &r.policy {
                    let m = actions.decode(pos.side_to_move(), i as usize).unwrap();
                    assert!(legal.contains(&m));
                }
            } else {
                assert!(r.policy.is_empty());
            }
        }
    }
}

/// Without Gumbel noise (from ply 0) and with every move a full search, every game from
/// the start is the same game: the noise is all that made them differ. With it they do.
#[test]
fn gumbel_noise_stops_after_its_plies() {
    let moves_of = |noise_plies: Option<u32>| {
        let dir = tempfile::tempdir().unwrap();
        let mut j = job(dir.path(), 1, (0..4).collect());
        j.config.full_search_fraction = 1.0;
        j.config.gumbel_noise_plies = noise_plies;
        let games = play_games(&j, &UniformEvaluator, &Stats::default()).unwrap();
        games.iter().map(|g| read_shard(&g.shard).unwrap().records.into_iter().map(|r| r.sfen).collect::<Vec<_>>()).collect::<Vec<_>>()
    };
    let quiet = moves_of(Some(0));
    assert!(quiet.iter().all(|g| *g == quiet[0]), "without noise every game is the first");
    let noisy = moves_of(None);
    assert!(noisy.iter().any(|g| *g != noisy[0]), "with noise the games differ");
}

#[test]
fn one_thread_runs_with_a_seed_are_reproducible() {
    let run = || {
        let dir = tempfile::tempdir().unwrap();
        let games = play_games(&job(dir.path(), 1, (10..14).collect()), &UniformEvaluator, &Stats::default()).unwrap();
        games.iter().map(|g| read_shard(&g.shard).unwrap().records).collect::<Vec<_>>()
    };
    assert_eq!(run(), run());
}

/// A panic inside self-play (here the evaluator's, on its tenth batch) ends `play_games`
/// with an error naming the games in flight instead of unwinding into the caller; the
/// games finished before it keep their shards, so the run can resume.
#[test]
fn a_panicking_worker_is_an_error_naming_its_games() {
    use search::{EvalRequest, Evaluation, Evaluator};
    use std::sync::atomic::{AtomicU32, Ordering};
    struct Faulty(AtomicU32);
    impl Evaluator<rules::Game> for Faulty {
        fn evaluate(&self, batch: &[EvalRequest<rules::Game>]) -> Vec<Evaluation> {
            if self.0.fetch_add(1, Ordering::SeqCst) == 9 {
                panic!("boom in the network");
            }
            batch.iter().map(|r| Evaluation::uniform(r.moves.len(), 0.0)).collect()
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let e = play_games(&job(dir.path(), 1, (0..4).collect()), &Faulty(AtomicU32::new(0)), &Stats::default()).unwrap_err();
    match e {
        selfplay::SelfplayError::Panic { games, message } => {
            assert!(message.contains("boom in the network"), "{message}");
            assert!(!games.is_empty() && games.iter().all(|g| *g < 4), "{games:?}");
        }
        other => panic!("expected a panic error, got {other}"),
    }
}

/// Thinks Black is lost everywhere: −0.99 for Black to move, +0.99 for White to move, so
/// Black's root value is ≈ −0.99 after every search and White's ≈ +0.99.
struct BlackIsLost;
impl search::Evaluator<rules::Game> for BlackIsLost {
    fn evaluate(&self, batch: &[search::EvalRequest<rules::Game>]) -> Vec<search::Evaluation> {
        let value = |g: &rules::Game| if g.position().side_to_move() == rules::Color::Black { -0.99 } else { 0.99 };
        batch.iter().map(|r| search::Evaluation::uniform(r.moves.len(), value(&r.state))).collect()
    }
}

fn resign_job(dir: &std::path::Path, games: u64, no_resign_fraction: f32) -> SelfplayJob {
    let mut j = job(dir, 1, (0..games).collect());
    j.config.resign_threshold = -0.9;
    j.config.resign_consecutive = 3;
    j.config.no_resign_fraction = no_resign_fraction;
    j.config.max_plies = 30;
    j
}

#[test]
fn a_side_below_the_threshold_for_its_consecutive_moves_resigns() {
    let dir = tempfile::tempdir().unwrap();
    let stats = Stats::default();
    let games = play_games(&resign_job(dir.path(), 4, 0.0), &BlackIsLost, &stats).unwrap();
    // Black searches at plies 0, 2 and 4; the third low value resigns, before its move.
    for g in &games {
        assert_eq!(g.end.reason, selfplay::EndReason::Resignation, "game {}", g.game_id);
        assert_eq!(g.end.outcome, rules::Outcome::Win(rules::Color::White));
        assert_eq!(g.plies, 4);
        assert_eq!(read_shard(&g.shard).unwrap().records.len(), 5, "the resigning position is recorded");
    }
    let s = stats.snapshot();
    assert_eq!((s.games, s.resignations, s.would_resign, s.false_resign, s.white_wins), (4, 4, 0, 0, 4));
    let lines = selfplay::read_games(dir.path()).unwrap();
    assert_eq!(lines.len(), 4);
    assert!(lines.iter().all(|l| l.ending == "resignation" && l.black_result == -1 && !l.resign_disabled && !l.would_resign && !l.false_resignation));
}

#[test]
fn games_that_may_not_resign_count_would_be_and_false_resignations() {
    let dir = tempfile::tempdir().unwrap();
    let stats = Stats::default();
    let games = play_games(&resign_job(dir.path(), 6, 1.0), &BlackIsLost, &stats).unwrap();
    // Black would have resigned in every game; each one White did not then win (a draw at
    // 30 plies, or Black's win) is a false resignation.
    let not_won_by_white = games.iter().filter(|g| g.end.outcome != rules::Outcome::Win(rules::Color::White)).count() as u64;
    assert!(games.iter().all(|g| g.end.reason != selfplay::EndReason::Resignation));
    let s = stats.snapshot();
    assert_eq!((s.resignations, s.would_resign, s.false_resign), (0, 6, not_won_by_white));
    assert!(not_won_by_white > 0, "the test needs a game White did not win");
    let lines = selfplay::read_games(dir.path()).unwrap();
    for g in &games {
        let l = lines.iter().find(|l| l.game_id == g.game_id).unwrap();
        assert!(l.resign_disabled && l.would_resign);
        assert_eq!(l.false_resignation, g.end.outcome != rules::Outcome::Win(rules::Color::White), "game {}", g.game_id);
    }
}

#[test]
fn the_no_resign_fraction_splits_the_games() {
    let dir = tempfile::tempdir().unwrap();
    let stats = Stats::default();
    let games = play_games(&resign_job(dir.path(), 16, 0.5), &BlackIsLost, &stats).unwrap();
    let s = stats.snapshot();
    let lines = selfplay::read_games(dir.path()).unwrap();
    let disabled = lines.iter().filter(|l| l.resign_disabled).count() as u64;
    // Every game either resigned or had resignation disabled; only the latter can count a
    // would-be resignation (not all do: a Black that finds a quick mate values it at +1).
    assert_eq!(s.resignations + disabled, 16);
    assert!(lines.iter().all(|l| !l.would_resign || l.resign_disabled));
    assert_eq!(s.would_resign, lines.iter().filter(|l| l.would_resign).count() as u64);
    assert!(s.would_resign > 0 && s.would_resign <= disabled);
    assert!((3..=13).contains(&disabled), "{disabled} of 16 with p = 0.5");
    assert_eq!(games.iter().filter(|g| g.end.reason == selfplay::EndReason::Resignation).count() as u64, s.resignations);
}

#[test]
fn starts_rotate_by_game_id_and_are_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let v = Variant::builtin("pocket-copper").unwrap();
    let family = v.start_family();
    let starts = ["no-copper".to_string(), "swapped".to_string(), "both-in-hand".to_string()];
    let config = SelfplayConfig { games: 6, simulations: 4, fast_simulations: 2, max_plies: 3, starts: starts.to_vec(), ..SelfplayConfig::default() };
    let j = SelfplayJob {
        variant: v,
        config,
        generation: 0,
        out_dir: dir.path().to_path_buf(),
        game_ids: (10..16).collect(),
        threads: 1,
        seed: 1,
        on_finished: None,
    };
    let games = play_games(&j, &UniformEvaluator, &Stats::default()).unwrap();
    assert_eq!(games.len(), 6);
    for g in &games {
        let name = &starts[g.game_id as usize % 3];
        assert_eq!(&g.start, name, "game {}", g.game_id);
        let sfen = &family.iter().find(|(n, _)| n == name).unwrap().1;
        let first = &read_shard(&g.shard).unwrap().records[0];
        assert_eq!(first.start, *name);
        assert_eq!(first.sfen, Position::from_sfen(v, sfen).unwrap().to_sfen(), "game {} starts from {name}", g.game_id);
    }
    let lines = selfplay::read_games(dir.path()).unwrap();
    assert!(lines.iter().all(|l| l.start == starts[l.game_id as usize % 3]));
}

/// `opening_random_plies`: each game's first recorded position lies 0..=k plies in, the
/// draws differ between games, the random plies are not recorded, and k = 0 starts every
/// game at the start.
#[test]
fn games_open_with_unrecorded_random_plies() {
    let first_plies = |k: u32| {
        let dir = tempfile::tempdir().unwrap();
        let mut j = job(dir.path(), 1, (0..24).collect());
        j.config.opening_random_plies = k;
        let games = play_games(&j, &UniformEvaluator, &Stats::default()).unwrap();
        let v = Variant::builtin("minishogi").unwrap();
        games
            .iter()
            .map(|g| {
                let records = read_shard(&g.shard).unwrap().records;
                let first = records[0].ply as usize;
                assert_eq!(records.len(), g.plies - first, "game {}: a record for each searched move, none for the opening's", g.game_id);
                if first == 0 {
                    assert_eq!(records[0].sfen, Position::start(v).to_sfen());
                }
                first
            })
            .collect::<Vec<_>>()
    };
    assert!(first_plies(0).iter().all(|&p| p == 0));
    let drawn = first_plies(3);
    assert!(drawn.iter().all(|&p| p <= 3), "{drawn:?}");
    let distinct: std::collections::BTreeSet<_> = drawn.iter().collect();
    assert!(distinct.len() >= 3, "24 draws of 0..=3 give at least three values: {drawn:?}");
}

#[test]
fn opening_random_plies_is_checked() {
    let c = SelfplayConfig { opening_random_plies: 41, ..SelfplayConfig::default() };
    let e = c.validate().unwrap_err();
    assert_eq!(e.key, "opening_random_plies");
    let c = SelfplayConfig { opening_random_plies: 10, max_plies: 10, ..SelfplayConfig::default() };
    assert!(c.validate().is_err());
    assert!(SelfplayConfig { opening_random_plies: 8, ..SelfplayConfig::default() }.validate().is_ok());
}
