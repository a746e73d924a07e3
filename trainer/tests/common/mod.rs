#![allow(dead_code)]
use encoding::{ActionSpace, InputPlanes, ACTION_VERSION, PLANES_VERSION};
use model::NetConfig;
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use records::{write_shard, Record, ShardHeader};
use rules::{Game, Position, Variant};
use std::path::{Path, PathBuf};
use trainer::{TrainJob, TrainerConfig};

pub fn variant() -> &'static Variant {
    Variant::builtin("minishogi").unwrap()
}

/// `games` shards of random-play records with one-hot policy targets on a random legal move.
pub fn write_random_shards(dir: &Path, games: u64, plies: usize, seed: u64) -> Vec<PathBuf> {
    let v = variant();
    let actions = ActionSpace::new(v);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..games)
        .map(|game_id| {
            let mut g = Game::new(Position::start(v), None);
            let mut records = Vec::new();
            let result: i8 = rng.random_range(-1..=1);
            for _ in 0..plies {
                let moves = g.legal_moves();
                let Some(&m) = moves.choose(&mut rng) else { break };
                let pos = g.position();
                records.push(Record {
                    sfen: pos.to_sfen(),
                    repetitions: g.repetitions() as u8,
                    ply: g.ply() as u16,
                    max_plies: 256,
                    policy: vec![(actions.encode(pos.side_to_move(), m) as u32, 1.0)],
                    full_search: true,
                    search_value: 0.0,
                    result: if g.ply().is_multiple_of(2) { result } else { -result },
                    start: "default".into(),
                    game_id,
                });
                g.play_unchecked(m);
            }
            let header = ShardHeader {
                variant: v.name.clone(),
                options: v.options.clone(),
                planes_version: PLANES_VERSION,
                action_version: ACTION_VERSION,
                generation: 1,
                games: 1,
            };
            let path = dir.join(format!("gen-0001/game-{game_id:08}.shard"));
            write_shard(&path, &header, &records).unwrap();
            path
        })
        .collect()
}

pub fn tiny_net() -> NetConfig {
    let v = variant();
    let planes = InputPlanes::new(v);
    let actions = ActionSpace::new(v);
    let (h, w) = planes.board_shape();
    NetConfig {
        input_planes: planes.num_planes(),
        board_height: h,
        board_width: w,
        policy_planes: actions.num_planes(),
        blocks: 2,
        channels: 16,
        policy_head_channels: 16,
        value_head_channels: 4,
        value_hidden: 32,
        bn_epsilon: 1e-5,
        bn_momentum: 0.1,
    }
}

pub fn config(steps: u32, batch: usize) -> TrainerConfig {
    TrainerConfig {
        batch_size: batch,
        steps_per_generation: steps,
        learning_rate: 3e-3,
        weight_decay: 0.0,
        max_sample_uses: 255,
        validation_fraction: 0.0,
        checkpoint_every: 2,
        ..TrainerConfig::default()
    }
}

/// The model exported for `generation` under `dir`: its outputs on a fixed input, bit for
/// bit (the weights files also hold random parameter ids, so their bytes differ between
/// runs).
pub fn outputs(dir: &Path, generation: u32) -> Vec<u32> {
    let net = model::load_inference(&dir.join(format!("models/gen-{generation:04}"))).unwrap();
    let n = net.config().input_len() * 4;
    let input: Vec<f32> = (0..n).map(|i| ((i * 7919) % 13) as f32 / 13.0).collect();
    let out = net.forward(&input, 4);
    out.policy.iter().chain(out.value.iter()).map(|x| x.to_bits()).collect()
}

/// Generation `generation` of a run in `dir` (checkpoint `trainer.ckpt`, models under
/// `models/`): the tiny network, `steps` steps of 8 positions, seed 11.
pub fn run_job<'a>(dir: &Path, shards: &[PathBuf], generation: u32, steps: u32, stop_after: Option<u32>) -> TrainJob<'a> {
    TrainJob {
        variant: variant(),
        config: config(steps, 8),
        net: tiny_net(),
        generation,
        shards: shards.to_vec(),
        checkpoint: dir.join("trainer.ckpt"),
        export_dir: dir.join(format!("models/gen-{generation:04}")),
        seed: 11,
        teacher_value_share: None,
        teacher_batch_share: None,
        on_step: None,
        stop_after,
    }
}
