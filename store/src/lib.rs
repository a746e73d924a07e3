//! Where a run's objects live: one interface over a local directory and S3-compatible
//! servers, through Apache Arrow's `object_store` crate (which also speaks GCS and Azure).
//!
//! A run lives under a root URL: `file:///abs/dir` or a plain path (the default: no server
//! needed), or `s3://bucket/prefix` with the standard `AWS_*` variables
//! (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`, and `AWS_ENDPOINT_URL` for a
//! server other than AWS, e.g. Garage or MinIO; plain `http://` endpoints are allowed).
//!
//! The contract every caller relies on:
//! - a put is atomic: a reader sees the whole object or none of it (a local put writes a
//!   staging file and renames or hard-links it into place; an S3 PUT is atomic);
//! - [`Store::put_new`] is create-only where the server supports it (a local directory,
//!   AWS S3, MinIO); Garage ignores `If-None-Match` on PUT and overwrites. What the store
//!   does is probed once ([`Store::honours_create_only`]); nothing depends on it: a key
//!   that several writers may write is written through [`decide`] (the first writer
//!   wins, on every store), and who holds a generation through [`race`];
//! - listing by prefix returns whole objects only, with the server's modification time.
//!
//! Every call is counted ([`Store::counters`]): the fleet documentation's requests and
//! bytes per game are read from these counters, and a role's time spent waiting on the
//! store from their `request_ms`.
//!
//! A server that stops answering is waited for: after `object_store`'s own retries (about
//! a minute), a call that failed for a reason that may pass (no connection, a server
//! error: `Generic`) is tried again with a backoff of 1 s doubling to 30 s, for up to the
//! store's patience ([`DEFAULT_PATIENCE`], [`Store::with_patience`]); then the error is the
//! caller's. Answers that will not change (not found, already exists, denied, a bad key)
//! are never retried, and a local directory's errors are not outages. A retried put may
//! find its own earlier attempt's object in place: create-only puts then answer
//! "already exists", which every caller already handles (its bytes are compared, or the
//! key is one writer's).

use bytes::Bytes;
use futures::TryStreamExt;
use object_store::{path::Path as ObjectPath, ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

/// The largest object any read takes (a model's weights are ~2 MB, a checkpoint ~6 MB, a
/// teacher's shard a few MB): a larger one is not read.
pub const MAX_OBJECT: u64 = 256 << 20;
/// The largest manifest, config, claim or result a reader takes.
pub const MAX_SMALL_OBJECT: u64 = 16 << 20;

/// How long a call to a server waits through an outage before it fails.
pub const DEFAULT_PATIENCE: Duration = Duration::from_secs(600);
/// The first and the longest wait between two tries of a call during an outage.
const FIRST_RETRY: Duration = Duration::from_secs(1);
const LONGEST_RETRY: Duration = Duration::from_secs(30);

/// What went wrong, with the store's URL and the key.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("store URL `{url}`: {why}")]
    Url { url: String, why: String },
    #[error("{url}: {op} `{key}`: {source}")]
    Request { url: String, op: &'static str, key: String, source: Box<object_store::Error> },
    #[error("{url}: `{key}` is {size} bytes, over the {limit} bytes an object of its kind may have; not read")]
    TooLarge { url: String, key: String, size: u64, limit: u64 },
    #[error("{url}: key `{key}` is not a valid object name: {why}")]
    Key { url: String, key: String, why: String },
}

/// One object found by [`Store::list`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listed {
    /// The key relative to the store's root.
    pub key: String,
    pub size: u64,
    pub modified: SystemTime,
}

/// Requests made and bytes moved since the store was opened.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    pub puts: u64,
    pub gets: u64,
    /// LIST requests as an S3 server serves them: a page per 1,000 keys listed.
    pub lists: u64,
    pub deletes: u64,
    pub bytes_up: u64,
    pub bytes_down: u64,
    /// Wall time spent inside calls (by every thread), waits through outages included, ms.
    pub request_ms: u64,
    /// Of that, the time spent between tries while the server did not answer, ms.
    pub outage_ms: u64,
}

impl std::fmt::Display for Counters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} requests ({} puts, {} gets, {} lists, {} deletes), {} bytes up, {} bytes down",
            self.requests(),
            self.puts,
            self.gets,
            self.lists,
            self.deletes,
            self.bytes_up,
            self.bytes_down
        )?;
        if self.outage_ms > 0 {
            write!(f, ", {:.0} s waiting out outages", self.outage_ms as f64 / 1000.0)?;
        }
        Ok(())
    }
}

impl Counters {
    pub fn requests(&self) -> u64 {
        self.puts + self.gets + self.lists + self.deletes
    }
    /// `self − earlier`.
    pub fn since(&self, earlier: &Counters) -> Counters {
        Counters {
            puts: self.puts - earlier.puts,
            gets: self.gets - earlier.gets,
            lists: self.lists - earlier.lists,
            deletes: self.deletes - earlier.deletes,
            bytes_up: self.bytes_up - earlier.bytes_up,
            bytes_down: self.bytes_down - earlier.bytes_down,
            request_ms: self.request_ms - earlier.request_ms,
            outage_ms: self.outage_ms - earlier.outage_ms,
        }
    }
}

#[derive(Default)]
struct AtomicCounters {
    puts: AtomicU64,
    gets: AtomicU64,
    lists: AtomicU64,
    deletes: AtomicU64,
    bytes_up: AtomicU64,
    bytes_down: AtomicU64,
    request_ms: AtomicU64,
    outage_ms: AtomicU64,
}

/// A run's root: a local directory or a bucket prefix. Cheap to clone; safe to share
/// between threads. Its calls block (it owns a small runtime for the async client).
#[derive(Clone)]
pub struct Store {
    inner: Arc<dyn ObjectStore>,
    runtime: Arc<tokio::runtime::Runtime>,
    url: String,
    local_root: Option<PathBuf>,
    counters: Arc<AtomicCounters>,
    /// How long a call waits through an outage of a server.
    patience: Duration,
    /// Whether the server refuses a create-only put of an existing key (probed once).
    create_only: Arc<std::sync::OnceLock<bool>>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Store({})", self.url)
    }
}

impl Store {
    /// Opens the root `url`: `s3://bucket[/prefix]`, `file:///dir`, or a plain path (a
    /// directory, created if missing).
    pub fn open(url: &str) -> Result<Store, StoreError> {
        let bad = |why: String| StoreError::Url { url: url.to_string(), why };
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| bad(format!("starting the I/O runtime: {e}")))?;
        if let Some(rest) = url.strip_prefix("s3://") {
            let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
            if bucket.is_empty() {
                return Err(bad("no bucket name (expected s3://bucket/prefix)".into()));
            }
            // A few quick tries inside the client; longer outages are waited out by
            // `patiently`, which logs them and counts their time.
            let retry = object_store::RetryConfig { max_retries: 4, retry_timeout: Duration::from_secs(30), ..Default::default() };
            let mut builder = object_store::aws::AmazonS3Builder::from_env().with_bucket_name(bucket).with_retry(retry);
            if let Ok(endpoint) = std::env::var("AWS_ENDPOINT_URL") {
                // A self-hosted server: path-style requests, and plain HTTP when asked for.
                builder = builder.with_endpoint(&endpoint).with_virtual_hosted_style_request(false).with_allow_http(endpoint.starts_with("http://"));
            }
            let s3 = builder.build().map_err(|e| bad(e.to_string()))?;
            let inner: Arc<dyn ObjectStore> =
                if prefix.trim_matches('/').is_empty() { Arc::new(s3) } else { Arc::new(object_store::prefix::PrefixStore::new(s3, prefix.trim_matches('/'))) };
            return Ok(Store {
                inner,
                runtime: Arc::new(runtime),
                url: url.to_string(),
                local_root: None,
                counters: Default::default(),
                patience: DEFAULT_PATIENCE,
                create_only: Default::default(),
            });
        }
        if url.contains("://") && !url.starts_with("file://") {
            return Err(bad("unknown scheme (expected s3://, file:// or a directory)".into()));
        }
        let dir = PathBuf::from(url.strip_prefix("file://").unwrap_or(url));
        if url.starts_with("file://") && !dir.is_absolute() {
            return Err(bad("a file:// URL takes an absolute path (file:///dir)".into()));
        }
        std::fs::create_dir_all(&dir).map_err(|e| bad(format!("creating {}: {e}", dir.display())))?;
        let dir = dir.canonicalize().map_err(|e| bad(format!("{}: {e}", dir.display())))?;
        let local = object_store::local::LocalFileSystem::new_with_prefix(&dir).map_err(|e| bad(e.to_string()))?;
        Ok(Store {
            inner: Arc::new(local),
            runtime: Arc::new(runtime),
            url: url.to_string(),
            local_root: Some(dir),
            counters: Default::default(),
            patience: DEFAULT_PATIENCE,
            create_only: Arc::new(std::sync::OnceLock::from(true)),
        })
    }

    /// The same store whose calls wait through an outage of a server for up to `patience`.
    pub fn with_patience(mut self, patience: Duration) -> Store {
        self.patience = patience;
        self
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// Runs `call` until it answers, or fails for a reason that will not pass, or the
    /// server has been silent for the store's patience (the crate's note); its time is
    /// counted in `request_ms`.
    fn patiently<T>(&self, op: &'static str, key: &str, mut call: impl FnMut() -> Result<T, object_store::Error>) -> Result<T, StoreError> {
        let start = Instant::now();
        let mut delay = FIRST_RETRY;
        let mut warned = false;
        let result = loop {
            match call() {
                Ok(v) => {
                    if warned {
                        tracing::warn!(store = %self.url, "the store answers again after {:.0} s", start.elapsed().as_secs_f64());
                    }
                    break Ok(v);
                }
                Err(e) if self.local_root.is_none() && may_pass(&e) && start.elapsed() + delay <= self.patience => {
                    if !warned {
                        tracing::warn!(store = %self.url, "{op} `{key}`: {e}; trying again for up to {:.0} s", self.patience.as_secs_f64());
                        warned = true;
                    }
                    std::thread::sleep(delay);
                    self.counters.outage_ms.fetch_add(delay.as_millis() as u64, Relaxed);
                    delay = (delay * 2).min(LONGEST_RETRY);
                }
                Err(e) => break Err(self.failed(op, key, e)),
            }
        };
        self.counters.request_ms.fetch_add(start.elapsed().as_millis() as u64, Relaxed);
        result
    }

    /// The directory behind a local store; `None` for a server.
    pub fn local_root(&self) -> Option<&Path> {
        self.local_root.as_deref()
    }

    /// Where `key` is on disk, for a local store (readers then use the file in place).
    pub fn local_path(&self, key: &str) -> Option<PathBuf> {
        self.local_root.as_ref().map(|r| r.join(key))
    }

    fn path(&self, key: &str) -> Result<ObjectPath, StoreError> {
        ObjectPath::parse(key).map_err(|e| StoreError::Key { url: self.url.clone(), key: key.to_string(), why: e.to_string() })
    }

    fn failed(&self, op: &'static str, key: &str, source: object_store::Error) -> StoreError {
        StoreError::Request { url: self.url.clone(), op, key: key.to_string(), source: Box::new(source) }
    }

    /// Writes `key` once: `Ok(true)` if this call created it, `Ok(false)` if it already
    /// existed (then it is left as it was). See the crate's note on servers that ignore
    /// create-only puts.
    pub fn put_new(&self, key: &str, bytes: impl Into<Bytes>) -> Result<bool, StoreError> {
        let bytes: Bytes = bytes.into();
        let path = self.path(key)?;
        self.count_put(bytes.len());
        self.patiently("put", key, || {
            let opts = PutOptions { mode: PutMode::Create, ..Default::default() };
            match self.runtime.block_on(self.inner.put_opts(&path, PutPayload::from(bytes.clone()), opts)) {
                Ok(_) => Ok(true),
                Err(object_store::Error::AlreadyExists { .. }) | Err(object_store::Error::Precondition { .. }) => Ok(false),
                Err(e) => Err(e),
            }
        })
    }

    /// Whether [`Store::put_new`] refuses to replace an existing key here: true for a local
    /// directory; for a server, found once by writing a probe key twice (Garage answers
    /// no: it overwrites).
    pub fn honours_create_only(&self) -> Result<bool, StoreError> {
        if let Some(&known) = self.create_only.get() {
            return Ok(known);
        }
        let nanos = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let key = format!("probes/create-only-{}-{nanos}", std::process::id());
        self.put_new(&key, Bytes::from_static(b"first"))?;
        let second = self.put_new(&key, Bytes::from_static(b"second"))?;
        let honoured = !second && self.get(&key)?.is_some_and(|b| b.as_ref() == b"first");
        self.delete(&key)?;
        if !honoured {
            tracing::info!(store = %self.url, "the server overwrites on a create-only put: keys several writers may write are decided by the first writer");
        }
        Ok(*self.create_only.get_or_init(|| honoured))
    }

    /// Writes `key`, replacing it: only for derived views that are rewritten (the run's
    /// report), and for heartbeats.
    pub fn put(&self, key: &str, bytes: impl Into<Bytes>) -> Result<(), StoreError> {
        let bytes: Bytes = bytes.into();
        let path = self.path(key)?;
        self.count_put(bytes.len());
        self.patiently("put", key, || self.runtime.block_on(self.inner.put(&path, PutPayload::from(bytes.clone()))).map(|_| ()))
    }

    fn count_put(&self, len: usize) {
        self.counters.puts.fetch_add(1, Relaxed);
        self.counters.bytes_up.fetch_add(len as u64, Relaxed);
    }

    /// The object's bytes, or `None` if there is no such key. An object larger than
    /// [`MAX_OBJECT`] is refused before its body is read (everything in a store is input).
    pub fn get(&self, key: &str) -> Result<Option<Bytes>, StoreError> {
        self.get_at_most(key, MAX_OBJECT)
    }

    /// [`Store::get`] for an object that must not be larger than `limit` bytes (a manifest,
    /// a config, a result): a larger one is an error naming the key and both sizes.
    pub fn get_at_most(&self, key: &str, limit: u64) -> Result<Option<Bytes>, StoreError> {
        let path = self.path(key)?;
        self.counters.gets.fetch_add(1, Relaxed);
        // Ok(Err(size)): the object is there and too large (an answer, not an outage).
        let got = self.patiently("get", key, || {
            self.runtime.block_on(async {
                match self.inner.get(&path).await {
                    Ok(r) if r.meta.size > limit => Ok(Err(r.meta.size)),
                    Ok(r) => r.bytes().await.map(|b| Ok(Some(b))),
                    Err(object_store::Error::NotFound { .. }) => Ok(Ok(None)),
                    Err(e) => Err(e),
                }
            })
        })?;
        let got = got.map_err(|size| StoreError::TooLarge { url: self.url.clone(), key: key.to_string(), size, limit })?;
        if let Some(b) = &got {
            self.counters.bytes_down.fetch_add(b.len() as u64, Relaxed);
        }
        Ok(got)
    }

    /// When `key` was last written (the server's clock), or `None` if there is no such key
    /// (a HEAD request, counted with the gets).
    pub fn modified(&self, key: &str) -> Result<Option<SystemTime>, StoreError> {
        let path = self.path(key)?;
        self.counters.gets.fetch_add(1, Relaxed);
        self.patiently("head", key, || match self.runtime.block_on(self.inner.head(&path)) {
            Ok(m) => Ok(Some(SystemTime::from(m.last_modified))),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(e),
        })
    }

    /// Every object under `prefix` (a folder-like prefix: `selfplay/gen-0001`), sorted by key.
    pub fn list(&self, prefix: &str) -> Result<Vec<Listed>, StoreError> {
        self.list_from(prefix, None)
    }

    /// The objects under `prefix` whose keys sort after `after` (a key under `prefix`),
    /// sorted: what a reader that saw the listing up to `after` has not seen of a prefix
    /// whose keys only grow (one page for a few new keys, not the whole prefix again).
    pub fn list_after(&self, prefix: &str, after: &str) -> Result<Vec<Listed>, StoreError> {
        self.list_from(prefix, Some(after))
    }

    fn list_from(&self, prefix: &str, after: Option<&str>) -> Result<Vec<Listed>, StoreError> {
        let prefix_path = self.path(prefix.trim_end_matches('/'))?;
        let after = after.map(|a| self.path(a)).transpose()?;
        let found: Vec<object_store::ObjectMeta> = self.patiently("list", prefix, || {
            let stream = match &after {
                Some(a) => self.inner.list_with_offset(Some(&prefix_path), a),
                None => self.inner.list(Some(&prefix_path)),
            };
            self.runtime.block_on(stream.try_collect())
        })?;
        self.counters.lists.fetch_add((found.len() as u64).div_ceil(1000).max(1), Relaxed);
        let mut v: Vec<Listed> =
            found.into_iter().map(|m| Listed { key: m.location.to_string(), size: m.size, modified: SystemTime::from(m.last_modified) }).collect();
        v.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(v)
    }

    /// The objects directly under `prefix`, not those in its sub-folders (one LIST page
    /// with a delimiter, however many keys the sub-folders hold), sorted by key.
    pub fn list_top(&self, prefix: &str) -> Result<Vec<Listed>, StoreError> {
        let prefix_path = self.path(prefix.trim_end_matches('/'))?;
        let found = self.patiently("list", prefix, || self.runtime.block_on(self.inner.list_with_delimiter(Some(&prefix_path))))?;
        self.counters.lists.fetch_add((found.objects.len() as u64).div_ceil(1000).max(1), Relaxed);
        let mut v: Vec<Listed> =
            found.objects.into_iter().map(|m| Listed { key: m.location.to_string(), size: m.size, modified: SystemTime::from(m.last_modified) }).collect();
        v.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(v)
    }

    /// Removes `key` (no error if it is absent).
    pub fn delete(&self, key: &str) -> Result<(), StoreError> {
        let path = self.path(key)?;
        self.counters.deletes.fetch_add(1, Relaxed);
        self.patiently("delete", key, || match self.runtime.block_on(self.inner.delete(&path)) {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(e),
        })
    }

    pub fn counters(&self) -> Counters {
        let c = &self.counters;
        Counters {
            puts: c.puts.load(Relaxed),
            gets: c.gets.load(Relaxed),
            lists: c.lists.load(Relaxed),
            deletes: c.deletes.load(Relaxed),
            bytes_up: c.bytes_up.load(Relaxed),
            bytes_down: c.bytes_down.load(Relaxed),
            request_ms: c.request_ms.load(Relaxed),
            outage_ms: c.outage_ms.load(Relaxed),
        }
    }
}

/// Whether a failed call may succeed if tried again later: a server that did not answer
/// or answered with an error of its own. Every other kind is the answer.
fn may_pass(e: &object_store::Error) -> bool {
    matches!(e, object_store::Error::Generic { .. } | object_store::Error::JoinError { .. })
}

/// How a [`race`] ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RaceResult {
    Won,
    /// Another live contender holds it.
    Lost {
        winner: String,
    },
}

/// Decides who holds `prefix` (e.g. one generation's training) among contenders that each
/// call this with their own `id`, without a conditional write:
///
/// 1. if `incumbent` (e.g. the holder of the previous generation) is another contender
///    whose heartbeat (`heartbeats/<id>`, see [`heartbeat`]) is younger than `lease`, it
///    has the right of way: lost;
/// 2. write the claim `prefix/<id>` unless it exists (a restarted contender keeps its
///    place; claims and void marks are never rewritten or deleted while the run lasts);
/// 3. wait `settle` — longer than any put takes — so every claim written before ours
///    finished is listed;
/// 4. the earliest claim (server time, then key) of a live contender wins. A claim whose
///    owner stopped beating for `lease` is void for good (`prefix.void/<id>` is written),
///    so its owner, restarted, does not take back what another has taken over.
///
/// Two live contenders see each other's claims and agree on the earliest; one that
/// claims after another has listed sees an earlier claim and loses.
pub fn race(store: &Store, prefix: &str, id: &str, incumbent: Option<&str>, settle: Duration, lease: Duration) -> Result<RaceResult, StoreError> {
    heartbeat(store, id)?;
    let alive = |beats: &std::collections::HashMap<String, SystemTime>, who: &str, at: SystemTime| {
        // Server times only, so the contenders' clocks need not agree.
        who == id || beats.get(who).is_some_and(|&b| at.duration_since(b).map_or(true, |age| age < lease))
    };
    let beats = |store: &Store| -> Result<std::collections::HashMap<String, SystemTime>, StoreError> {
        Ok(store.list("heartbeats")?.into_iter().map(|l| (l.key.trim_start_matches("heartbeats/").to_string(), l.modified)).collect())
    };
    if let Some(inc) = incumbent.filter(|&inc| inc != id) {
        let beats = beats(store)?;
        // Our own beat, just written, is the store's "now".
        let now = beats.get(id).copied().unwrap_or_else(SystemTime::now);
        if alive(&beats, inc, now) {
            return Ok(RaceResult::Lost { winner: inc.to_string() });
        }
    }
    // Kept if it exists: a server that ignores create-only puts would give a rewritten
    // claim a new time, and a restarted contender would lose its place.
    let claim = format!("{prefix}/{id}");
    if store.modified(&claim)?.is_none() {
        store.put_new(&claim, Bytes::from(id.to_string()))?;
    }
    std::thread::sleep(settle);
    let beats = beats(store)?;
    let void: std::collections::HashSet<String> =
        store.list(&format!("{prefix}.void"))?.into_iter().map(|l| l.key.rsplit('/').next().unwrap_or_default().to_string()).collect();
    let listed = store.list(prefix)?;
    let newest_claim = listed.iter().map(|l| l.modified).max().unwrap_or_else(SystemTime::now);
    let mut claims = Vec::new();
    for l in listed {
        let who = l.key.rsplit('/').next().unwrap_or_default().to_string();
        if void.contains(&who) {
            continue;
        }
        if !alive(&beats, &who, newest_claim) {
            store.put(&format!("{prefix}.void/{who}"), Bytes::from(id.to_string()))?;
            continue;
        }
        claims.push((l.modified, who));
    }
    claims.sort();
    if void.contains(id) {
        let winner = claims.first().map(|(_, w)| w.clone()).unwrap_or_default();
        return Ok(RaceResult::Lost { winner });
    }
    match claims.first() {
        Some((_, who)) if who != id => Ok(RaceResult::Lost { winner: who.clone() }),
        _ => Ok(RaceResult::Won),
    }
}

/// Whether `id`'s claim under `prefix` was made void by a [`race`] it did not see (it was
/// silent past its lease): a contender checks this before each write that only the
/// holder may make, and stops where it is true.
pub fn voided(store: &Store, prefix: &str, id: &str) -> Result<bool, StoreError> {
    Ok(store.get(&format!("{prefix}.void/{id}"))?.is_some())
}

/// The value of `key`, which several writers (`id`s) may each try to write once: the
/// first write wins on every store, and every caller gets the winner's bytes (its own
/// or another's), so a writer that was replaced while it paused cannot change a value
/// decided without it.
///
/// Where the store refuses a create-only put of an existing key, that put decides. Where
/// it overwrites (Garage), each writer puts a candidate `key.cand/<id>` (kept if there),
/// waits `settle` — longer than any put takes — so that every candidate written before
/// its own is listed, and the earliest (server time, then key) wins; the winner's bytes
/// are then written to `key` itself, which readers read. Two writers that list after
/// settling see the same earliest candidate, so `key` is only ever written with one value.
pub fn decide(store: &Store, key: &str, id: &str, bytes: Bytes, settle: Duration) -> Result<Bytes, StoreError> {
    let vanished = |store: &Store| StoreError::Request {
        url: store.url.clone(),
        op: "decide",
        key: key.to_string(),
        source: Box::new(object_store::Error::NotFound { path: key.to_string(), source: "deleted while it was being decided".into() }),
    };
    if store.honours_create_only()? {
        if store.put_new(key, bytes.clone())? {
            return Ok(bytes);
        }
        return store.get_at_most(key, MAX_SMALL_OBJECT)?.ok_or_else(|| vanished(store));
    }
    if let Some(decided) = store.get_at_most(key, MAX_SMALL_OBJECT)? {
        return Ok(decided);
    }
    let mine = format!("{key}.cand/{id}");
    if store.modified(&mine)?.is_none() {
        store.put(&mine, bytes)?;
    }
    std::thread::sleep(settle);
    let first =
        store.list(&format!("{key}.cand"))?.into_iter().min_by(|a, b| (a.modified, &a.key).cmp(&(b.modified, &b.key))).ok_or_else(|| vanished(store))?;
    let winner = store.get_at_most(&first.key, MAX_SMALL_OBJECT)?.ok_or_else(|| vanished(store))?;
    store.put(key, winner.clone())?;
    Ok(winner)
}

/// Marks `id` alive (rewrites `heartbeats/<id>`); a contender beats at least once per
/// lease while it works.
pub fn heartbeat(store: &Store, id: &str) -> Result<(), StoreError> {
    store.put(&format!("heartbeats/{id}"), Bytes::from(id.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_local_store_writes_once_lists_by_prefix_and_counts_its_requests() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(&format!("file://{}", dir.path().display())).unwrap();
        assert!(s.put_new("a/b/one", "first").unwrap());
        assert!(!s.put_new("a/b/one", "second").unwrap(), "the second put of a key is refused");
        assert_eq!(s.get("a/b/one").unwrap().unwrap(), Bytes::from("first"));
        assert_eq!(s.get("a/b/none").unwrap(), None);
        s.put_new("a/b/two", "x").unwrap();
        s.put_new("a/c/three", "y").unwrap();
        s.put_new("ab/four", "z").unwrap();
        let keys: Vec<String> = s.list("a/b").unwrap().into_iter().map(|l| l.key).collect();
        assert_eq!(keys, ["a/b/one", "a/b/two"]);
        assert_eq!(s.list("a").unwrap().len(), 3, "a prefix is a folder: `ab/four` is not under `a`");
        assert_eq!(std::fs::read(dir.path().join("a/c/three")).unwrap(), b"y", "a local store is a plain directory");
        s.delete("a/b/two").unwrap();
        s.delete("a/b/two").unwrap();
        assert_eq!(s.list("a/b").unwrap().len(), 1);
        let c = s.counters();
        assert_eq!((c.puts, c.gets, c.lists, c.deletes), (5, 2, 3, 2));
        assert_eq!(c.bytes_up, 5 + 6 + 1 + 1 + 1);
        assert_eq!(c.bytes_down, 5);
        assert_eq!(c.to_string(), "12 requests (5 puts, 2 gets, 3 lists, 2 deletes), 14 bytes up, 5 bytes down");
        // A listing of what is directly under a prefix, not in its folders.
        let top: Vec<String> = s.list_top("a").unwrap().into_iter().map(|l| l.key).collect();
        assert!(top.is_empty(), "`a` holds only folders: {top:?}");
        s.put_new("a/top", "t").unwrap();
        assert_eq!(s.list_top("a").unwrap().into_iter().map(|l| l.key).collect::<Vec<_>>(), ["a/top"]);
    }

    #[test]
    fn a_listing_after_a_key_holds_only_the_keys_past_it_and_pages_are_counted_by_the_thousand() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(dir.path().to_str().unwrap()).unwrap();
        for i in 0..1203 {
            s.put_new(&format!("r/{i:06}.json"), "x").unwrap();
        }
        s.put_new("other/000000.json", "x").unwrap();
        let before = s.counters();
        assert_eq!(s.list("r").unwrap().len(), 1203);
        assert_eq!(s.counters().since(&before).lists, 2, "1,203 keys are two pages");
        let after: Vec<String> = s.list_after("r", "r/001200.json").unwrap().into_iter().map(|l| l.key).collect();
        assert_eq!(after, ["r/001201.json", "r/001202.json"]);
        assert!(s.list_after("r", "r/001202.json").unwrap().is_empty());
    }

    #[test]
    fn urls_that_cannot_be_a_store_are_refused_with_the_reason() {
        for (url, why) in [("s3://", "no bucket"), ("ftp://host/x", "unknown scheme"), ("file://relative/dir", "absolute path")] {
            let e = Store::open(url).unwrap_err().to_string();
            assert!(e.contains(why) && e.contains(url), "{url}: {e}");
        }
    }

    #[test]
    fn of_two_live_contenders_exactly_one_wins_and_a_dead_ones_claim_is_void() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(dir.path().to_str().unwrap()).unwrap();
        let settle = Duration::from_millis(500);
        let lease = Duration::from_secs(60);
        let results: Vec<RaceResult> = std::thread::scope(|scope| {
            let a = scope.spawn(|| race(&s, "claims/gen-0001", "alice", None, settle, lease).unwrap());
            let b = scope.spawn(|| race(&s, "claims/gen-0001", "bob", None, settle, lease).unwrap());
            vec![a.join().unwrap(), b.join().unwrap()]
        });
        assert_eq!(results.iter().filter(|r| **r == RaceResult::Won).count(), 1, "{results:?}");
        // A late contender loses to the holder; the holder, restarted, still holds it.
        let winner = if results[0] == RaceResult::Won { "alice" } else { "bob" };
        assert_eq!(race(&s, "claims/gen-0001", "carol", None, settle, lease).unwrap(), RaceResult::Lost { winner: winner.into() });
        assert_eq!(race(&s, "claims/gen-0001", winner, None, settle, lease).unwrap(), RaceResult::Won);
        // The live holder of the previous generation has the right of way to the next.
        assert_eq!(race(&s, "claims/gen-0002", "carol", Some(winner), settle, lease).unwrap(), RaceResult::Lost { winner: winner.into() });
        // Once every other contender has stopped beating for a lease, a newcomer wins,
        // and the old holder, back, does not take it back.
        std::thread::sleep(Duration::from_millis(700));
        let short = Duration::from_millis(600);
        assert_eq!(race(&s, "claims/gen-0001", "dave", None, settle, short).unwrap(), RaceResult::Won);
        assert_eq!(race(&s, "claims/gen-0001", winner, None, settle, short).unwrap(), RaceResult::Lost { winner: "dave".into() });
    }

    /// `decide` where the store overwrites (as Garage does): writers at once agree on one
    /// value; a writer that comes later, or comes back with other bytes, gets that value;
    /// the key itself only ever holds it.
    #[test]
    fn the_first_writer_decides_a_key_even_where_puts_overwrite() {
        let dir = tempfile::tempdir().unwrap();
        let local = Store::open(dir.path().to_str().unwrap()).unwrap();
        let s = Store { create_only: Arc::new(std::sync::OnceLock::from(false)), ..local.clone() };
        let settle = Duration::from_millis(300);
        let got: Vec<Bytes> = std::thread::scope(|scope| {
            let handles: Vec<_> = ["a", "b", "c"]
                .iter()
                .map(|id| {
                    let s = &s;
                    scope.spawn(move || decide(s, "step/gen-1", id, Bytes::from(format!("by {id}")), settle).unwrap())
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(got.windows(2).all(|w| w[0] == w[1]), "{got:?}");
        assert_eq!(s.get("step/gen-1").unwrap().unwrap(), got[0]);
        assert_eq!(decide(&s, "step/gen-1", "d", Bytes::from("by d"), settle).unwrap(), got[0], "a late writer changed it");
        // The earliest candidate wins even before `key` is written (its writer died).
        s.delete("step/gen-1").unwrap();
        let winner = got[0].clone();
        assert_eq!(decide(&s, "step/gen-1", "a", Bytes::from("by a, again"), settle).unwrap(), winner);
        // Where the store refuses to replace, the put decides and no candidate is written.
        assert_eq!(decide(&local, "step/gen-2", "a", Bytes::from("x"), settle).unwrap(), Bytes::from("x"));
        assert_eq!(decide(&local, "step/gen-2", "b", Bytes::from("y"), settle).unwrap(), Bytes::from("x"));
        assert!(local.list("step/gen-2.cand").unwrap().is_empty());
        assert!(local.honours_create_only().unwrap());
    }

    #[test]
    fn an_object_over_its_size_cap_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(dir.path().to_str().unwrap()).unwrap();
        s.put("big", vec![0u8; 1000]).unwrap();
        assert_eq!(s.get_at_most("big", 1000).unwrap().unwrap().len(), 1000);
        let e = s.get_at_most("big", 999).unwrap_err().to_string();
        assert!(e.contains("`big` is 1000 bytes, over the 999"), "{e}");
        assert_eq!(s.counters().bytes_down, 1000, "the refused body was read");
    }

    /// A server that does not answer is tried again until the store's patience runs out
    /// (the time between tries counted), then the error is the caller's; an answer that
    /// will not change is not tried again.
    #[test]
    fn a_silent_server_is_waited_for_up_to_the_patience() {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        std::env::set_var("AWS_ACCESS_KEY_ID", "k");
        std::env::set_var("AWS_SECRET_ACCESS_KEY", "s");
        std::env::set_var("AWS_REGION", "r");
        std::env::set_var("AWS_ENDPOINT_URL", format!("http://127.0.0.1:{port}"));
        let s = Store::open("s3://bucket/run").unwrap().with_patience(Duration::from_secs(4));
        let e = s.get("a/key").unwrap_err().to_string();
        assert!(e.contains("a/key"), "{e}");
        let c = s.counters();
        assert!(c.outage_ms >= 1000, "no wait between tries: {c:?}");
        assert!(c.request_ms >= c.outage_ms);
        assert!(c.to_string().contains("waiting out outages"), "{c}");
        let not_found = object_store::Error::NotFound { path: "x".into(), source: "gone".into() };
        let generic = object_store::Error::Generic { store: "S3", source: "connection refused".into() };
        assert!(!may_pass(&not_found) && may_pass(&generic));
    }
}
