//! The network as a search evaluator — the one bridge from the network to the search,
//! shared by self-play, the loop's evaluation, the arena and the USI engine: encodes
//! each leaf, runs the whole batch in one call, and turns policy logits into priors over
//! exactly the leaf's legal moves.

use encoding::{ActionSpace, InputPlanes};
use model::{DeviceNet, DeviceSpec, InferenceNet, NetConfig};
use rules::{Game, Variant};
use search::{EvalRequest, Evaluation, Evaluator};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub mod quant;

/// A model directory that cannot play this variant.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error(transparent)]
    Model(#[from] model::ModelIoError),
    #[error(transparent)]
    Device(#[from] model::DeviceError),
    #[error("model {dir}: {problem}")]
    Mismatch { dir: PathBuf, problem: String },
}

/// Loads the model in `dir` as an evaluator for `variant`. A model tagged with another
/// variant or other encoding versions is refused, naming both sides; a difference in rule
/// options other than the start is only warned about (evaluating a model under changed
/// rules is a legitimate experiment), and the start never matters to the network.
pub fn load(dir: &Path, variant: &'static Variant) -> Result<NetEvaluator, LoadError> {
    check_dir_tag(dir, variant)?;
    let net = model::load_inference(dir)?;
    NetEvaluator::new(net, variant).map_err(|problem| LoadError::Mismatch { dir: dir.to_path_buf(), problem })
}

/// Loads the model in `dir` for `variant` to run on `device`: the folded CPU network for
/// `cpu`, burn on the device otherwise (a GPU build; put a `search::BatchingEvaluator` in
/// front so that many search threads fill its batches). A device this build or machine
/// cannot drive is an error naming it.
pub fn load_on(dir: &Path, variant: &'static Variant, device: DeviceSpec) -> Result<NetEvaluator, LoadError> {
    if device == DeviceSpec::Cpu {
        return load(dir, variant);
    }
    check_dir_tag(dir, variant)?;
    let net = DeviceNet::load(dir, device).map_err(|e| match e {
        model::DeviceNetError::Device(e) => LoadError::Device(e),
        model::DeviceNetError::Model(e) => LoadError::Model(e),
    })?;
    NetEvaluator::on_device(net, variant).map_err(|problem| LoadError::Mismatch { dir: dir.to_path_buf(), problem })
}

/// Refuses the model in `dir` if its tag says another variant or other encodings.
fn check_dir_tag(dir: &Path, variant: &Variant) -> Result<(), LoadError> {
    if let Some(tag) = &model::read_manifest(dir)?.game {
        check_tag(tag, variant).map_err(|problem| LoadError::Mismatch { dir: dir.to_path_buf(), problem })?;
    }
    Ok(())
}

/// Whether a model trained for `tag` may play `variant` with this build's encodings.
pub fn check_tag(tag: &model::GameTag, variant: &Variant) -> Result<(), String> {
    use encoding::{ACTION_VERSION, PLANES_VERSION};
    if tag.variant != variant.name {
        return Err(format!("trained for variant {}, asked to play {}", tag.variant, variant.name));
    }
    if tag.planes_version != PLANES_VERSION || tag.action_version != ACTION_VERSION {
        return Err(format!(
            "trained with input planes v{} and action space v{}, this build has v{PLANES_VERSION} and v{ACTION_VERSION}",
            tag.planes_version, tag.action_version
        ));
    }
    let rules_of = |o: &[(String, String)]| o.iter().filter(|(n, _)| n != "start").cloned().collect::<Vec<_>>();
    if rules_of(&tag.options) != rules_of(&variant.options) {
        tracing::warn!("model trained with options {:?}, playing with {:?}", tag.options, variant.options);
    }
    Ok(())
}

/// Saves a network with random weights (seeded) for `variant` into `dir`, tagged with the
/// variant and this build's encodings: what a fresh run starts from, and a legal (if
/// weak) checkpoint for trying the arena, the USI engine or a study end to end.
pub fn save_random_model(variant: &'static Variant, dir: &Path, blocks: usize, channels: usize, seed: u64) -> Result<(), model::ModelIoError> {
    let planes = InputPlanes::new(variant);
    let actions = ActionSpace::new(variant);
    let (h, w) = planes.board_shape();
    let config = model::NetConfig::new(planes.num_planes(), h, w, actions.num_planes()).with_tower(blocks, channels);
    let device = model::cpu_device();
    let net = model::Net::seeded(&config, &device, seed).map_err(|e| model::ModelIoError::Manifest { path: dir.to_path_buf(), message: e.to_string() })?;
    let tag = model::GameTag {
        variant: variant.name.clone(),
        options: variant.options.clone(),
        planes_version: encoding::PLANES_VERSION,
        action_version: encoding::ACTION_VERSION,
    };
    model::save_model_tagged(&net, dir, &tag)
}

/// Where the network runs.
#[derive(Clone)]
enum Backend {
    /// Our folded CPU kernels ([`InferenceNet`]).
    Folded(Arc<InferenceNet>),
    /// burn on a device ([`DeviceNet`]): a GPU, or the CPU in tests.
    Device(Arc<DeviceNet>),
}

impl Backend {
    fn config(&self) -> &NetConfig {
        match self {
            Backend::Folded(n) => n.config(),
            Backend::Device(n) => n.config(),
        }
    }

    fn forward_into(&self, input: &[f32], batch: usize, policy: &mut [f32], value: &mut [f32], serial: bool) {
        match self {
            Backend::Folded(n) if serial => n.forward_serial_into(input, batch, policy, value),
            Backend::Folded(n) => n.forward_into(input, batch, policy, value),
            Backend::Device(n) => n.forward_into(input, batch, policy, value),
        }
    }
}

#[derive(Clone)]
pub struct NetEvaluator {
    net: Backend,
    planes: InputPlanes,
    actions: ActionSpace,
    /// Compute each batch on the calling thread only: right when every core already
    /// runs its own worker (several self-play threads), wrong for a lone worker.
    serial: bool,
}

impl NetEvaluator {
    /// Fails if the network's shape does not fit the variant's encodings.
    pub fn new(net: InferenceNet, variant: &'static Variant) -> Result<NetEvaluator, String> {
        Self::with_backend(Backend::Folded(Arc::new(net)), variant)
    }

    /// The network run by burn on its device (see [`load_on`]).
    pub fn on_device(net: DeviceNet, variant: &'static Variant) -> Result<NetEvaluator, String> {
        Self::with_backend(Backend::Device(Arc::new(net)), variant)
    }

    fn with_backend(net: Backend, variant: &'static Variant) -> Result<NetEvaluator, String> {
        let planes = InputPlanes::new(variant);
        let actions = ActionSpace::new(variant);
        let c = net.config();
        let (h, w) = planes.board_shape();
        if c.input_planes != planes.num_planes() || c.policy_planes != actions.num_planes() || c.board_height != h || c.board_width != w {
            return Err(format!(
                "network expects {} input planes, {} policy planes on {}x{}; variant {} needs {}, {} on {h}x{w}",
                c.input_planes,
                c.policy_planes,
                c.board_height,
                c.board_width,
                variant.name,
                planes.num_planes(),
                actions.num_planes()
            ));
        }
        Ok(NetEvaluator { net, planes, actions, serial: false })
    }

    pub fn serial(mut self, serial: bool) -> NetEvaluator {
        self.serial = serial;
        self
    }
}

impl Evaluator<Game> for NetEvaluator {
    fn evaluate(&self, batch: &[EvalRequest<Game>]) -> Vec<Evaluation> {
        // The thread's buffers, reused: a batch's policy alone is ~50 KB a position, and
        // fresh zeroed buffers each call cost page faults and clearing. Every element is
        // written before it is read (`encode` fills its planes, the heads their outputs).
        // A thread that waits inside a parallel forward pass may run another batch (work
        // stealing): that one gets buffers of its own.
        // Buffers are kept for batches of up to `KEPT_BATCH` positions (~20 MB a thread).
        BUFFERS.with(|cell| match cell.try_borrow_mut() {
            Ok(mut buffers) if batch.len() <= KEPT_BATCH => {
                let (input, policy, value) = &mut *buffers;
                self.evaluate_in(batch, input, policy, value)
            }
            _ => self.evaluate_in(batch, &mut Vec::new(), &mut Vec::new(), &mut Vec::new()),
        })
    }
}

const KEPT_BATCH: usize = 256;

thread_local! {
    /// Input planes, policy logits and value logits of [`NetEvaluator`]'s batches.
    static BUFFERS: std::cell::RefCell<(Vec<f32>, Vec<f32>, Vec<f32>)> = const { std::cell::RefCell::new((Vec::new(), Vec::new(), Vec::new())) };
}

impl NetEvaluator {
    /// The batch evaluated in these buffers (resized to fit): each request's priors
    /// (softmax over its legal moves' logits) and value.
    fn evaluate_in(&self, batch: &[EvalRequest<Game>], input: &mut Vec<f32>, policy: &mut Vec<f32>, value: &mut Vec<f32>) -> Vec<Evaluation> {
        let (c, a) = (self.planes.size(), self.actions.size());
        input.resize(batch.len() * c, 0.0);
        policy.resize(batch.len() * a, 0.0);
        value.resize(batch.len() * 3, 0.0);
        for (i, req) in batch.iter().enumerate() {
            let g = &req.state;
            self.planes.encode(g.position(), g.repetitions(), g.ply(), g.max_plies(), &mut input[i * c..(i + 1) * c]);
        }
        self.net.forward_into(input, batch.len(), policy, value, self.serial);
        batch
            .iter()
            .enumerate()
            .map(|(i, req)| {
                let side = req.state.position().side_to_move();
                let logits = &policy[i * a..(i + 1) * a];
                let mut priors: Vec<f32> = req.moves.iter().map(|&m| logits[self.actions.encode(side, m)]).collect();
                let max = priors.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                let mut sum = 0.0;
                for p in priors.iter_mut() {
                    *p = (*p - max).exp();
                    sum += *p;
                }
                if sum > 0.0 {
                    priors.iter_mut().for_each(|p| *p /= sum);
                }
                let v = &value[i * 3..i * 3 + 3];
                let wdl = model::Wdl::from_logits([v[0], v[1], v[2]]);
                Evaluation { priors, value: wdl.value() }
            })
            .collect()
    }
}

/// What the network thinks of one start position before a move is played, from Black's
/// point of view (the balance research compares these across the start family).
#[derive(Clone, Debug, PartialEq)]
pub struct StartValue {
    /// The start's name in the variant's start family (`seed`, `no-copper`, …).
    pub name: String,
    pub sfen: String,
    /// P(Black wins), P(draw), P(White wins) by the value head.
    pub wdl: [f32; 3],
    /// P(Black wins) − P(White wins), in [−1, 1].
    pub value: f32,
}

impl NetEvaluator {
    /// The value head's W/D/L for the side to move of `games` (one batch): `[win, draw,
    /// loss]`, summing to 1.
    pub fn wdl_batch(&self, games: &[Game]) -> Vec<[f32; 3]> {
        let c = self.planes.size();
        let mut input = vec![0.0f32; games.len() * c];
        for (i, g) in games.iter().enumerate() {
            self.planes.encode(g.position(), g.repetitions(), g.ply(), g.max_plies(), &mut input[i * c..(i + 1) * c]);
        }
        let mut policy = vec![0.0f32; games.len() * self.actions.size()];
        let mut value = vec![0.0f32; games.len() * 3];
        self.net.forward_into(&input, games.len(), &mut policy, &mut value, false);
        value
            .chunks_exact(3)
            .map(|v| {
                let w = model::Wdl::from_logits([v[0], v[1], v[2]]);
                [w.win, w.draw, w.loss]
            })
            .collect()
    }

    /// The value head's W/D/L for the side to move of `game`.
    pub fn wdl(&self, game: &Game) -> [f32; 3] {
        self.wdl_batch(std::slice::from_ref(game))[0]
    }

    /// The network's view of every start of `variant`'s start family, for Black, in games
    /// limited to `max_plies` (the limit is one of the network's inputs).
    pub fn start_values(&self, variant: &'static Variant, max_plies: Option<u32>) -> Vec<StartValue> {
        let family = variant.start_family();
        let games: Vec<Option<Game>> = family.iter().map(|(_, sfen)| rules::Position::from_sfen(variant, sfen).ok().map(|p| Game::new(p, max_plies))).collect();
        let valid: Vec<Game> = games.iter().flatten().cloned().collect();
        let mut wdls = self.wdl_batch(&valid).into_iter();
        family
            .into_iter()
            .zip(games)
            .filter_map(|((name, sfen), game)| {
                let game = game?;
                let w = wdls.next()?;
                // From the side to move to Black.
                let wdl = if game.position().side_to_move() == rules::Color::Black { w } else { [w[2], w[1], w[0]] };
                Some(StartValue { name, sfen, value: wdl[0] - wdl[2], wdl })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tag(variant: &str, options: &[(&str, &str)], planes: u32, action: u32) -> model::GameTag {
        model::GameTag {
            variant: variant.into(),
            options: options.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect(),
            planes_version: planes,
            action_version: action,
        }
    }

    #[test]
    fn a_model_of_another_variant_or_encoding_is_refused() {
        let copper = Variant::builtin("pocket-copper").unwrap();
        let own: Vec<(&str, &str)> = copper.options.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        let (p, a) = (encoding::PLANES_VERSION, encoding::ACTION_VERSION);
        assert!(check_tag(&tag("pocket-copper", &own, p, a), copper).is_ok());
        let e = check_tag(&tag("shogi", &[], p, a), copper).unwrap_err();
        assert!(e.contains("shogi") && e.contains("pocket-copper"), "{e}");
        let e = check_tag(&tag("pocket-copper", &own, p + 1, a), copper).unwrap_err();
        assert!(e.contains(&format!("v{}", p + 1)) && e.contains(&format!("v{p}")), "{e}");
        assert!(check_tag(&tag("pocket-copper", &own, p, a + 1), copper).is_err());
        // Another start is the same game for the network.
        let other_start = Variant::load("pocket-copper", &[("start".into(), "no-copper".into())]).unwrap();
        assert!(check_tag(&tag("pocket-copper", &own, p, a), other_start).is_ok());
    }

    /// The first `n` positions of a game from the start (each move a third of the way
    /// down the legal list), as requests.
    fn positions_of_a_game(v: &'static Variant, n: usize) -> Vec<EvalRequest<Game>> {
        let mut g = Game::new(rules::Position::start(v), None);
        let mut requests = Vec::new();
        for _ in 0..n {
            let moves = rules::Game::legal_moves(&g).to_vec();
            requests.push(EvalRequest { state: g.clone(), moves: moves.clone() });
            g.play_unchecked(moves[moves.len() / 3]);
        }
        requests
    }

    /// A model saved by one backend plays the same through the other: burn on a device
    /// (here the CPU; a GPU in a `cuda` build) and the folded CPU kernels give the same
    /// priors and values on real positions, and the same search picks the same moves.
    #[test]
    fn a_saved_model_plays_the_same_through_both_backends() {
        let dir = std::env::temp_dir().join(format!("neteval-devices-{}", std::process::id()));
        let v = Variant::builtin("pocket-copper").unwrap();
        save_random_model(v, &dir, 2, 16, 9).unwrap();
        let folded = load(&dir, v).unwrap();
        let device = NetEvaluator::on_device(DeviceNet::load(&dir, DeviceSpec::Cpu).unwrap(), v).unwrap();
        let requests = positions_of_a_game(v, 12);
        for (a, b) in folded.evaluate(&requests).iter().zip(device.evaluate(&requests)) {
            assert!((a.value - b.value).abs() < 1e-4, "values {} and {}", a.value, b.value);
            let d = a.priors.iter().zip(&b.priors).map(|(x, y)| (x - y).abs()).fold(0.0f32, f32::max);
            assert!(d < 1e-4, "priors differ by {d}");
        }
        let cfg = search::SearchConfig::gumbel(16).for_evaluation();
        for req in &requests {
            let pick = |e: &NetEvaluator| search::Search::with_seed(req.state.clone(), cfg.clone(), 1).run(e).chosen;
            assert_eq!(pick(&folded), pick(&device), "{}", req.state.position().to_sfen());
        }
        if let Err(why) = DeviceSpec::Cuda(0).device() {
            let e = load_on(&dir, v, DeviceSpec::Cuda(0)).err().expect("no CUDA in this build").to_string();
            assert_eq!(e, why.to_string());
            assert!(e.contains("cuda:0") && e.contains("--features cuda"), "{e}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The buffers a thread keeps between batches carry nothing from one batch to the
    /// next: batches of other sizes, before and after, give each position what a batch of
    /// its own gives it, on both backends.
    #[test]
    fn a_batch_is_evaluated_the_same_whatever_came_before() {
        let dir = std::env::temp_dir().join(format!("neteval-buffers-{}", std::process::id()));
        let v = Variant::builtin("pocket-copper").unwrap();
        save_random_model(v, &dir, 1, 8, 5).unwrap();
        let requests = positions_of_a_game(v, 9);
        let folded = load(&dir, v).unwrap();
        let device = NetEvaluator::on_device(DeviceNet::load(&dir, DeviceSpec::Cpu).unwrap(), v).unwrap();
        for e in [&folded, &device] {
            let alone: Vec<Evaluation> = requests.iter().map(|r| e.evaluate(std::slice::from_ref(r)).remove(0)).collect();
            let exact = |got: &[Evaluation], want: &[Evaluation]| {
                for (a, b) in got.iter().zip(want) {
                    assert!((a.value - b.value).abs() < 1e-5 && a.priors.len() == b.priors.len());
                    assert!(a.priors.iter().zip(&b.priors).all(|(x, y)| (x - y).abs() < 1e-5));
                }
            };
            exact(&e.evaluate(&requests), &alone);
            exact(&e.evaluate(&requests[6..]), &alone[6..]);
            exact(&e.evaluate(&requests[..2]), &alone[..2]);
            exact(&e.evaluate(&requests), &alone);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// `models/gpu-h200-run` was trained and self-played on an H200 through burn's Vulkan
    /// backend (docs/results/gpu-h200-2026-11-27). On the CPU it loads, both CPU backends
    /// agree on it, it is not the model it started from, and it plays a game to its end.
    #[test]
    fn a_model_trained_on_a_gpu_loads_and_plays_on_the_cpu() {
        let models = Path::new(env!("CARGO_MANIFEST_DIR")).join("../models");
        let v = Variant::builtin("pocket-copper").unwrap();
        let gpu_trained = load(&models.join("gpu-h200-run"), v).unwrap();
        let through_burn = NetEvaluator::on_device(DeviceNet::load(&models.join("gpu-h200-run"), DeviceSpec::Cpu).unwrap(), v).unwrap();
        let its_start = load(&models.join("pocket-copper"), v).unwrap();
        let cfg = search::SearchConfig::gumbel(16).for_evaluation();
        let mut g = Game::new(rules::Position::start(v), Some(300));
        let mut largest_change = 0.0f32;
        while !g.is_over() {
            let req = [EvalRequest { state: g.clone(), moves: g.legal_moves().to_vec() }];
            let (a, b) = (&gpu_trained.evaluate(&req)[0], &through_burn.evaluate(&req)[0]);
            assert!((a.value - b.value).abs() < 1e-4, "ply {}: values {} and {}", g.ply(), a.value, b.value);
            largest_change = largest_change.max((a.value - its_start.evaluate(&req)[0].value).abs());
            let m = search::Search::with_seed(g.clone(), cfg.clone(), g.ply() as u64).run(&gpu_trained).chosen.expect("a move");
            g.play(m).expect("the search picks a legal move");
        }
        assert!(g.result().is_some());
        assert!(largest_change > 0.01, "the GPU run changed no value by more than {largest_change}");
    }

    #[test]
    fn load_checks_the_tag_on_disk() {
        let dir = std::env::temp_dir().join(format!("neteval-tag-{}", std::process::id()));
        let shogi = Variant::builtin("shogi").unwrap();
        let planes = InputPlanes::new(shogi);
        let actions = ActionSpace::new(shogi);
        let (h, w) = planes.board_shape();
        let c = model::NetConfig::new(planes.num_planes(), h, w, actions.num_planes()).with_tower(1, 8);
        let net = model::Net::new(&c, &model::cpu_device()).unwrap();
        model::save_model_tagged(&net, &dir, &tag("minishogi", &[], encoding::PLANES_VERSION, encoding::ACTION_VERSION)).unwrap();
        let e = load(&dir, shogi).err().expect("refused").to_string();
        assert!(e.contains("minishogi") && e.contains(&dir.display().to_string()), "{e}");
        model::save_model_tagged(&net, &dir, &tag("shogi", &[], encoding::PLANES_VERSION, encoding::ACTION_VERSION)).unwrap();
        assert!(load(&dir, shogi).is_ok());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
