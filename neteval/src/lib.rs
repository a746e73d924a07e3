//! The network as a search evaluator — the one bridge from the network to the search,
//! shared by self-play, the loop's evaluation, the arena and the USI engine: encodes
//! each leaf, runs the whole batch in one call, and turns policy logits into priors over
//! exactly the leaf's legal moves.

use encoding::{ActionSpace, InputPlanes};
use model::InferenceNet;
use rules::{Game, Variant};
use search::{EvalRequest, Evaluation, Evaluator};
use std::path::{Path, PathBuf};

/// A model directory that cannot play this variant.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error(transparent)]
    Model(#[from] model::ModelIoError),
    #[error("model {dir}: {problem}")]
    Mismatch { dir: PathBuf, problem: String },
}

/// Loads the model in `dir` as an evaluator for `variant`.
pub fn load(dir: &Path, variant: &'static Variant) -> Result<NetEvaluator, LoadError> {
    let net = model::load_inference(dir)?;
    NetEvaluator::new(net, variant).map_err(|problem| LoadError::Mismatch { dir: dir.to_path_buf(), problem })
}

#[derive(Clone)]
pub struct NetEvaluator {
    net: InferenceNet,
    planes: InputPlanes,
    actions: ActionSpace,
    /// Compute each batch on the calling thread only: right when every core already
    /// runs its own worker (several self-play threads), wrong for a lone worker.
    serial: bool,
}

impl NetEvaluator {
    /// Fails if the network's shape does not fit the variant's encodings.
    pub fn new(net: InferenceNet, variant: &'static Variant) -> Result<NetEvaluator, String> {
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
        let c = self.planes.size();
        let mut input = vec![0.0f32; batch.len() * c];
        for (i, req) in batch.iter().enumerate() {
            let g = &req.state;
            self.planes.encode(g.position(), g.repetitions(), g.ply(), g.max_plies(), &mut input[i * c..(i + 1) * c]);
        }
        let a = self.actions.size();
        let mut policy = vec![0.0f32; batch.len() * a];
        let mut value = vec![0.0f32; batch.len() * 3];
        if self.serial {
            self.net.forward_serial_into(&input, batch.len(), &mut policy, &mut value);
        } else {
            self.net.forward_into(&input, batch.len(), &mut policy, &mut value);
        }
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
