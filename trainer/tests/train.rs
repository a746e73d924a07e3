mod common;
use common::*;
use trainer::{train_generation, Checkpoint, TrainJob};

#[test]
fn tiny_network_overfits_a_small_record_set() {
    // 32 positions with one-hot policy targets and fixed results: a 2x16 net must
    // memorise them: total loss (policy CE + WDL CE) from about ln(legal)+ln 3 ≈ 4 to
    // below 0.3 within 300 steps on the whole set.
    let dir = tempfile::tempdir().unwrap();
    let shards = write_random_shards(dir.path(), 4, 8, 1);
    let mut cfg = config(300, 32);
    cfg.mirror = false;
    cfg.checkpoint_every = 1000;
    let job = TrainJob {
        variant: variant(),
        config: cfg,
        net: tiny_net(),
        generation: 1,
        shards,
        checkpoint: dir.path().join("trainer.ckpt"),
        export_dir: dir.path().join("models/gen-0001"),
        seed: 5,
        teacher_value_share: None,
        teacher_batch_share: None,
        on_step: None,
        stop_after: None,
    };
    // Each step is one pass over the 32 samples; the cap of 255 uses per sample stops
    // training after 255 steps.
    let report = train_generation(&job).unwrap();
    assert_eq!(report.train_samples, 32);
    assert_eq!(report.steps, 255, "the use cap limits the steps");
    let first = report.losses.first().unwrap().total;
    let last = report.losses.last().unwrap().total;
    assert!(first > 3.0, "initial loss {first}");
    assert!(last < 0.3, "final loss {last} after {} steps (initial {first})", report.steps);
    assert!(dir.path().join("models/gen-0001/model.json").exists(), "model exported");
    assert!(model::load_inference(&dir.path().join("models/gen-0001")).is_ok());
}

#[test]
fn corrupt_shard_is_skipped_naming_the_file_and_corrupt_checkpoint_refused() {
    let dir = tempfile::tempdir().unwrap();
    let shards = write_random_shards(dir.path(), 3, 10, 2);
    let bytes = std::fs::read(&shards[1]).unwrap();
    std::fs::write(&shards[1], &bytes[..bytes.len() / 2]).unwrap();
    let job = TrainJob {
        variant: variant(),
        config: config(2, 8),
        net: tiny_net(),
        generation: 1,
        shards: shards.clone(),
        checkpoint: dir.path().join("trainer.ckpt"),
        export_dir: dir.path().join("models/gen-0001"),
        seed: 5,
        teacher_value_share: None,
        teacher_batch_share: None,
        on_step: None,
        stop_after: None,
    };
    let report = train_generation(&job).unwrap();
    assert_eq!(report.skipped.len(), 1);
    assert!(report.skipped[0].contains("game-00000001.shard"), "{:?}", report.skipped);
    assert_eq!(report.train_samples, 20, "the other two games are used");

    let ckpt = std::fs::read(&job.checkpoint).unwrap();
    std::fs::write(&job.checkpoint, &ckpt[..ckpt.len() - 100]).unwrap();
    let err = train_generation(&TrainJob { generation: 2, ..job }).unwrap_err().to_string();
    assert!(err.contains("trainer.ckpt") && err.contains("refusing"), "{err}");
    assert!(Checkpoint::load(&dir.path().join("trainer.ckpt")).is_err());
}

/// Shards that pass their checksum but whose records do not fit the variant and encoding
/// (written by another build, or crafted) are skipped naming the file and the record; the
/// batcher never sees them (before the check, each of these panicked inside it).
#[test]
fn records_that_do_not_fit_the_variant_are_refused_not_panicked_on() {
    let dir = tempfile::tempdir().unwrap();
    let shards = write_random_shards(dir.path(), 5, 10, 4);
    type Damage = (&'static str, fn(&mut records::Record));
    let damage: [Damage; 4] = [
        ("policy index", |r| r.policy = vec![(u32::MAX, 1.0)]),
        ("SFEN", |r| r.sfen = "lnsgkgsnl/9 b - 1".into()),
        ("result", |r| r.result = 5),
        ("not a probability", |r| r.policy = vec![(r.policy[0].0, f32::NAN)]),
    ];
    for (shard, (what, edit)) in shards.iter().zip(damage) {
        let mut s = records::read_shard(shard).unwrap();
        edit(&mut s.records[3]);
        records::write_shard(shard, &s.header, &s.records).unwrap();
        let w = trainer::data::Window::load(variant(), std::slice::from_ref(shard), 0.0);
        assert!(w.train.is_empty(), "{what}");
        assert!(w.skipped.len() == 1 && w.skipped[0].contains("record 3") && w.skipped[0].contains(what), "{what}: {:?}", w.skipped);
    }
    let w = trainer::data::Window::load(variant(), &shards, 0.0);
    assert_eq!((w.skipped.len(), w.train.len()), (4, 10), "only the untouched game is used");
}

/// Validation evaluates a sample spread over the whole held-out set (oldest to newest
/// generation), not its first positions: 5 of 10 are 0, 2, 4, 6, 8; 3 of 9 are 0, 3, 6.
#[test]
fn validation_samples_the_whole_window() {
    assert_eq!(trainer::validation_indices(10, 5), vec![0, 2, 4, 6, 8]);
    assert_eq!(trainer::validation_indices(9, 3), vec![0, 3, 6]);
    assert_eq!(trainer::validation_indices(4, 10), vec![0, 1, 2, 3]);
    assert!(trainer::validation_indices(0, 5).is_empty());
    let picked = trainer::validation_indices(100_000, 2048);
    // The last is ⌊2047 · 100000 / 2048⌋ = ⌊99951.17⌋: within 49 positions of the newest.
    assert_eq!(*picked.last().unwrap(), 99_951);
}

/// With `search_value_share` s the value target is (1 − s)·onehot(result) + s·((1 + q)/2,
/// 0, (1 − q)/2). A lost game (result −1) whose search said q = 0.5, at s = 0.5:
/// win 0.5 · 0.75 = 0.375, draw 0, loss 0.5 + 0.5 · 0.25 = 0.625 (expectation −0.25 =
/// 0.5 · (−1) + 0.5 · 0.5). At s = 0 the target is the one-hot result.
#[test]
fn value_target_mixes_the_search_value_into_the_result() {
    use rand::SeedableRng;
    let dir = tempfile::tempdir().unwrap();
    let shards = write_random_shards(dir.path(), 1, 2, 3);
    let mut records = records::read_shard(&shards[0]).unwrap().records;
    records[0].result = -1;
    records[0].search_value = 0.5;
    records[1].result = 0;
    records[1].search_value = -1.0;
    let refs: Vec<&records::Record> = records.iter().collect();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
    let mixed = trainer::data::Batcher::new(variant(), false).with_search_value_share(0.5).build(&refs, &mut rng);
    let want = [0.375, 0.0, 0.625, 0.0, 0.5, 0.5];
    assert!(mixed.wdl.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-6), "{:?}", mixed.wdl);
    let plain = trainer::data::Batcher::new(variant(), false).build(&refs, &mut rng);
    assert_eq!(plain.wdl, vec![0.0, 0.0, 1.0, 0.0, 1.0, 0.0]);
    // With a draw rate d = 0.1 the search's share keeps d of draw: at s = 0.9 the lost
    // game with q = 0.5 gets win 0.9 · 0.9 · 0.75 = 0.6075, draw 0.9 · 0.1 = 0.09, loss
    // 0.1 + 0.9 · 0.9 · 0.25 = 0.3025; the drawn one with q = −1 gets win 0, draw
    // 0.1 + 0.09 = 0.19, loss 0.9 · 0.9 = 0.81.
    let drawn = trainer::data::Batcher::new(variant(), false).with_search_value_share(0.9).with_draw_rate(0.1).build(&refs, &mut rng);
    let want = [0.6075, 0.09, 0.3025, 0.0, 0.19, 0.81];
    assert!(drawn.wdl.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-6), "{:?}", drawn.wdl);
    // Each record with its own share: the first at s = 0.5 (as above), the second at
    // s = 0 (the one-hot draw), whatever the batcher's own share says.
    let own = trainer::data::Batcher::new(variant(), false).with_search_value_share(0.9).build_with_shares(&[(refs[0], 0.5), (refs[1], 0.0)], &mut rng);
    let want = [0.375, 0.0, 0.625, 0.0, 1.0, 0.0];
    assert!(own.wdl.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-6), "{:?}", own.wdl);
}

/// Use counts of shards that left the window are dropped from the checkpoint (they would
/// otherwise grow it without bound); those still in the window are kept.
#[test]
fn use_counts_of_shards_outside_the_window_are_pruned() {
    let dir = tempfile::tempdir().unwrap();
    let old = write_random_shards(dir.path(), 3, 6, 7);
    let job = TrainJob {
        variant: variant(),
        config: config(4, 8),
        net: tiny_net(),
        generation: 1,
        shards: old.clone(),
        checkpoint: dir.path().join("trainer.ckpt"),
        export_dir: dir.path().join("models/gen-0001"),
        seed: 5,
        teacher_value_share: None,
        teacher_batch_share: None,
        on_step: None,
        stop_after: None,
    };
    train_generation(&job).unwrap();
    let keys = |c: &Checkpoint| c.uses.keys().cloned().collect::<Vec<_>>();
    let after_1 = Checkpoint::load(&job.checkpoint).unwrap().unwrap();
    assert_eq!(keys(&after_1).len(), 3, "{:?}", keys(&after_1));
    // Generation 2's window holds only the last of the old shards.
    let report = train_generation(&TrainJob { generation: 2, shards: vec![old[2].clone()], export_dir: dir.path().join("models/gen-0002"), ..job }).unwrap();
    let after_2 = Checkpoint::load(&dir.path().join("trainer.ckpt")).unwrap().unwrap();
    assert_eq!(keys(&after_2), vec!["gen-0001/game-00000002.shard".to_string()]);
    assert!(after_2.uses_at_generation_start.keys().all(|k| k == "gen-0001/game-00000002.shard"));
    // The use summary covers the window: 6 positions, 4 steps × 8 drawn, each used at
    // least once before (generation 1 drew 32 of 18 positions).
    assert_eq!(report.uses.positions, 6);
    assert_eq!(report.uses.samples_drawn, 32);
    assert!(report.uses.mean_uses > 1.0, "{:?}", report.uses);
}
