//! The run directory of a training run: where every file lives (the one place that
//! knows the layout), and the files that readers outside the training loop need (the
//! network's view of the start family, read by the balance study). The per-generation
//! reports the loop writes there are the `pipeline` crate's. The layout:
//!
//! - `config.toml` — the resolved configuration
//! - `teacher/` — the teacher stage's games, value-scale fit and summary (see the
//!   `teacher` crate); its shards are `selfplay/gen-0000/`, and the model trained on
//!   them is `models/gen-0000/` (it plays generation 1)
//! - `selfplay/gen-NNNN/game-*.shard` — one shard per finished game; `games.jsonl` — one
//!   line per finished game (how it ended); `summary.json`
//! - `trainer.ckpt` — trainer checkpoint (weights, optimiser, progress, sample uses)
//! - `models/gen-NNNN/` — the model trained in generation N (plays generation N+1)
//! - `train/gen-NNNN.json`, `eval/gen-NNNN.json` — training and evaluation reports
//! - `eval/gen-NNNN/<opponent>/` — the evaluation matches (arena tournaments)
//! - `eval/gen-NNNN-starts.json` — the model's view of the start family
//! - `summary.tsv`, `plots/*.svg` — the run's report (see `pipeline::report`)
//! - `ladder/` — the ladder of the run's generations (see `pipeline::ladder`)

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// A run directory; its methods name the files in it.
pub struct RunDir(pub PathBuf);

impl RunDir {
    fn gen(g: u32) -> String {
        format!("gen-{g:04}")
    }
    pub fn config(&self) -> PathBuf {
        self.0.join("config.toml")
    }
    pub fn selfplay(&self, g: u32) -> PathBuf {
        self.0.join("selfplay").join(Self::gen(g))
    }
    pub fn selfplay_summary(&self, g: u32) -> PathBuf {
        self.0.join(keys::selfplay_summary(g))
    }
    pub fn teacher(&self) -> PathBuf {
        self.0.join("teacher")
    }
    pub fn model(&self, g: u32) -> PathBuf {
        self.0.join("models").join(Self::gen(g))
    }
    pub fn train_report(&self, g: u32) -> PathBuf {
        self.0.join(keys::train_report(g))
    }
    /// The evaluation matches' arena directories.
    pub fn eval_dir(&self, g: u32) -> PathBuf {
        self.0.join("eval").join(Self::gen(g))
    }
    pub fn eval_report(&self, g: u32) -> PathBuf {
        self.0.join(keys::eval_report(g))
    }
    pub fn checkpoint(&self) -> PathBuf {
        self.0.join("trainer.ckpt")
    }
    /// The model's view of the start family after generation `g` ([`StartValues`]).
    pub fn start_values(&self, g: u32) -> PathBuf {
        self.0.join("eval").join(format!("{}-starts.json", Self::gen(g)))
    }
    pub fn summary_tsv(&self) -> PathBuf {
        self.0.join("summary.tsv")
    }
    pub fn plots(&self) -> PathBuf {
        self.0.join("plots")
    }
    pub fn ladder(&self) -> PathBuf {
        self.0.join("ladder")
    }
}

/// `eval/gen-NNNN-starts.json`: what generation `g`'s network thinks of each start of the
/// variant's start family, for Black, before a move is played — how its judgement of
/// the starts' balance changes over training.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct StartValues {
    pub generation: u32,
    /// The game length limit the positions were encoded with (the self-play limit).
    pub max_plies: u32,
    pub starts: Vec<StartValueEntry>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct StartValueEntry {
    pub name: String,
    pub sfen: String,
    /// P(Black wins) − P(White wins).
    pub value: f32,
    pub black_win: f32,
    pub draw: f32,
    pub white_win: f32,
}

/// The run's objects in a store (`store` crate) by key, relative to the run's root URL.
/// On a local root the keys are the run directory's paths above; a server holds the same
/// tree. Everything is written once, except the derived report (`summary.tsv`, `plots/`,
/// pages, `ladder/`), `heartbeats/` and `workers/`, which are rewritten. A multi-object item is visible only
/// once its manifest, written last, exists.
///
/// - `config.toml` — the run's configuration, written by the trainer; workers read it
/// - `models/gen-NNNN/…` then `models/gen-NNNN.manifest.json` ([`ModelManifest`]): the
///   model of generation N with the content hash of its files
/// - `selfplay/gen-NNNN/<worker>/game-XXXXXXXX.json` (the game's log line) then
///   `….shard` (its positions): one finished game of generation N (played by model
///   N−1) by one worker; the shard's existence is the game's commit. The teacher's games
///   are `selfplay/gen-0000/game-*.shard`
/// - `train/gen-NNNN.games.json` ([`StepManifest`]): every game training step N
///   consumed for the first time — each finished game is in exactly one
/// - `claims/gen-NNNN/<trainer>` and `heartbeats/<id>`: which trainer holds generation N
///   (`store::race`); `workers/<id>`: the workers alive (rewritten before each batch, so
///   they share what is left of a generation's games)
/// - `trainer/gen-NNNN.ckpt` — the trainer's checkpoint after generation N, so a trainer
///   on a fresh machine resumes (a local root keeps `trainer.ckpt` instead)
/// - `train/`, `eval/`, `selfplay/gen-NNNN/summary.json` — the reports, as above
/// - `jobs/<job>/…` — tournaments' and studies' games handed to workers (the `dispatch`
///   crate's protocol)
pub mod keys {
    fn gen(g: u32) -> String {
        format!("gen-{g:04}")
    }
    pub const CONFIG: &str = "config.toml";
    pub const MODELS: &str = "models";
    pub const SELFPLAY: &str = "selfplay";
    /// Where a model trained in place (by `copper train`, whose run directory is the store)
    /// keeps its files.
    pub fn model_dir(g: u32) -> String {
        format!("models/{}", gen(g))
    }
    /// Where a trainer uploads the files of a model of generation `g` whose content hash is
    /// `hash`: keys named by their contents, so that a replaced trainer still writing cannot
    /// change the files of the model another published (the manifest names the directory).
    pub fn model_dir_of(g: u32, hash: &str) -> String {
        format!("models/{}.by/{hash}", gen(g))
    }
    /// Whether `dir` (a manifest's) is one of the places a model of generation `g` may be.
    pub fn is_model_dir(g: u32, dir: &str) -> bool {
        dir == model_dir(g) || dir.strip_prefix(&format!("models/{}.by/", gen(g))).is_some_and(|t| !t.is_empty() && is_inside(t) && !t.contains('/'))
    }
    pub fn model_manifest(g: u32) -> String {
        format!("models/{}.manifest.json", gen(g))
    }
    /// The generation of a model manifest's key.
    pub fn manifest_generation(key: &str) -> Option<u32> {
        key.strip_prefix("models/gen-")?.strip_suffix(".manifest.json")?.parse().ok()
    }
    pub fn selfplay_dir(g: u32) -> String {
        format!("selfplay/{}", gen(g))
    }
    pub fn game_shard(g: u32, worker: &str, game_id: u64) -> String {
        format!("selfplay/{}/{worker}/game-{game_id:08}.shard", gen(g))
    }
    /// The log line beside a game's shard.
    pub fn game_line(shard_key: &str) -> String {
        format!("{}.json", shard_key.trim_end_matches(".shard"))
    }
    /// `(generation, worker, game id)` of a game's shard key; the worker is empty for the
    /// teacher's games.
    pub fn parse_game_shard(key: &str) -> Option<(u32, String, u64)> {
        let rest = key.strip_prefix("selfplay/gen-")?.strip_suffix(".shard")?;
        let (g, rest) = rest.split_once('/')?;
        let (worker, file) = rest.rsplit_once('/').unwrap_or(("", rest));
        Some((g.parse().ok()?, worker.to_string(), file.strip_prefix("game-")?.parse().ok()?))
    }
    pub fn selfplay_summary(g: u32) -> String {
        format!("selfplay/{}/summary.json", gen(g))
    }
    pub fn train_report(g: u32) -> String {
        format!("train/{}.json", gen(g))
    }
    /// The report of the training that made generation `g`'s model of content hash `hash`,
    /// uploaded before the model; the published model's is copied to [`train_report`].
    pub fn train_report_of(g: u32, hash: &str) -> String {
        format!("train/{}.by/{hash}.json", gen(g))
    }
    /// Its presence in the store marks generation N done.
    pub fn eval_report(g: u32) -> String {
        format!("eval/{}.json", gen(g))
    }
    pub fn step_manifest(g: u32) -> String {
        format!("train/{}.games.json", gen(g))
    }
    pub fn claims(g: u32) -> String {
        format!("claims/{}", gen(g))
    }
    /// The trainer's checkpoint after training generation `g` into the model of content
    /// hash `hash` (named by the model, so a replaced trainer cannot overwrite the one a
    /// published model came from).
    pub fn checkpoint_after(g: u32, hash: &str) -> String {
        format!("trainer/{}/{hash}.ckpt", gen(g))
    }
    /// Whether `key` names a place inside the run wherever it is joined: relative, with
    /// no empty, `.` or `..` part and no backslash (a key read from the store is input).
    pub fn is_inside(key: &str) -> bool {
        !key.is_empty() && !key.contains(['\\', '\0']) && key.split('/').all(|p| !p.is_empty() && p != "." && p != "..")
    }
    /// `(generation, model hash)` of a `trainer/gen-NNNN/<hash>.ckpt` key.
    pub fn parse_checkpoint(key: &str) -> Option<(u32, String)> {
        let (g, who) = key.strip_prefix("trainer/gen-")?.strip_suffix(".ckpt")?.split_once('/')?;
        if who.is_empty() || who.contains('/') {
            return None;
        }
        Some((g.parse().ok()?, who.to_string()))
    }
}

/// `models/gen-NNNN.manifest.json`: the files of a published model and their content hash.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct ModelManifest {
    pub generation: u32,
    /// The trainer that published it (empty in manifests from before trainers were named).
    #[serde(default)]
    pub trainer: String,
    /// The key of the directory holding the files: [`keys::model_dir_of`] its hash, or
    /// [`keys::model_dir`] for a model trained in place (and in older manifests: empty).
    #[serde(default)]
    pub dir: String,
    /// FNV-1a 64 of the files' names and bytes in name order, in hex: a content id, so a
    /// worker's cache keeps one copy per model and never mixes two.
    pub hash: String,
    pub files: Vec<ManifestFile>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct ManifestFile {
    pub name: String,
    pub size: u64,
}

/// `train/gen-NNNN.games.json`: the games training step N consumed for the first time.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct StepManifest {
    pub generation: u32,
    /// The trainer that held the generation (it has the right of way to the next).
    #[serde(default)]
    pub trainer: String,
    /// Shard keys, sorted.
    pub games: Vec<String>,
    /// Finished games not consumed by this step, over its cap (`fleet.step_games`): they
    /// wait for the next step, or are dropped once older than `fleet.max_game_lag`.
    #[serde(default)]
    pub deferred: u64,
}

/// FNV-1a 64 over `parts` (each length-prefixed so that boundaries count).
pub fn content_hash<'a>(parts: impl IntoIterator<Item = &'a [u8]>) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    for p in parts {
        eat(&(p.len() as u64).to_le_bytes());
        eat(p);
    }
    format!("{h:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn game_keys_parse_back_and_manifest_keys_name_their_generation() {
        let k = keys::game_shard(3, "w-1", 3_000_017);
        assert_eq!(k, "selfplay/gen-0003/w-1/game-03000017.shard");
        assert_eq!(keys::parse_game_shard(&k), Some((3, "w-1".into(), 3_000_017)));
        assert_eq!(keys::parse_game_shard("selfplay/gen-0000/game-00000005.shard"), Some((0, String::new(), 5)));
        assert_eq!(keys::parse_game_shard("selfplay/gen-0003/summary.json"), None);
        assert_eq!(keys::game_line(&k), "selfplay/gen-0003/w-1/game-03000017.json");
        assert_eq!(keys::manifest_generation(&keys::model_manifest(12)), Some(12));
        assert_eq!(keys::manifest_generation("models/gen-0012/model.json"), None);
        assert_eq!(keys::parse_checkpoint(&keys::checkpoint_after(7, "t-1")), Some((7, "t-1".into())));
        assert_eq!(keys::parse_checkpoint("trainer/gen-0007.ckpt"), None);
        assert!(keys::is_model_dir(3, &keys::model_dir_of(3, "t1")) && keys::is_model_dir(3, &keys::model_dir(3)));
        for bad in ["models/gen-0004.by/t1", "models/gen-0003.by/..", "models/gen-0003.by/a/b", "/etc", "models/gen-0003.by/"] {
            assert!(!keys::is_model_dir(3, bad), "{bad}");
        }
    }

    #[test]
    fn the_content_hash_is_fnv1a_and_sees_part_boundaries() {
        // FNV-1a 64 of the empty input is its offset basis.
        assert_eq!(content_hash(std::iter::empty::<&[u8]>()), "cbf29ce484222325");
        assert_ne!(content_hash([&b"ab"[..], b"c"]), content_hash([&b"a"[..], b"bc"]));
    }
}
