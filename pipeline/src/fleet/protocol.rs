//! The store protocol of a run: what its keys hold, how a model is published, checked
//! and fetched, and how the run's config is agreed; and the local copy a role keeps.

use crate::config::{config_differences, RunConfig};
pub(super) use crate::run_dir::files_under;
use anyhow::{anyhow, bail, Context, Result};
use records::run_dir::{content_hash, keys, ManifestFile, ModelManifest, RunDir, StepManifest};
use std::path::{Path, PathBuf};
use store::Store;

/// The run's configuration as the trainer saved it in the store.
pub fn stored_config(store: &Store) -> Result<Option<RunConfig>> {
    let Some(bytes) = store.get(keys::CONFIG)? else { return Ok(None) };
    let text = std::str::from_utf8(&bytes).with_context(|| format!("{}/{} is not UTF-8", store.url(), keys::CONFIG))?;
    let cfg = RunConfig::from_toml_str(text).with_context(|| format!("{}/{}", store.url(), keys::CONFIG))?;
    Ok(Some(cfg))
}

/// The newest generation with a published model: listed once, then (`known` set) found
/// by asking for the next manifests one by one — one request a look, however many
/// models the run has.
pub(super) fn newest_model(store: &Store, known: &mut Option<u32>) -> Result<Option<u32>> {
    let mut newest = match *known {
        Some(n) => n,
        None => match store.list(keys::MODELS)?.iter().filter_map(|l| keys::manifest_generation(&l.key)).max() {
            Some(n) => n,
            None => return Ok(None),
        },
    };
    while store.modified(&keys::model_manifest(newest + 1))?.is_some() {
        newest += 1;
    }
    *known = Some(newest);
    Ok(Some(newest))
}

pub(super) fn read_manifest<T: for<'de> serde::Deserialize<'de>>(store: &Store, key: &str) -> Result<Option<T>> {
    let Some(bytes) = store.get_at_most(key, store::MAX_SMALL_OBJECT)? else { return Ok(None) };
    Ok(Some(serde_json::from_slice(&bytes).with_context(|| format!("{}/{key} is corrupt", store.url()))?))
}

/// The step manifest of generation `g`, checked: every key a game's shard of a generation
/// up to `g` inside the run (a manifest is input; a key such as `/home/…` or `../..` would
/// make the trainer write outside its directory).
pub(super) fn read_step_manifest(store: &Store, g: u32) -> Result<Option<StepManifest>> {
    let Some(m) = read_manifest::<StepManifest>(store, &keys::step_manifest(g))? else { return Ok(None) };
    if let Some(k) = m.games.iter().find(|k| !keys::is_inside(k) || keys::parse_game_shard(k).is_none_or(|(kg, _, _)| kg > g)) {
        bail!("{}/{}: `{k}` is not a game's shard key", store.url(), keys::step_manifest(g));
    }
    Ok(Some(m))
}

/// Generation `g`'s model as a local directory: in place on a local root, else downloaded
/// once into `cache/models/<hash>/` (a model with a manifest never changes).
pub fn fetch_model(store: &Store, g: u32, cache: &Path) -> Result<PathBuf> {
    let manifest: ModelManifest =
        read_manifest(store, &keys::model_manifest(g))?.ok_or_else(|| anyhow!("{}: generation {g} has no published model", store.url()))?;
    if let Some(f) = manifest.files.iter().find(|f| !is_plain_name(&f.name)) {
        bail!("{}/{}: `{}` is not a plain file name", store.url(), keys::model_manifest(g), f.name);
    }
    if !is_plain_name(&manifest.hash) {
        bail!("{}/{}: hash `{}` is not a plain name", store.url(), keys::model_manifest(g), manifest.hash);
    }
    let files_dir = model_files(&manifest);
    if !keys::is_model_dir(g, &files_dir) {
        bail!("{}/{}: `{files_dir}` is not a directory of generation {g}'s model", store.url(), keys::model_manifest(g));
    }
    if let Some(dir) = store.local_path(&files_dir) {
        let files = manifest.files.iter().map(|f| std::fs::read(dir.join(&f.name)).with_context(|| format!("reading {}", dir.join(&f.name).display())));
        check_model(store, g, &manifest, &files.collect::<Result<Vec<_>>>()?)?;
        return Ok(dir);
    }
    let dir = cache.join("models").join(&manifest.hash);
    if dir.join("model.json").exists() {
        return Ok(dir);
    }
    let mut files = Vec::new();
    for f in &manifest.files {
        let key = format!("{files_dir}/{}", f.name);
        files.push(store.get(&key)?.ok_or_else(|| anyhow!("{}/{key} is listed in the manifest but missing", store.url()))?);
    }
    check_model(store, g, &manifest, &files)?;
    let tmp = cache.join("models").join(format!(".{}.{}.tmp", manifest.hash, std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
    for (f, bytes) in manifest.files.iter().zip(&files) {
        std::fs::write(tmp.join(&f.name), bytes.as_ref()).with_context(|| format!("writing {}", tmp.join(&f.name).display()))?;
    }
    match std::fs::rename(&tmp, &dir) {
        Ok(()) => {}
        // Another process of this machine fetched it first.
        Err(_) if dir.join("model.json").exists() => {
            let _ = std::fs::remove_dir_all(&tmp);
        }
        Err(e) => return Err(e).with_context(|| format!("moving the model into {}", dir.display())),
    }
    Ok(dir)
}

/// The key of the directory holding a published model's files.
pub(super) fn model_files(manifest: &ModelManifest) -> String {
    if manifest.dir.is_empty() {
        keys::model_dir(manifest.generation)
    } else {
        manifest.dir.clone()
    }
}

/// Refuses a model whose files are not the ones its manifest names: a file of another
/// size, or contents whose hash is not the manifest's (altered, or mixed from two writers).
pub(super) fn check_model<B: AsRef<[u8]>>(store: &Store, g: u32, manifest: &ModelManifest, files: &[B]) -> Result<()> {
    let mut parts: Vec<&[u8]> = Vec::new();
    for (f, bytes) in manifest.files.iter().zip(files) {
        let bytes = bytes.as_ref();
        if bytes.len() as u64 != f.size {
            bail!("{}/{}/{}: {} bytes, its manifest says {}; the model is damaged", store.url(), model_files(manifest), f.name, bytes.len(), f.size);
        }
        parts.push(f.name.as_bytes());
        parts.push(bytes);
    }
    let hash = content_hash(parts);
    if hash != manifest.hash {
        bail!(
            "{}/{}: generation {g}'s files hash to {hash}, the manifest says {}; the model is damaged or mixed from two trainers",
            store.url(),
            model_files(manifest),
            manifest.hash
        );
    }
    Ok(())
}

/// A name that stays inside the directory it is joined to.
pub(super) fn is_plain_name(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\\'])
}

/// A model's files: names and bytes, in name order.
pub(super) type ModelFiles = Vec<(String, Vec<u8>)>;

/// The manifest of the model in `dir` as trainer `id` would publish it for generation `g`:
/// in place where `dir` is the store's own directory for it, else under keys named by its
/// content hash.
pub(super) fn model_manifest_of(store: &Store, g: u32, dir: &Path, id: &str) -> Result<(ModelManifest, ModelFiles)> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    names.sort();
    let mut files = Vec::new();
    for n in names {
        let bytes = std::fs::read(dir.join(&n)).with_context(|| format!("reading {}", dir.join(&n).display()))?;
        files.push((n, bytes));
    }
    let hash = content_hash(files.iter().flat_map(|(n, b)| [n.as_bytes(), b.as_slice()]));
    let in_place = store.local_path(&keys::model_dir(g)).is_some_and(|p| p == dir);
    let manifest = ModelManifest {
        generation: g,
        trainer: id.to_string(),
        dir: if in_place { keys::model_dir(g) } else { keys::model_dir_of(g, &hash) },
        hash,
        files: files.iter().map(|(n, b)| ManifestFile { name: n.clone(), size: b.len() as u64 }).collect(),
    };
    Ok((manifest, files))
}

/// Whether the trainer works in the store's own directory (`copper train` on a local run).
pub(super) fn in_place(store: &Store, local: &RunDir) -> bool {
    store.local_root().is_some_and(|root| root == local.0)
}

/// Every finished game in the store (shards) of generations `from..=to`, listed one
/// generation's directory at a time (not the whole history).
pub(super) fn finished_games(store: &Store, from: u32, to: u32) -> Result<Vec<store::Listed>> {
    let mut out = Vec::new();
    for g in from..=to {
        out.extend(
            store
                .list(&keys::selfplay_dir(g))?
                .into_iter()
                .filter(|l| keys::parse_game_shard(&l.key).is_some_and(|(gen, worker, _)| gen == g && !worker.is_empty())),
        );
    }
    Ok(out)
}

pub(super) fn count_games(store: &Store, g: u32) -> Result<u64> {
    Ok(store.list(&keys::selfplay_dir(g))?.iter().filter(|l| keys::parse_game_shard(&l.key).is_some_and(|(_, w, _)| !w.is_empty())).count() as u64)
}

/// A local file for `key`: in place on a local root, else downloaded into `local` once
/// (objects other than the report never change).
pub(super) fn sync_down(store: &Store, local: &RunDir, key: &str) -> Result<Option<PathBuf>> {
    if !keys::is_inside(key) {
        bail!("{}: `{key}` is not a key inside the run; refusing to write it", store.url());
    }
    if let Some(p) = store.local_path(key) {
        return Ok(p.exists().then_some(p));
    }
    let path = local.0.join(key);
    if path.exists() {
        return Ok(Some(path));
    }
    let Some(bytes) = store.get(key)? else { return Ok(None) };
    records::write_atomic(&path, &bytes).with_context(|| format!("writing {}", path.display()))?;
    Ok(Some(path))
}

/// A local directory holding the run in `store` as far as readers need it (the ladder,
/// the viewer): the config, every published model, the per-generation reports. On a
/// local root, the root itself; else `dir`, filled with what it lacks.
pub fn copy_for_reading(store: &Store, dir: &Path) -> Result<PathBuf> {
    let published: Vec<u32> = store.list(keys::MODELS)?.iter().filter_map(|l| keys::manifest_generation(&l.key)).collect();
    if let Some(root) = store.local_root() {
        // A run trained in place is readable as it is; one a fleet's trainer published
        // keeps its models under their hashes, so it is copied like a server's.
        let mut all_in_place = true;
        for &g in &published {
            let m: Option<ModelManifest> = read_manifest(store, &keys::model_manifest(g))?;
            all_in_place &= m.is_none_or(|m| model_files(&m) == keys::model_dir(g));
        }
        if all_in_place {
            return Ok(root.to_path_buf());
        }
    }
    let local = RunDir(dir.to_path_buf());
    let config = store.get_at_most(keys::CONFIG, store::MAX_SMALL_OBJECT)?.ok_or_else(|| anyhow!("{} holds no run (no {})", store.url(), keys::CONFIG))?;
    records::write_atomic(&local.config(), &config)?;
    for g in published {
        if !local.model(g).join("model.json").exists() {
            let cached = fetch_model(store, g, &dir.join("cache"))?;
            copy_dir(&cached, &local.model(g))?;
        }
        for key in [keys::train_report(g), keys::eval_report(g), keys::selfplay_summary(g)] {
            if let Some(bytes) = store.get_at_most(&key, store::MAX_SMALL_OBJECT)? {
                records::write_atomic(&local.0.join(&key), &bytes)?;
            }
        }
    }
    Ok(dir.to_path_buf())
}

/// Uploads a report a reader wrote in its local copy (e.g. `ladder`) to the store.
pub fn upload_report(store: &Store, local: &Path, prefix: &str) -> Result<()> {
    sync_up(store, &RunDir(local.to_path_buf()), prefix)
}

/// Uploads the local files under `local/<prefix>` (a report) to the store, replacing.
pub(super) fn sync_up(store: &Store, local: &RunDir, prefix: &str) -> Result<()> {
    if in_place(store, local) {
        return Ok(());
    }
    let base = local.0.join(prefix);
    let files: Vec<PathBuf> = if base.is_file() { vec![base] } else { files_under(&base) };
    for f in files {
        let key = f.strip_prefix(&local.0).expect("under the run").to_string_lossy().replace('\\', "/");
        if key.rsplit('/').next().is_some_and(|n| n.starts_with('.')) {
            continue;
        }
        store.put(&key, std::fs::read(&f).with_context(|| format!("reading {}", f.display()))?)?;
    }
    Ok(())
}

/// The run's config as a trainer given `cfg` (or none: the stored one) works with it, and
/// whether the store must be written to hold it (`cfg` new, or changed in a changeable
/// key); written nowhere here. Refused where the store holds a run whose config differs
/// in more than [`CHANGEABLE_KEYS`] (a trainer that could rewrite it would change the
/// games every worker plays under the trainer that holds the run).
pub(super) fn agreed_config(store: &Store, cfg: Option<&RunConfig>) -> Result<(RunConfig, bool)> {
    match (cfg, stored_config(store)?) {
        (Some(c), Some(old)) => {
            let differ = config_differences(&old, c);
            if !differ.is_empty() {
                let shown: Vec<String> = differ.iter().take(8).cloned().collect();
                bail!(
                    "{} holds a run whose config differs from this one in {}{}: resume it with the stored config (no --config), or choose another root",
                    store.url(),
                    shown.join(", "),
                    if differ.len() > shown.len() { format!(" and {} more", differ.len() - shown.len()) } else { String::new() }
                );
            }
            Ok((c.clone(), old.to_toml() != c.to_toml()))
        }
        (Some(c), None) => Ok((c.clone(), true)),
        (None, Some(stored)) => Ok((stored, false)),
        (None, None) => bail!("{} holds no run: give the trainer a --config", store.url()),
    }
}

/// The run's config: `cfg` saved in the store (refused as [`agreed_config`] refuses), or
/// the stored one when `cfg` is `None`. Workers read it, so it is saved before any worker
/// of this run starts (a worker reading an older config could take the run for finished).
pub fn publish_config(store: &Store, cfg: Option<&RunConfig>) -> Result<RunConfig> {
    let (agreed, write) = agreed_config(store, cfg)?;
    if write {
        store.put(keys::CONFIG, agreed.to_toml())?;
    }
    Ok(agreed)
}

pub(super) fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)?.flatten() {
        if e.path().is_file() {
            std::fs::copy(e.path(), to.join(e.file_name()))?;
        }
    }
    Ok(())
}
