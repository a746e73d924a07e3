//! Saving and loading a [`Net`]: a model directory holding `model.json` (config plus a
//! checksum of the weights) and `weights.bpk` (burn 0.22's burnpack record).
//!
//! burn 0.22 dropped recorders; a module's parameters are taken with
//! `Module::into_record()` (a non-generic `ModuleRecord`), serialised with
//! `ModuleRecord::into_bytes()` and applied back with `Module::try_load_record`.
//!
//! Rules kept here:
//! - Always the eval-mode copy (`Module::valid`) is recorded. In training mode, batch-norm
//!   running statistics live in per-thread pending updates of `RunningState`, which the
//!   record visitor does not read; only `valid()` syncs them (saving the training module
//!   directly wrote the *initial* statistics — zero means).
//! - Each file is written to a temporary sibling, flushed, then renamed over the target;
//!   the weights first, `model.json` last, so a directory whose `model.json` checksum matches
//!   its weights is complete.
//! - A missing, truncated or corrupt file yields a [`ModelIoError`] naming the file, never
//!   a panic.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use burn::module::Module;
use burn::store::ModuleRecord;
use burn::tensor::{Bytes, Device};
use serde::{Deserialize, Serialize};

use crate::config::NetConfig;
use crate::infer::InferenceNet;
use crate::net::Net;

/// Name of the config file inside a model directory.
pub const CONFIG_FILE: &str = "model.json";
/// Name of the weights file inside a model directory.
pub const WEIGHTS_FILE: &str = "weights.bpk";
/// Version of the `model.json` layout.
pub const FORMAT_VERSION: u32 = 1;

/// Errors of saving or loading a model; each names the file concerned.
#[derive(Debug, thiserror::Error)]
pub enum ModelIoError {
    /// Reading, writing or renaming failed.
    #[error("{path}: I/O error: {source}")]
    Io {
        /// The file concerned.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// `model.json` is not a valid manifest, or its config is unusable.
    #[error("{path}: invalid model manifest: {message}")]
    Manifest {
        /// The file concerned.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The weights file is truncated, corrupt, or does not fit the config.
    #[error("{path}: corrupt or mismatched weights: {message}")]
    Weights {
        /// The file concerned.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

/// Contents of `model.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Layout version ([`FORMAT_VERSION`]).
    pub format: u32,
    /// The network's hyper-parameters.
    pub config: NetConfig,
    /// Weights file name, relative to the directory.
    pub weights: String,
    /// Size of the weights file in bytes.
    pub weights_bytes: u64,
    /// FNV-1a 64-bit hash of the weights file, hex.
    pub weights_fnv1a64: String,
    /// What the network was trained to play: the variant and the encoding versions its
    /// input planes and policy indices follow (absent in models saved without one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub game: Option<GameTag>,
}

/// The game a model belongs to. The network crate does not know encodings; the caller
/// that trains it says which it used, and the caller that loads it checks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameTag {
    /// Variant name (`pocket-copper`, `shogi`, …).
    pub variant: String,
    /// Rule options as (name, choice).
    pub options: Vec<(String, String)>,
    /// Version of the input planes.
    pub planes_version: u32,
    /// Version of the action space (policy indices).
    pub action_version: u32,
}

/// FNV-1a, 64 bit: cheap corruption check, not a cryptographic hash.
fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> ModelIoError + '_ {
    move |source| ModelIoError::Io { path: path.to_path_buf(), source }
}

/// Writes `bytes` to `path` atomically: temporary sibling, fsync, rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), ModelIoError> {
    let file_name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = path.with_file_name(format!(".{file_name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut file = fs::File::create(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result.map_err(io_err(path))
}

/// Serialises the eval-mode weights of `net` (burnpack bytes).
pub fn weights_to_bytes(net: &Net) -> Vec<u8> {
    let record = net.valid().into_record();
    let bytes = record.into_bytes().expect("serialising an in-memory record cannot fail");
    bytes.to_vec()
}

/// Builds a network for `config` on `device` from burnpack `bytes` (as made by
/// [`weights_to_bytes`]). `origin` names the source in errors.
pub fn net_from_bytes(config: &NetConfig, bytes: Vec<u8>, device: &Device, origin: &Path) -> Result<Net, ModelIoError> {
    let weights_err = |message: String| ModelIoError::Weights { path: origin.to_path_buf(), message };
    config.validate().map_err(|e| weights_err(e.to_string()))?;
    // Checked before the network is allocated: a config asking for more weights than the
    // file holds is corrupt or crafted, whatever its tensors would have been.
    if config.min_weight_bytes() > bytes.len() as u128 {
        return Err(weights_err(format!("{} bytes, but its config needs at least {} bytes of weights", bytes.len(), config.min_weight_bytes())));
    }
    let net = Net::new(config, device).map_err(|e| weights_err(e.to_string()))?;
    // The burnpack reader validates sizes and returns errors; the unwind guard is a
    // second line of defence so that no malformed file can abort the caller.
    let loaded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let record = ModuleRecord::from_bytes(Bytes::from_bytes_vec(bytes))?;
        net.try_load_record(record)
    }));
    match loaded {
        Ok(Ok(net)) => Ok(net),
        Ok(Err(e)) => Err(weights_err(e.to_string())),
        Err(_) => Err(weights_err("weights could not be decoded".into())),
    }
}

/// Saves `net` (its eval-mode copy) into directory `dir`, creating it if needed, without
/// a game tag (benchmarks, tests); trained models are saved with [`save_model_tagged`].
pub fn save_model(net: &Net, dir: &Path) -> Result<(), ModelIoError> {
    save(net, dir, None)
}

/// Saves `net` with the game it was trained for, so a loader can refuse a model of
/// another variant or encoding version instead of failing on shapes or playing nonsense.
pub fn save_model_tagged(net: &Net, dir: &Path, game: &GameTag) -> Result<(), ModelIoError> {
    save(net, dir, Some(game.clone()))
}

pub(crate) fn save(net: &Net, dir: &Path, game: Option<GameTag>) -> Result<(), ModelIoError> {
    fs::create_dir_all(dir).map_err(io_err(dir))?;
    let weights = weights_to_bytes(net);
    let manifest = Manifest {
        format: FORMAT_VERSION,
        config: net.config().clone(),
        weights: WEIGHTS_FILE.to_string(),
        weights_bytes: weights.len() as u64,
        weights_fnv1a64: format!("{:016x}", fnv1a64(&weights)),
        game,
    };
    let weights_path = dir.join(WEIGHTS_FILE);
    write_atomic(&weights_path, &weights)?;
    let json = serde_json::to_vec_pretty(&manifest).expect("manifest serialises");
    write_atomic(&dir.join(CONFIG_FILE), &json)?;
    tracing::info!(
        dir = %dir.display(),
        bytes = weights.len(),
        "model saved"
    );
    Ok(())
}

/// Reads and checks `dir/model.json`.
pub fn read_manifest(dir: &Path) -> Result<Manifest, ModelIoError> {
    let path = dir.join(CONFIG_FILE);
    let text = fs::read(&path).map_err(io_err(&path))?;
    let manifest: Manifest = serde_json::from_slice(&text).map_err(|e| ModelIoError::Manifest { path: path.clone(), message: e.to_string() })?;
    if manifest.format != FORMAT_VERSION {
        return Err(ModelIoError::Manifest { path, message: format!("format {} (this build reads {FORMAT_VERSION})", manifest.format) });
    }
    manifest.config.validate().map_err(|e| ModelIoError::Manifest { path: path.clone(), message: e.to_string() })?;
    if manifest.weights.contains(['/', '\\']) || manifest.weights.is_empty() {
        return Err(ModelIoError::Manifest { path, message: format!("weights file name {:?} is not a plain name", manifest.weights) });
    }
    Ok(manifest)
}

/// Loads the model in `dir` onto `device` (use [`crate::cpu_train_device`] to continue
/// training, [`crate::cpu_device`] for inference).
pub fn load_model(dir: &Path, device: &Device) -> Result<Net, ModelIoError> {
    let manifest = read_manifest(dir)?;
    let path = dir.join(&manifest.weights);
    let bytes = fs::read(&path).map_err(io_err(&path))?;
    if bytes.len() as u64 != manifest.weights_bytes {
        return Err(ModelIoError::Weights {
            path,
            message: format!("{} bytes, manifest says {} (truncated or replaced)", bytes.len(), manifest.weights_bytes),
        });
    }
    let hash = format!("{:016x}", fnv1a64(&bytes));
    if hash != manifest.weights_fnv1a64 {
        return Err(ModelIoError::Weights { path, message: format!("checksum {hash} does not match manifest {}", manifest.weights_fnv1a64) });
    }
    let net = net_from_bytes(&manifest.config, bytes, device, &path)?;
    tracing::info!(dir = %dir.display(), "model loaded");
    Ok(net)
}

/// Loads the model in `dir` and folds it for CPU inference.
pub fn load_inference(dir: &Path) -> Result<InferenceNet, ModelIoError> {
    let net = load_model(dir, &crate::device::cpu_device())?;
    Ok(InferenceNet::from_net(&net))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::cpu_device;
    use crate::tensor_util::to_vec;
    use crate::testutil::{max_abs_diff, tiny_config, trained_tiny_net, OwnedBatch};

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("model-store-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn a_manifest_asking_for_more_weights_than_its_file_holds_is_refused_before_allocating() {
        let net = trained_tiny_net(5);
        let dir = temp_dir("oversized");
        save_model(&net, &dir).unwrap();
        let weights = fs::read(dir.join(read_manifest(&dir).unwrap().weights)).unwrap();
        // The bound is a real lower bound, and not a loose one.
        let need = net.config().min_weight_bytes();
        assert!(need <= weights.len() as u128 && need * 2 > weights.len() as u128, "{need} vs {}", weights.len());
        // 4096 channels need 4096²·9·4·2 bytes per block (over 1 GB): refused by size, at once.
        let mut big = net.config().clone();
        big.channels = 4096;
        let e = net_from_bytes(&big, weights.clone(), &cpu_device(), &dir).unwrap_err().to_string();
        assert!(e.contains("needs at least"), "{e}");
        // Sizes whose product overflows are a config error, not a wrap-around.
        big.board_height = usize::MAX / 2;
        let e = net_from_bytes(&big, weights, &cpu_device(), &dir).unwrap_err().to_string();
        assert!(e.contains("the most this build accepts"), "{e}");
    }

    #[test]
    fn save_then_load_gives_identical_eval_outputs() {
        let net = trained_tiny_net(5);
        let dir = temp_dir("roundtrip");
        save_model(&net, &dir).unwrap();

        // BN running statistics that were saved are the trained ones, not the init.
        let saved_mean = to_vec(net.valid().stem.bn.running_mean.value());
        assert!(saved_mean.iter().any(|m| m.abs() > 1e-3), "{saved_mean:?}");

        let device = cpu_device();
        let loaded = load_model(&dir, &device).unwrap();
        assert_eq!(loaded.config(), net.config());
        let eval = net.valid().to_device(&device);
        let data = OwnedBatch::random(net.config(), 4, 7);
        let a = eval.forward_flat(&data.input, 4, &device);
        let b = loaded.forward_flat(&data.input, 4, &device);
        assert_eq!(to_vec(a.policy), to_vec(b.policy));
        assert_eq!(to_vec(a.value), to_vec(b.value));

        // Loading onto the training device gives a trainable net.
        let train_device = crate::device::cpu_train_device();
        let mut train_net = load_model(&dir, &train_device).unwrap();
        let before = to_vec(train_net.stem.conv.weight.val());
        let mut step = crate::train::TrainStep::new(Default::default(), train_device);
        train_net = step.step(train_net, &data.view()).0;
        let after = to_vec(train_net.stem.conv.weight.val());
        assert!(max_abs_diff(&before, &after) > 0.0, "loaded net did not train");

        // Folding the loaded model works too.
        let folded = load_inference(&dir).unwrap();
        let f = folded.forward(&data.input, 4);
        let a = eval.forward_flat(&data.input, 4, &device);
        assert!(max_abs_diff(&to_vec(a.value), &f.value) < 1e-4);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn truncated_weights_is_a_typed_error_naming_the_file() {
        let net = trained_tiny_net(0);
        let dir = temp_dir("truncated");
        save_model(&net, &dir).unwrap();
        let path = dir.join(WEIGHTS_FILE);
        let bytes = fs::read(&path).unwrap();
        fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
        let err = load_model(&dir, &cpu_device()).unwrap_err();
        assert!(matches!(err, ModelIoError::Weights { .. }), "{err}");
        assert!(err.to_string().contains(WEIGHTS_FILE), "{err}");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn corrupt_weights_with_matching_manifest_is_an_error_not_a_panic() {
        // Simulates a file written by something else: manifest checksum matches, content is
        // garbage or cut short, so the burnpack decoder itself must reject it.
        let net = trained_tiny_net(0);
        let good = weights_to_bytes(&net);
        let cases: Vec<Vec<u8>> = vec![good[..good.len() / 2].to_vec(), good[..10].to_vec(), vec![0xAB; 300], Vec::new()];
        for (i, bad) in cases.into_iter().enumerate() {
            let dir = temp_dir(&format!("corrupt{i}"));
            save_model(&net, &dir).unwrap();
            let mut manifest = read_manifest(&dir).unwrap();
            manifest.weights_bytes = bad.len() as u64;
            manifest.weights_fnv1a64 = format!("{:016x}", fnv1a64(&bad));
            fs::write(dir.join(WEIGHTS_FILE), &bad).unwrap();
            fs::write(dir.join(CONFIG_FILE), serde_json::to_vec(&manifest).unwrap()).unwrap();
            let err = load_model(&dir, &cpu_device()).unwrap_err();
            assert!(matches!(err, ModelIoError::Weights { .. }), "case {i}: {err}");
            assert!(err.to_string().contains(WEIGHTS_FILE), "case {i}: {err}");
            fs::remove_dir_all(&dir).unwrap();
        }
    }

    #[test]
    fn flipped_byte_fails_checksum() {
        let net = trained_tiny_net(0);
        let dir = temp_dir("flipped");
        save_model(&net, &dir).unwrap();
        let path = dir.join(WEIGHTS_FILE);
        let mut bytes = fs::read(&path).unwrap();
        let n = bytes.len();
        bytes[n - 5] ^= 0x40;
        fs::write(&path, &bytes).unwrap();
        let err = load_model(&dir, &cpu_device()).unwrap_err();
        assert!(err.to_string().contains("checksum"), "{err}");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn missing_or_bad_manifest() {
        let dir = temp_dir("manifest");
        let err = load_model(&dir, &cpu_device()).unwrap_err();
        assert!(matches!(err, ModelIoError::Io { .. }), "{err}");
        assert!(err.to_string().contains(CONFIG_FILE), "{err}");

        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join(CONFIG_FILE), b"{\"format\": 1, \"conf").unwrap();
        let err = load_model(&dir, &cpu_device()).unwrap_err();
        assert!(matches!(err, ModelIoError::Manifest { .. }), "{err}");
        assert!(err.to_string().contains(CONFIG_FILE), "{err}");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn weights_of_another_shape_are_rejected() {
        let net = trained_tiny_net(0);
        let dir = temp_dir("mismatch");
        save_model(&net, &dir).unwrap();
        let mut manifest = read_manifest(&dir).unwrap();
        manifest.config = tiny_config().with_tower(2, 12);
        fs::write(dir.join(CONFIG_FILE), serde_json::to_vec(&manifest).unwrap()).unwrap();
        let err = load_model(&dir, &cpu_device()).unwrap_err();
        assert!(matches!(err, ModelIoError::Weights { .. }), "{err}");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn atomic_write_leaves_no_temp_file() {
        let dir = temp_dir("atomic");
        fs::create_dir_all(&dir).unwrap();
        write_atomic(&dir.join("a.bin"), b"one").unwrap();
        write_atomic(&dir.join("a.bin"), b"two").unwrap();
        assert_eq!(fs::read(dir.join("a.bin")).unwrap(), b"two");
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 1);
        fs::remove_dir_all(&dir).unwrap();
    }
}
