//! `copper play`: a local web server with a board to play every variant against any
//! player and to analyse positions and games.
//!
//! The server's rules engine is the only source of positions and legal moves: the page
//! (`page.html`, drawing with the viewer's `board.js`) sends the USI text of a move the
//! person clicked and draws the position the server answers with. Every request carries
//! the server's token (printed in the URL it opens with), so no other page or user on the
//! machine can drive it; nothing is served but the page and its JSON, and games are
//! written only under the output folder.
//!
//! Layers: [`record`] (saving games), [`analysis`] (network, search, alpha-beta),
//! [`session`] (a game and its opponent's thread), [`api`] (requests, their checks and
//! answers), and this module (the server).

pub mod analysis;
mod api;
mod record;
mod session;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// How to run the server.
#[derive(Clone, Debug)]
pub struct PlayConfig {
    /// Address to listen on (`127.0.0.1:8080`; port 0: any free port).
    pub listen: SocketAddr,
    /// Where games are saved.
    pub out: PathBuf,
    /// USI engines the page may name as opponents, each started only as the command line
    /// says (`--allow-engine`); no other spec starts a process.
    pub allowed_engines: players::EngineAllowList,
    /// Model directories the page may name as `checkpoint:DIR` besides the variants'
    /// shipped models (`--model`, repeatable): the way to play a model a run just made.
    pub models: Vec<PathBuf>,
    /// The token every request must carry; `None`: a random one.
    pub token: Option<String>,
    /// A game no page has asked about for this long is closed (its engine freed): long
    /// enough for a laptop's sleep; the page polls every 15 s while open, and a person's
    /// new game closes the one it replaces at once.
    pub idle_timeout: Duration,
}

impl PlayConfig {
    pub fn new(listen: SocketAddr, out: PathBuf) -> PlayConfig {
        PlayConfig {
            listen,
            out,
            allowed_engines: players::EngineAllowList::default(),
            models: Vec::new(),
            token: None,
            idle_timeout: Duration::from_secs(12 * 3600),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PlayError {
    #[error("cannot listen on {addr}: {source}")]
    Listen { addr: SocketAddr, source: std::io::Error },
    #[error("output folder {path}: {source}")]
    Out { path: PathBuf, source: std::io::Error },
    #[error("the server's runtime: {0}")]
    Runtime(std::io::Error),
    #[error("game file {path}: {problem}")]
    Game { path: PathBuf, problem: String },
    #[error("the server stopped: {0}")]
    Stopped(String),
}

/// A running server.
pub struct Server {
    addr: SocketAddr,
    token: String,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<Result<(), String>>>,
}

impl Server {
    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The URL to open, with the token.
    pub fn url(&self) -> String {
        let host = if self.addr.ip().is_unspecified() { "127.0.0.1".to_string() } else { self.addr.ip().to_string() };
        let host = if self.addr.is_ipv6() && !self.addr.ip().is_unspecified() { format!("[{host}]") } else { host };
        format!("http://{host}:{}/?token={}", self.addr.port(), self.token)
    }

    /// The URL that opens a study board of `text` (an SFEN or a `sfen … moves …` line)
    /// in `variant`.
    pub fn url_analysing(&self, variant: &str, text: &str) -> String {
        format!("{}#analyse={}:{}", self.url(), percent_encode(variant), percent_encode(text))
    }

    /// Serves until the process ends (or the server fails).
    pub fn wait(mut self) -> Result<(), PlayError> {
        match self.thread.take().map(|t| t.join()) {
            Some(Ok(Ok(()))) | None => Ok(()),
            Some(Ok(Err(e))) => Err(PlayError::Stopped(e)),
            Some(Err(_)) => Err(PlayError::Stopped("the server thread panicked".into())),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// What a caught panic said (its message, when it was text).
pub(crate) fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    panic.downcast_ref::<String>().cloned().or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default()
}

/// `text` for a URL: unreserved characters as they are, every other byte `%XX`.
fn percent_encode(text: &str) -> String {
    let mut out = String::new();
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A game from a file of records (`.jsonl` records, `.kif`, `.csa`; `index` picks one of
/// several, from 0) as its variant and a `sfen … moves …` line, for a study board.
pub fn game_from_file(path: &std::path::Path, index: usize) -> Result<(String, String), PlayError> {
    let bad = |problem: String| PlayError::Game { path: path.to_path_buf(), problem };
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or_default().to_ascii_lowercase();
    let records = match ext.as_str() {
        "jsonl" => gamerecords::read_jsonl(path).map_err(|e| bad(e.to_string()))?,
        "kif" | "csa" => {
            let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
            let r = if ext == "kif" { gamerecords::kif::from_kif(&text) } else { gamerecords::csa::from_csa(&text) };
            vec![r.map_err(|e| bad(e.to_string()))?]
        }
        _ => return Err(bad("expected a .jsonl file of game records, a .kif or a .csa".into())),
    };
    let n = records.len();
    let r = records.into_iter().nth(index).ok_or_else(|| bad(format!("game {index}: the file holds {n}")))?;
    let variant = r.load_variant().map_err(|e| bad(e.to_string()))?;
    // Replayed here, so a record that breaks the rules is refused with its place named.
    r.to_game(variant).map_err(|e| bad(e.to_string()))?;
    let moves = if r.moves.is_empty() { String::new() } else { format!(" moves {}", r.moves.join(" ")) };
    Ok((r.variant.clone(), format!("sfen {}{moves}", r.start_sfen)))
}

/// A token nobody can guess: 128 random bits, hex.
fn new_token() -> String {
    format!("{:032x}", rand::random::<u128>())
}

/// Binds the address and starts serving on a thread of its own; returns once requests
/// are accepted.
pub fn start(config: PlayConfig) -> Result<Server, PlayError> {
    std::fs::create_dir_all(&config.out).map_err(|source| PlayError::Out { path: config.out.clone(), source })?;
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().map_err(PlayError::Runtime)?;
    let listener = runtime.block_on(tokio::net::TcpListener::bind(config.listen)).map_err(|source| PlayError::Listen { addr: config.listen, source })?;
    let addr = listener.local_addr().map_err(|source| PlayError::Listen { addr: config.listen, source })?;
    let token = config.token.clone().unwrap_or_else(new_token);
    let state = api::AppState::new(&config, token.clone());
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let thread = std::thread::Builder::new()
        .name("play-server".into())
        .spawn(move || {
            runtime.block_on(async move {
                tokio::spawn(api::reap_idle(state.clone()));
                axum::serve(listener, api::router(state))
                    .with_graceful_shutdown(async {
                        let _ = rx.await;
                    })
                    .await
                    .map_err(|e| e.to_string())
            })
        })
        .map_err(PlayError::Runtime)?;
    tracing::info!(%addr, "copper play is serving");
    Ok(Server { addr, token, shutdown: Some(tx), thread: Some(thread) })
}
