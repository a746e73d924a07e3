//! Shard files of training records.

use crate::atomic::write_atomic;
use serde::{Deserialize, Serialize};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 8] = b"CPRSHARD";
/// Bump on any change to [`Record`] or [`ShardHeader`].
pub const FORMAT_VERSION: u32 = 1;
/// magic, version, crc32, header length, body length.
const FIXED_LEN: usize = 8 + 4 + 4 + 8 + 8;

/// What every record of a shard shares.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct ShardHeader {
    pub variant: String,
    /// Rule options as (name, choice).
    pub options: Vec<(String, String)>,
    /// Versions of the encodings the policy indices refer to.
    pub planes_version: u32,
    pub action_version: u32,
    /// Generation of the model that played these games (0 = the stand-in evaluator).
    pub generation: u32,
    pub games: u32,
}

/// One training sample: a position and what the search and the game said about it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Record {
    /// The position (with the pocket extension where the variant has pockets).
    pub sfen: String,
    /// Times this position had occurred in its game, this one included.
    pub repetitions: u8,
    /// Plies played before this position, and the game's length limit.
    pub ply: u16,
    pub max_plies: u16,
    /// Search policy target over the legal moves as (action index, probability);
    /// empty when the move had no full search (playout-cap randomisation).
    pub policy: Vec<(u32, f32)>,
    /// Whether this move had a full search (and so a policy target).
    pub full_search: bool,
    /// Root value of the search for the side to move, in [-1, 1].
    pub search_value: f32,
    /// Final result for the side to move: +1 win, 0 draw, -1 loss.
    pub result: i8,
    /// Name of the start position in the variant's family (or "sfen").
    pub start: String,
    /// Game identifier, unique within the run (validation splits by game).
    pub game_id: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}: not a training-record shard (bad magic)")]
    BadMagic { path: PathBuf },
    #[error("{path}: record format version {found}, this build reads {expected}")]
    Version { path: PathBuf, found: u32, expected: u32 },
    #[error("{path}: truncated: {problem}")]
    Truncated { path: PathBuf, problem: String },
    #[error("{path}: checksum mismatch (stored {stored:#010x}, computed {computed:#010x}): the file is corrupt")]
    Checksum { path: PathBuf, stored: u32, computed: u32 },
    #[error("{path}: cannot decode: {problem}")]
    Decode { path: PathBuf, problem: String },
}

/// A shard read back from disk.
#[derive(Clone, Debug, PartialEq)]
pub struct Shard {
    pub header: ShardHeader,
    pub records: Vec<Record>,
}

fn config() -> bincode::config::Configuration {
    bincode::config::standard()
}

/// Largest shard file read (a shard holds one game: a few hundred KiB).
pub const MAX_SHARD_BYTES: u64 = 256 << 20;
/// Largest decompressed body, and the most bytes a decoder may claim for containers: a
/// crafted length prefix or a deflate bomb is an error, never gigabytes allocated.
pub const MAX_DECODED_BYTES: usize = 1 << 30;

fn decode_config() -> bincode::config::Configuration<bincode::config::LittleEndian, bincode::config::Varint, bincode::config::Limit<MAX_DECODED_BYTES>> {
    bincode::config::standard().with_limit::<MAX_DECODED_BYTES>()
}

/// Writes a shard atomically.
pub fn write_shard(path: &Path, header: &ShardHeader, records: &[Record]) -> Result<(), RecordError> {
    let io = |source| RecordError::Io { path: path.to_path_buf(), source };
    let head = bincode::serde::encode_to_vec(header, config()).expect("headers serialize");
    let raw = bincode::serde::encode_to_vec(records, config()).expect("records serialize");
    let mut z = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
    z.write_all(&raw).map_err(io)?;
    let body = z.finish().map_err(io)?;
    let mut crc = crc32fast::Hasher::new();
    crc.update(&head);
    crc.update(&body);
    let mut out = Vec::with_capacity(FIXED_LEN + head.len() + body.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&crc.finalize().to_le_bytes());
    out.extend_from_slice(&(head.len() as u64).to_le_bytes());
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(&head);
    out.extend_from_slice(&body);
    write_atomic(path, &out).map_err(io)
}

/// Reads and verifies a shard; every failure names the file.
pub fn read_shard(path: &Path) -> Result<Shard, RecordError> {
    let p = || path.to_path_buf();
    let size = std::fs::metadata(path).map_err(|source| RecordError::Io { path: p(), source })?.len();
    if size > MAX_SHARD_BYTES {
        return Err(RecordError::Decode { path: p(), problem: format!("{size} bytes, more than a shard may hold ({MAX_SHARD_BYTES})") });
    }
    let bytes = std::fs::read(path).map_err(|source| RecordError::Io { path: p(), source })?;
    if bytes.len() < FIXED_LEN {
        if bytes.len() >= 8 && &bytes[..8] != MAGIC {
            return Err(RecordError::BadMagic { path: p() });
        }
        return Err(RecordError::Truncated { path: p(), problem: format!("{} bytes, shorter than the {FIXED_LEN}-byte header", bytes.len()) });
    }
    if &bytes[..8] != MAGIC {
        return Err(RecordError::BadMagic { path: p() });
    }
    let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().unwrap());
    let u64_at = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().unwrap());
    let version = u32_at(8);
    if version != FORMAT_VERSION {
        return Err(RecordError::Version { path: p(), found: version, expected: FORMAT_VERSION });
    }
    let stored = u32_at(12);
    let (head_len, body_len) = (u64_at(16), u64_at(24));
    let expected = (FIXED_LEN as u64).saturating_add(head_len).saturating_add(body_len);
    if expected != bytes.len() as u64 {
        return Err(RecordError::Truncated { path: p(), problem: format!("{} bytes, the header announces {expected}", bytes.len()) });
    }
    let rest = &bytes[FIXED_LEN..];
    let computed = crc32fast::hash(rest);
    if computed != stored {
        return Err(RecordError::Checksum { path: p(), stored, computed });
    }
    let (head, body) = rest.split_at(head_len as usize);
    let decode = |problem: String| RecordError::Decode { path: p(), problem };
    let (header, _): (ShardHeader, _) = bincode::serde::decode_from_slice(head, decode_config()).map_err(|e| decode(e.to_string()))?;
    let mut raw = Vec::new();
    flate2::read::DeflateDecoder::new(body).take(MAX_DECODED_BYTES as u64 + 1).read_to_end(&mut raw).map_err(|e| decode(e.to_string()))?;
    if raw.len() > MAX_DECODED_BYTES {
        return Err(decode(format!("the body inflates to more than {MAX_DECODED_BYTES} bytes")));
    }
    let (records, _): (Vec<Record>, _) = bincode::serde::decode_from_slice(&raw, decode_config()).map_err(|e| decode(e.to_string()))?;
    Ok(Shard { header, records })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A shard file around `head` and a body inflating to `raw`, with a valid checksum.
    fn craft(head: &[u8], raw: &[u8]) -> Vec<u8> {
        let mut z = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
        z.write_all(raw).unwrap();
        let body = z.finish().unwrap();
        let mut crc = crc32fast::Hasher::new();
        crc.update(head);
        crc.update(&body);
        let mut out = Vec::new();
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        out.extend_from_slice(&crc.finalize().to_le_bytes());
        out.extend_from_slice(&(head.len() as u64).to_le_bytes());
        out.extend_from_slice(&(body.len() as u64).to_le_bytes());
        out.extend_from_slice(head);
        out.extend_from_slice(&body);
        out
    }

    #[test]
    fn a_crafted_length_prefix_is_an_error_not_an_allocation() {
        let header = ShardHeader { variant: "shogi".into(), options: Vec::new(), planes_version: 1, action_version: 1, generation: 1, games: 1 };
        let head = bincode::serde::encode_to_vec(&header, config()).unwrap();
        // bincode's varint: tag 253 then a u64: a vector of 2^50 records (petabytes).
        let mut raw = vec![253u8];
        raw.extend_from_slice(&(1u64 << 50).to_le_bytes());
        let dir = std::env::temp_dir().join(format!("shard-crafted-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("evil.shard");
        std::fs::write(&path, craft(&head, &raw)).unwrap();
        match read_shard(&path) {
            Err(RecordError::Decode { path: p, .. }) => assert_eq!(p, path),
            other => panic!("expected a decode error, got {other:?}"),
        }
        // A header string claiming 2^40 bytes: the same.
        let mut head = vec![5u8];
        head.extend_from_slice(b"shogi");
        head.push(253);
        head.extend_from_slice(&(1u64 << 40).to_le_bytes());
        std::fs::write(&path, craft(&head, &[0])).unwrap();
        assert!(matches!(read_shard(&path), Err(RecordError::Decode { .. })));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_oversized_file_is_refused_before_it_is_read() {
        let dir = std::env::temp_dir().join(format!("shard-big-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("big.shard");
        let f = std::fs::File::create(&path).unwrap();
        f.set_len(MAX_SHARD_BYTES + 1).unwrap(); // sparse: no disk used
        let e = read_shard(&path).unwrap_err().to_string();
        assert!(e.contains("more than a shard may hold") && e.contains("big.shard"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
