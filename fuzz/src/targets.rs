//! The parsers soaked, each with its seed corpus.

use crate::{scratch_dir, Target};
use rand::SeedableRng;
use rules::{Game, Position, Variant, BUILTIN};
use std::path::Path;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A few positions of each variant: the starts and positions after random plies (with
/// pieces in hand and, in Pocket Shogi Copper, in pockets).
fn sample_games() -> Vec<Game> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let mut out = Vec::new();
    for name in BUILTIN {
        let v = Variant::builtin(name).unwrap();
        for (_, sfen) in v.start_family() {
            let mut g = Game::new(Position::from_sfen(v, &sfen).unwrap(), None);
            out.push(g.clone());
            for ply in 0..60 {
                let moves = g.legal_moves();
                if moves.is_empty() {
                    break;
                }
                g.play_unchecked(moves[rand::Rng::random_range(&mut rng, 0..moves.len())]);
                if ply % 20 == 19 {
                    out.push(g.clone());
                }
            }
        }
    }
    out
}

/// Input bytes: the variant's index, then the text.
fn variant_of(bytes: &[u8]) -> (&'static Variant, &[u8]) {
    match bytes.split_first() {
        Some((&i, rest)) => (Variant::builtin(BUILTIN[i as usize % BUILTIN.len()]).unwrap(), rest),
        None => (Variant::builtin(BUILTIN[0]).unwrap(), bytes),
    }
}

fn with_variant(v: &Variant, text: &str) -> Vec<u8> {
    let i = BUILTIN.iter().position(|n| *n == v.name).unwrap() as u8;
    let mut out = vec![i];
    out.extend_from_slice(text.as_bytes());
    out
}

fn sfen() -> Target {
    let corpus = sample_games().iter().map(|g| with_variant(g.position().variant(), &g.position().to_sfen())).collect();
    Target {
        name: "sfen",
        what: "Position::from_sfen on every variant; an accepted SFEN written back reads as the same position",
        corpus,
        run: Box::new(|bytes| {
            let (v, rest) = variant_of(bytes);
            match Position::from_sfen(v, &text(rest)) {
                Ok(p) => {
                    let again = Position::from_sfen(v, &p.to_sfen()).expect("an SFEN we wrote reads back");
                    assert_eq!(again.to_sfen(), p.to_sfen());
                    p.legal_moves();
                    true
                }
                Err(e) => {
                    assert!(!e.to_string().is_empty());
                    false
                }
            }
        }),
    }
}

fn usi_move() -> Target {
    let games = sample_games();
    let mut corpus = Vec::new();
    for (i, g) in games.iter().enumerate() {
        for m in g.legal_moves().iter().take(6) {
            let mut input = vec![i as u8];
            input.extend_from_slice(g.position().move_to_usi(*m).as_bytes());
            corpus.push(input);
        }
    }
    Target {
        name: "usi-move",
        what: "Position::parse_usi on sample positions; an accepted move is legal there",
        corpus,
        run: Box::new(move |bytes| {
            let Some((&i, rest)) = bytes.split_first() else { return false };
            let pos = games[i as usize % games.len()].position();
            match pos.parse_usi(&text(rest)) {
                Ok(m) => {
                    assert!(pos.legal_moves().contains(&m), "parse_usi accepted an illegal move");
                    true
                }
                Err(_) => false,
            }
        }),
    }
}

fn usi_protocol() -> Target {
    let corpus: Vec<Vec<u8>> = [
        "position startpos moves 7g7f 3c3d 8h2b+",
        "position sfen lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1 moves 2g2f",
        "go btime 60000 wtime 60000 byoyomi 10000",
        "go nodes 800",
        "go binc 1000 winc 1000 btime 5 wtime 5",
        "go depth 3 movetime 200 infinite ponder",
        "setoption name USI_VariantOptions value start=seed,clock=off",
        "info depth 12 seldepth 20 score cp -153 nodes 120000 nps 800000 time 150 pv 7g7f 3c3d",
        "info depth 3 score mate -5 lowerbound multipv 1 pv 2g2f",
    ]
    .iter()
    .enumerate()
    .map(|(i, s)| {
        let mut v = vec![(i % BUILTIN.len()) as u8];
        v.extend_from_slice(s.as_bytes());
        v
    })
    .collect();
    Target {
        name: "usi-protocol",
        what: "the USI engine's position/go/setoption parsers and the client's info-line parser",
        corpus,
        run: Box::new(|bytes| {
            let (v, rest) = variant_of(bytes);
            let line = text(rest);
            let (word, args) = line.split_once(' ').unwrap_or((&line, ""));
            match word {
                "position" => usi::command::parse_position(v, args).is_ok(),
                "go" => {
                    players::usi_server::parse_go(args, players::Limit::Nodes(1));
                    true
                }
                "setoption" => usi::command::parse_variant_options(args.rsplit(" value ").next().unwrap_or("")).is_ok(),
                _ => usi::client::EngineInfo::parse_scored(&line).is_some(),
            }
        }),
    }
}

fn variant_file() -> Target {
    let corpus = BUILTIN.iter().map(|n| rules::builtin_source(n).unwrap().as_bytes().to_vec()).collect();
    Target {
        name: "variant",
        what: "Variant::from_toml on mutated shipped variant files (an accepted one has a playable start)",
        corpus,
        run: Box::new(|bytes| Variant::from_toml(&text(bytes), &[]).is_ok()),
    }
}

fn config(root: &Path, scratch: &Path) -> Target {
    let configs = root.join("configs");
    let mut corpus = Vec::new();
    for entry in std::fs::read_dir(&configs).unwrap().chain(std::fs::read_dir(configs.join("arena")).unwrap()) {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            corpus.push(std::fs::read(&path).unwrap());
        }
    }
    corpus.sort();
    let dir = scratch_dir(scratch, "config");
    let file = dir.join("config.toml");
    Target {
        name: "config",
        what: "the loop's, the arena's and the balance study's config loaders, and player specs",
        corpus,
        run: Box::new(move |bytes| {
            std::fs::write(&file, bytes).unwrap();
            let run = pipeline::RunConfig::load(&file).is_ok();
            let arena = arena::TournamentConfig::load(&file).is_ok();
            let balance = balance::StudyConfig::load(&file).is_ok();
            let spec = players::PlayerSpec::parse(text(bytes).lines().next().unwrap_or("")).is_ok();
            run || arena || balance || spec
        }),
    }
}

/// A real shard: the records of a short random game of Pocket Shogi Copper.
fn seed_shard() -> (records::ShardHeader, Vec<records::Record>) {
    let v = Variant::builtin("pocket-copper").unwrap();
    let actions = encoding::ActionSpace::new(v);
    let mut g = Game::new(Position::start(v), Some(320));
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
    let mut recs = Vec::new();
    for ply in 0..12u16 {
        let moves = g.legal_moves();
        let share = 1.0 / moves.len() as f32;
        let side = g.position().side_to_move();
        recs.push(records::Record {
            sfen: g.position().to_sfen(),
            repetitions: 1,
            ply,
            max_plies: 320,
            policy: if ply % 2 == 0 { moves.iter().map(|&m| (actions.encode(side, m) as u32, share)).collect() } else { Vec::new() },
            full_search: ply % 2 == 0,
            search_value: 0.25,
            result: if ply % 2 == 0 { 1 } else { -1 },
            start: "seed".into(),
            game_id: 3,
        });
        g.play_unchecked(moves[rand::Rng::random_range(&mut rng, 0..moves.len())]);
    }
    let header = records::ShardHeader {
        variant: v.name.clone(),
        options: v.options.clone(),
        planes_version: encoding::PLANES_VERSION,
        action_version: encoding::ACTION_VERSION,
        generation: 1,
        games: 1,
    };
    (header, recs)
}

const SHARD_FIXED_LEN: usize = 32;

/// Puts valid lengths and checksum around a mutated shard file (when it still has a
/// header), so that the mutation reaches the decoders behind the checksum.
fn reframe_shard(bytes: &mut [u8]) {
    if bytes.len() < SHARD_FIXED_LEN {
        return;
    }
    let rest = bytes.len() - SHARD_FIXED_LEN;
    let head_len = (u64::from_le_bytes(bytes[16..24].try_into().unwrap()) as usize).min(rest);
    bytes[16..24].copy_from_slice(&(head_len as u64).to_le_bytes());
    bytes[24..32].copy_from_slice(&((rest - head_len) as u64).to_le_bytes());
    let crc = crc32fast::hash(&bytes[SHARD_FIXED_LEN..]);
    bytes[12..16].copy_from_slice(&crc.to_le_bytes());
}

/// Reads a shard file the way the trainer does: decode, then turn every record into
/// network inputs and targets (records that do not fit the variant must be refused).
fn read_like_the_trainer(path: &Path) -> bool {
    let v = Variant::builtin("pocket-copper").unwrap();
    let shard_ok = records::read_shard(path).is_ok();
    let window = trainer::data::Window::load(v, &[path.to_path_buf()], 0.0);
    if !window.train.is_empty() {
        let batcher = trainer::data::Batcher::new(v, true);
        let recs: Vec<&records::Record> = window.train.iter().map(|s| &s.record).collect();
        batcher.build(&recs, &mut rand_chacha::ChaCha8Rng::seed_from_u64(1));
    }
    shard_ok && window.skipped.is_empty()
}

fn shard_file(scratch: &Path) -> Target {
    let dir = scratch_dir(scratch, "shard-file");
    let path = dir.join("game.shard");
    let (header, recs) = seed_shard();
    records::write_shard(&path, &header, &recs).unwrap();
    let corpus = vec![std::fs::read(&path).unwrap()];
    Target {
        name: "shard-file",
        what: "read_shard and the trainer's window on mutated shard files, re-framed (lengths, CRC) half the time",
        corpus,
        run: Box::new(move |bytes| {
            let mut bytes = bytes.to_vec();
            if bytes.len() % 2 == 0 {
                reframe_shard(&mut bytes);
            }
            std::fs::write(&path, &bytes).unwrap();
            read_like_the_trainer(&path)
        }),
    }
}

fn shard_records(scratch: &Path) -> Target {
    let dir = scratch_dir(scratch, "shard-records");
    let path = dir.join("game.shard");
    let (header, recs) = seed_shard();
    let head = bincode::serde::encode_to_vec(&header, bincode::config::standard()).unwrap();
    let corpus = vec![bincode::serde::encode_to_vec(&recs, bincode::config::standard()).unwrap()];
    Target {
        name: "shard-records",
        what: "the records stream inside a valid shard frame (deflated, checksummed): decoding and the trainer's checks",
        corpus,
        run: Box::new(move |raw| {
            std::fs::write(&path, frame_shard(&head, raw)).unwrap();
            read_like_the_trainer(&path)
        }),
    }
}

fn frame_shard(head: &[u8], raw: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut z = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
    z.write_all(raw).unwrap();
    let body = z.finish().unwrap();
    let mut out = b"CPRSHARD".to_vec();
    out.extend_from_slice(&records::FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&(head.len() as u64).to_le_bytes());
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(head);
    out.extend_from_slice(&body);
    reframe_shard(&mut out);
    out
}

fn tiny_net() -> model::Net {
    let config = model::NetConfig {
        input_planes: 6,
        board_height: 3,
        board_width: 3,
        policy_planes: 4,
        blocks: 1,
        channels: 8,
        policy_head_channels: 2,
        value_head_channels: 1,
        value_hidden: 8,
        bn_epsilon: 1e-5,
        bn_momentum: 0.1,
    };
    model::Net::new(&config, &model::cpu_device()).unwrap()
}

fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

/// Loads the model in `dir` for inference and runs it once on zeros.
fn load_and_run(dir: &Path) -> bool {
    match model::load_inference(dir) {
        Ok(net) => {
            let n = net.config().input_len();
            net.forward(&vec![0.0; n], 1);
            true
        }
        Err(e) => {
            assert!(!e.to_string().is_empty());
            false
        }
    }
}

fn model_manifest(scratch: &Path) -> Target {
    let dir = scratch_dir(scratch, "model-manifest");
    model::save_model(&tiny_net(), &dir).unwrap();
    let manifest = dir.join(model::store::CONFIG_FILE);
    let corpus = vec![std::fs::read(&manifest).unwrap()];
    Target {
        name: "model-manifest",
        what: "load_inference with a mutated model.json (weights intact)",
        corpus,
        run: Box::new(move |bytes| {
            std::fs::write(&manifest, bytes).unwrap();
            load_and_run(&dir)
        }),
    }
}

fn model_weights(scratch: &Path) -> Target {
    let dir = scratch_dir(scratch, "model-weights");
    model::save_model(&tiny_net(), &dir).unwrap();
    let manifest_path = dir.join(model::store::CONFIG_FILE);
    let manifest: serde_json::Value = serde_json::from_slice(&std::fs::read(&manifest_path).unwrap()).unwrap();
    let weights = dir.join(manifest["weights"].as_str().unwrap());
    let corpus = vec![std::fs::read(&weights).unwrap()];
    Target {
        name: "model-weights",
        what: "load_inference with mutated weights, the manifest's size and hash updated so decoding is reached",
        corpus,
        run: Box::new(move |bytes| {
            let mut m = manifest.clone();
            m["weights_bytes"] = bytes.len().into();
            m["weights_fnv1a64"] = format!("{:016x}", fnv1a64(bytes)).into();
            std::fs::write(&manifest_path, serde_json::to_vec(&m).unwrap()).unwrap();
            std::fs::write(&weights, bytes).unwrap();
            load_and_run(&dir)
        }),
    }
}

fn checkpoint(scratch: &Path) -> Target {
    let dir = scratch_dir(scratch, "checkpoint");
    let path = dir.join("trainer.ckpt");
    let net = tiny_net();
    let ckpt = trainer::Checkpoint {
        net: net.config().clone(),
        generation: 2,
        generation_step: 3,
        total_steps: 9,
        generation_done: false,
        uses_at_generation_start: Default::default(),
        uses: Default::default(),
        seed: 1,
        weights: model::store::weights_to_bytes(&net),
        optimizer: Vec::new(),
        generation_losses: vec![trainer::StepLoss { step: 9, total: 3.0, policy: 2.0, value: 1.0 }],
        generation_seconds: 1.5,
        generation_order: vec![4, 0, 7],
        generation_order_key: 0,
    };
    ckpt.save(&path).unwrap();
    let corpus = vec![std::fs::read(&path).unwrap()];
    Target {
        name: "checkpoint",
        what: "Checkpoint::load on mutated checkpoints, re-framed (length, CRC) half the time, then its weights decoded",
        corpus,
        run: Box::new(move |bytes| {
            let mut bytes = bytes.to_vec();
            if bytes.len() >= 20 && bytes.len() % 2 == 0 {
                let len = (bytes.len() - 20) as u32;
                bytes[16..20].copy_from_slice(&len.to_le_bytes());
                let crc = crc32fast::hash(&bytes[20..]);
                bytes[12..16].copy_from_slice(&crc.to_le_bytes());
            }
            std::fs::write(&path, &bytes).unwrap();
            match trainer::Checkpoint::load(&path) {
                Ok(Some(c)) => {
                    if c.net.validate().is_ok() && c.net.channels <= 64 && c.net.blocks <= 4 {
                        let _ = model::store::net_from_bytes(&c.net, c.weights, &model::cpu_train_device(), &path);
                    }
                    true
                }
                Ok(None) => false,
                Err(e) => {
                    assert!(!e.to_string().is_empty());
                    false
                }
            }
        }),
    }
}

/// Every target; `root` is the repository (for the shipped configs), `scratch` a
/// directory the file-based targets may write in.
/// The arena's CSA and KIF readers: the first byte picks the format.
fn game_records() -> Target {
    let mut corpus = Vec::new();
    for g in sample_games().iter().filter(|g| g.position().variant().name == "shogi") {
        let r = gamerecords::GameRecord::from_game(g, None, "black", "white");
        for (i, text) in [r.to_csa(), r.to_kif()].into_iter().enumerate() {
            let mut input = vec![i as u8];
            input.extend_from_slice(text.expect("a shogi record writes").as_bytes());
            corpus.push(input);
        }
    }
    Target {
        name: "game-records",
        what: "gamerecords::csa::from_csa and kif::from_kif; an accepted record replays in the rules engine",
        corpus,
        run: Box::new(|bytes| {
            let Some((&i, rest)) = bytes.split_first() else { return false };
            let t = text(rest);
            let read = if i % 2 == 0 { gamerecords::csa::from_csa(&t) } else { gamerecords::kif::from_kif(&t) };
            match read {
                Ok(r) => {
                    let v = r.load_variant().expect("a record read names shogi");
                    r.to_game(v).expect("an accepted record replays");
                    true
                }
                Err(e) => {
                    assert!(!e.to_string().is_empty());
                    false
                }
            }
        }),
    }
}

pub fn targets(root: &Path, scratch: &Path) -> Vec<Target> {
    vec![
        sfen(),
        usi_move(),
        game_records(),
        usi_protocol(),
        variant_file(),
        config(root, scratch),
        shard_file(scratch),
        shard_records(scratch),
        model_manifest(scratch),
        model_weights(scratch),
        checkpoint(scratch),
    ]
}
