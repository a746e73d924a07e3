//! Trainer checkpoints: weights, optimiser state, progress and sample use counts in one
//! checksummed file, written atomically. A corrupt checkpoint is refused, never guessed at.
//!
//! The random state is the seed plus the progress: a generation's batch order comes from
//! (seed, generation, uses at its start) and each batch's augmentation from (seed,
//! generation, step), so a resumed run draws exactly what an uninterrupted one would.

use crate::data::UseCounts;
use crate::train::StepLoss;
use model::NetConfig;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 8] = b"CPRCKPT1";
/// 2 added the generation's losses and seconds, 3 its batch order; version-1 and 2 files
/// still load (with none).
const VERSION: u32 = 3;

#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct Checkpoint {
    pub net: NetConfig,
    /// Generation being trained (or last trained when `generation_done`).
    pub generation: u32,
    /// Steps done in that generation, and in total (since the optimiser's state was
    /// fresh: a checkpoint started from a model counts from 0, and so does its warm-up).
    pub generation_step: u32,
    pub total_steps: u64,
    pub generation_done: bool,
    /// Sample uses before this generation began (its batch order derives from them) and now.
    pub uses_at_generation_start: UseCounts,
    pub uses: UseCounts,
    pub seed: u64,
    pub weights: Vec<u8>,
    pub optimizer: Vec<u8>,
    /// Losses of the generation's steps up to `generation_step`, and the seconds spent
    /// training it, so a generation killed mid-training reports all its steps on resume.
    pub generation_losses: Vec<StepLoss>,
    pub generation_seconds: f64,
    /// The generation's batch order (indices into its window's training samples) where it
    /// depends on the network it started from (policy-surprise weighting), so that a
    /// resumed generation draws what it would have; empty: the order derives from the seed.
    pub generation_order: Vec<u32>,
    /// What that order was drawn from (the window's shards and the settings that shape it):
    /// a resumed generation whose key differs draws a new order.
    pub generation_order_key: u64,
}

/// The version-1 layout, read so that runs checkpointed before version 2 resume.
#[derive(Deserialize)]
#[cfg_attr(test, derive(Serialize))]
struct CheckpointV1 {
    net: NetConfig,
    generation: u32,
    generation_step: u32,
    total_steps: u64,
    generation_done: bool,
    uses_at_generation_start: UseCounts,
    uses: UseCounts,
    seed: u64,
    weights: Vec<u8>,
    optimizer: Vec<u8>,
}

/// The version-2 layout: version 1's fields, then these (bincode writes a nested struct's
/// fields in place, so this is the flat layout version 2 wrote).
#[derive(Deserialize)]
struct CheckpointV2 {
    v1: CheckpointV1,
    generation_losses: Vec<StepLoss>,
    generation_seconds: f64,
}

impl From<CheckpointV1> for CheckpointV2 {
    fn from(v1: CheckpointV1) -> CheckpointV2 {
        CheckpointV2 { v1, generation_losses: Vec::new(), generation_seconds: 0.0 }
    }
}

impl From<CheckpointV2> for Checkpoint {
    fn from(c: CheckpointV2) -> Checkpoint {
        let v1 = c.v1;
        Checkpoint {
            net: v1.net,
            generation: v1.generation,
            generation_step: v1.generation_step,
            total_steps: v1.total_steps,
            generation_done: v1.generation_done,
            uses_at_generation_start: v1.uses_at_generation_start,
            uses: v1.uses,
            seed: v1.seed,
            weights: v1.weights,
            optimizer: v1.optimizer,
            generation_losses: c.generation_losses,
            generation_seconds: c.generation_seconds,
            generation_order: Vec::new(),
            generation_order_key: 0,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}: not a trainer checkpoint, or truncated or corrupt ({problem}); refusing to use it — move it aside to start training afresh")]
    Corrupt { path: PathBuf, problem: String },
}

impl Checkpoint {
    pub fn save(&self, path: &Path) -> Result<(), CheckpointError> {
        let body = bincode::serde::encode_to_vec(self, bincode::config::standard()).expect("checkpoints serialise");
        let mut out = Vec::with_capacity(body.len() + 20);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&crc32fast::hash(&body).to_le_bytes());
        out.extend_from_slice(&(body.len() as u32).to_le_bytes());
        out.extend_from_slice(&body);
        records::write_atomic(path, &out).map_err(|source| CheckpointError::Io { path: path.to_path_buf(), source })
    }

    /// `Ok(None)` when there is no checkpoint yet.
    pub fn load(path: &Path) -> Result<Option<Checkpoint>, CheckpointError> {
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(CheckpointError::Io { path: path.to_path_buf(), source }),
        };
        let corrupt = |problem: String| CheckpointError::Corrupt { path: path.to_path_buf(), problem };
        if bytes.len() < 20 || &bytes[..8] != MAGIC {
            return Err(corrupt("bad header".into()));
        }
        let version = u32::from_le_bytes(bytes[8..12].try_into().unwrap());
        if !(1..=VERSION).contains(&version) {
            return Err(corrupt(format!("version {version}, expected 1 to {VERSION}")));
        }
        let crc = u32::from_le_bytes(bytes[12..16].try_into().unwrap());
        let len = u32::from_le_bytes(bytes[16..20].try_into().unwrap()) as usize;
        let body = &bytes[20..];
        if body.len() != len {
            return Err(corrupt(format!("{} body bytes, header says {len}", body.len())));
        }
        if crc32fast::hash(body) != crc {
            return Err(corrupt("checksum mismatch".into()));
        }
        let config = bincode::config::standard();
        // A body must decode whole: a layout read with another version's fields would
        // otherwise stop early and leave bytes unread.
        fn whole<T>(r: Result<(T, usize), bincode::error::DecodeError>, len: usize) -> Result<T, String> {
            match r {
                Ok((c, used)) if used == len => Ok(c),
                Ok((_, used)) => Err(format!("{} of {len} body bytes decoded", used)),
                Err(e) => Err(e.to_string()),
            }
        }
        let c = match version {
            1 => whole(bincode::serde::decode_from_slice::<CheckpointV1, _>(body, config), len).map(|c| CheckpointV2::from(c).into()),
            2 => whole(bincode::serde::decode_from_slice::<CheckpointV2, _>(body, config), len).map(Checkpoint::from),
            _ => whole(bincode::serde::decode_from_slice::<Checkpoint, _>(body, config), len),
        };
        Ok(Some(c.map_err(corrupt)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v1() -> CheckpointV1 {
        CheckpointV1 {
            net: NetConfig {
                input_planes: 4,
                board_height: 3,
                board_width: 3,
                policy_planes: 2,
                blocks: 1,
                channels: 8,
                policy_head_channels: 2,
                value_head_channels: 1,
                value_hidden: 8,
                bn_epsilon: 1e-5,
                bn_momentum: 0.1,
            },
            generation: 3,
            generation_step: 40,
            total_steps: 340,
            generation_done: false,
            uses_at_generation_start: Default::default(),
            uses: Default::default(),
            seed: 7,
            weights: vec![1, 2, 3],
            optimizer: vec![4, 5],
        }
    }

    fn file(version: u32, body: &[u8]) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&version.to_le_bytes());
        out.extend_from_slice(&crc32fast::hash(body).to_le_bytes());
        out.extend_from_slice(&(body.len() as u32).to_le_bytes());
        out.extend_from_slice(body);
        out
    }

    #[test]
    fn a_version_1_checkpoint_still_resumes_with_no_earlier_losses() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trainer.ckpt");
        let body = bincode::serde::encode_to_vec(v1(), bincode::config::standard()).unwrap();
        std::fs::write(&path, file(1, &body)).unwrap();
        let c = Checkpoint::load(&path).unwrap().unwrap();
        assert_eq!((c.generation, c.generation_step, c.total_steps, c.seed), (3, 40, 340, 7));
        assert_eq!((c.weights, c.optimizer), (vec![1, 2, 3], vec![4, 5]));
        assert!(c.generation_losses.is_empty());
        // The same body under a later version is not a checkpoint of that version: refused,
        // not guessed.
        std::fs::write(&path, file(2, &body)).unwrap();
        assert!(matches!(Checkpoint::load(&path), Err(CheckpointError::Corrupt { .. })));
        std::fs::write(&path, file(3, &body)).unwrap();
        assert!(matches!(Checkpoint::load(&path), Err(CheckpointError::Corrupt { .. })));
        std::fs::write(&path, file(4, &body)).unwrap();
        let e = Checkpoint::load(&path).unwrap_err().to_string();
        assert!(e.contains("version 4, expected 1 to 3"), "{e}");
    }

    #[test]
    fn a_version_2_checkpoint_still_resumes_with_its_losses_and_no_stored_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trainer.ckpt");
        // Version 2 as it wrote itself: version 1's fields, then the losses and seconds.
        let cfg = bincode::config::standard();
        let mut body = bincode::serde::encode_to_vec(CheckpointV1 { generation: 5, generation_step: 50, total_steps: 800, seed: 9, ..v1() }, cfg).unwrap();
        body.extend(bincode::serde::encode_to_vec(vec![StepLoss { step: 800, total: 3.0, policy: 2.5, value: 0.5 }], cfg).unwrap());
        body.extend(bincode::serde::encode_to_vec(4.0f64, cfg).unwrap());
        std::fs::write(&path, file(2, &body)).unwrap();
        let c = Checkpoint::load(&path).unwrap().unwrap();
        assert_eq!((c.generation, c.generation_step, c.total_steps, c.seed), (5, 50, 800, 9));
        assert_eq!((c.generation_losses.len(), c.generation_seconds), (1, 4.0));
        assert!(c.generation_order.is_empty());
    }

    #[test]
    fn losses_and_seconds_survive_a_save_and_load() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trainer.ckpt");
        let mut c: Checkpoint = CheckpointV2::from(v1()).into();
        c.generation_losses = vec![StepLoss { step: 341, total: 2.5, policy: 2.0, value: 0.5 }];
        c.generation_seconds = 12.5;
        c.save(&path).unwrap();
        let back = Checkpoint::load(&path).unwrap().unwrap();
        assert_eq!(back.generation_losses, c.generation_losses);
        assert_eq!(back.generation_seconds, 12.5);
    }
}
