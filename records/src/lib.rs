//! Training records — the one contract between self-play and the trainer — and the
//! layout of a run directory ([`run_dir`]).
//!
//! A shard file is: a fixed header (magic, format version, checksum, lengths), then a
//! bincode-encoded [`ShardHeader`], then the bincode-encoded records, deflate-compressed.
//! The CRC-32 covers everything after the fixed header, so a truncated or corrupt shard is
//! refused with an error naming the file. Shards are written atomically (temp file, fsync,
//! rename), so a killed writer leaves either the whole shard or none.

mod atomic;
pub mod jsonl;
pub mod run_dir;
mod shard;

pub use atomic::{write_atomic, AtomicFile};
pub use shard::{read_shard, write_shard, Record, RecordError, Shard, ShardHeader, FORMAT_VERSION};
