//! Trainer checkpoints: weights, optimiser state, progress and sample use counts in one
//! checksummed file, written atomically. A corrupt checkpoint is refused, never guessed at.
//!
//! The random state is the seed plus the progress: a generation's batch order comes from
//! (seed, generation, uses at its start) and each batch's augmentation from (seed,
//! generation, step), so a resumed run draws exactly what an uninterrupted one would.

use crate::data::UseCounts;
use model::NetConfig;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 8] = b"CPRCKPT1";
const VERSION: u32 = 1;

#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct Checkpoint {
    pub net: NetConfig,
    /// Generation being trained (or last trained when `generation_done`).
    pub generation: u32,
    /// Steps done in that generation, and in total.
    pub generation_step: u32,
    pub total_steps: u64,
    pub generation_done: bool,
    /// Sample uses before this generation began (its batch order derives from them) and now.
    pub uses_at_generation_start: UseCounts,
    pub uses: UseCounts,
    pub seed: u64,
    pub weights: Vec<u8>,
    pub optimizer: Vec<u8>,
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
        if version != VERSION {
            return Err(corrupt(format!("version {version}, expected {VERSION}")));
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
        let (c, _) = bincode::serde::decode_from_slice(body, bincode::config::standard()).map_err(|e| corrupt(e.to_string()))?;
        Ok(Some(c))
    }
}
