//! A client for external USI engines run as subprocesses, built to survive engines that
//! crash, hang, print garbage or answer slowly: nothing an engine does can hang or panic
//! the arena. Every failure is an [`EngineError`] naming the engine, what was awaited,
//! the time waited and the engine's last lines of output.
//!
//! One engine is one process with three pipes, each served by a thread so that no call
//! blocks on the engine: a writer thread feeds its standard input from a queue (an
//! engine that stops reading cannot block the arena, and a write to a dead engine is an
//! error, not a panic: Rust ignores SIGPIPE); a reader thread turns its standard output
//! into timestamped lines on a channel (lines are capped in length, bytes that are not
//! UTF-8 are replaced); a third thread drains its standard error into the output log so
//! the engine never blocks on a full pipe. On Unix the engine runs in a process group of
//! its own and is killed with it, so that a kill also reaches what it started (the
//! engine itself, when a wrapper script runs it without `exec`). The group is outside
//! the terminal's, so a Ctrl-C of the arena reaches no engine: each is killed when its
//! client is dropped, or sees its input close. The engine is driven from one thread:
//! [`UsiEngine::go`] sends the position and the `go` command and returns at once;
//! [`UsiEngine::poll`] (non-blocking) or [`UsiEngine::wait`] (blocking, until a deadline)
//! collect the `bestmove`.
//!
//! The text of `bestmove` is returned as sent: legality is the arena's business (its
//! rules engine checks it). `bestmove resign` and `bestmove win` (a declaration under the
//! entering-king rule) are told apart.
//!
//! Each `go` must be answered by one `bestmove` (after `stop` too). When a search is
//! abandoned — `go` while a search is still running, or [`UsiEngine::new_game`] — the
//! client sends `stop` and discards the late `bestmove`, so it is never taken for the
//! answer to a later `go`. Every `go` is preceded by `isready`: the engine cannot answer
//! the `go` before its `readyok`, so a `bestmove` read before that `readyok` (a second,
//! stray answer to the previous search) answers nothing and is ignored.
//!
//! Facts about the engines this was tested with (see `scripts/install-engines.sh`):
//! * Fairy-Stockfish (`/usr/games/fairy-stockfish`) speaks USI when its first command is
//!   `usi`; its variant option is `UCI_Variant` (default `shogi` in USI mode, so
//!   `position startpos` is standard shogi), `go nodes N` is honoured, mate scores are in
//!   plies, and a mated side answers `info depth 0 score mate 0` then `bestmove resign`.
//! * GPSShogi (`/usr/games/gpsusi`) takes 1–3 s to start (it loads its evaluation
//!   files between `usi` and `readyok`), honours `btime`/`wtime`/`byoyomi`, `infinite`
//!   with `stop`, and `mate`, but aborts (SIGABRT, "unknown option in go …") on `go
//!   nodes`, `depth`, `movetime`, `binc`/`winc` and `ponder`. At its default `LimitDepth`
//!   (10) it thinks about a second even when `byoyomi` is shorter (100–500 ms); with
//!   `LimitDepth 4` a move takes about 0.1 s. It does not exit when its input closes (so
//!   [`UsiEngine::quit`] and `Drop` kill it when `quit` was not sent). It saves its options
//!   in `$OSL_HOME/gpsusi.conf` (default `/usr/share/gpsshogi-data`) when that is writable.

use std::collections::VecDeque;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender, TryRecvError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// How many lines (sent and received) [`UsiEngine::last_output`] keeps.
pub const OUTPUT_LINES: usize = 40;
/// Lines kept in the output log are cut to this many characters.
const LOG_LINE_CHARS: usize = 400;
/// Longer lines from an engine are cut to this many bytes (the rest is discarded).
const MAX_LINE_BYTES: usize = 64 * 1024;
/// Lines the reader thread may have queued before it stops reading (and the engine
/// blocks on its output) until the client drains them.
const CHANNEL_LINES: usize = 8192;
/// How long [`UsiEngine::quit`] lets an engine exit by itself before killing it.
const QUIT_GRACE: Duration = Duration::from_secs(1);
/// How long an engine whose output closed may take to exit before it is killed.
const EXIT_GRACE: Duration = Duration::from_millis(500);
/// Distance reported for `score mate +` / `score mate -` (a mate of unknown length).
pub const MATE_UNKNOWN_PLIES: i32 = 1000;
/// The most `multipv` lines a search's reply keeps (a shogi position has at most 593
/// legal moves).
const MAX_MULTIPV: u32 = 600;

/// How to run one engine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineConfig {
    /// The name used in logs and errors (not the engine's `id name`).
    pub name: String,
    /// The executable. A relative path with more than one component is taken relative to
    /// the arena's working directory (not `working_dir`); a bare name is looked up in `PATH`.
    pub command: PathBuf,
    pub args: Vec<String>,
    /// The engine's working directory (default: the arena's). For environment variables,
    /// run the engine through `/usr/bin/env` (`env VAR=value engine args…`: it execs the
    /// engine, so the process is the engine's own).
    pub working_dir: Option<PathBuf>,
    /// `setoption name N value V` sent after `usiok`, in this order (an empty value sends
    /// `setoption name N`, for buttons).
    pub options: Vec<(String, String)>,
    /// The time allowed for `usi` … `usiok`, the options and `isready` … `readyok`
    /// together; also for `usinewgame` … `readyok` in [`UsiEngine::new_game`].
    pub init_timeout: Duration,
}

impl EngineConfig {
    /// A configuration with no arguments or options and a 10 s init timeout.
    pub fn new(name: impl Into<String>, command: impl Into<PathBuf>) -> EngineConfig {
        EngineConfig {
            name: name.into(),
            command: command.into(),
            args: Vec::new(),
            working_dir: None,
            options: Vec::new(),
            init_timeout: Duration::from_secs(10),
        }
    }
}

/// Everything that can go wrong with an engine. Each variant names the engine and (but
/// for `Spawn`) carries its last lines of output, which `Display` prints.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("engine {engine}: cannot start {}: {source}", .command.display())]
    Spawn {
        engine: String,
        command: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("engine {engine} exited ({}) while the client was waiting for {waiting_for}{}",
        describe_exit(*.status, *.signal), show_output(.last_output))]
    Exited {
        engine: String,
        /// What the client was waiting for (`bestmove`, `usiok`, …; `nothing` when idle).
        waiting_for: String,
        /// The exit status, when the process exited normally.
        status: Option<i32>,
        /// The signal that ended the process, when one did (9 when the client had to kill it).
        signal: Option<i32>,
        last_output: Vec<String>,
    },
    #[error("engine {engine}: no {waiting_for} after {after:?}{}", show_output(.last_output))]
    Timeout {
        engine: String,
        waiting_for: String,
        /// How long the client waited (for `bestmove`: since `go` was written).
        after: Duration,
        last_output: Vec<String>,
    },
    #[error("engine {engine}: protocol error: {message}{}", show_output(.last_output))]
    Protocol { engine: String, message: String, last_output: Vec<String> },
    #[error("engine {engine}: i/o error while {context}: {source}{}", show_output(.last_output))]
    Io {
        engine: String,
        context: String,
        #[source]
        source: io::Error,
        last_output: Vec<String>,
    },
}

impl EngineError {
    /// The configured name of the engine at fault.
    pub fn engine(&self) -> &str {
        match self {
            EngineError::Spawn { engine, .. }
            | EngineError::Exited { engine, .. }
            | EngineError::Timeout { engine, .. }
            | EngineError::Protocol { engine, .. }
            | EngineError::Io { engine, .. } => engine,
        }
    }

    /// The engine's last lines of output when the error happened (empty for `Spawn`).
    pub fn last_output(&self) -> &[String] {
        match self {
            EngineError::Spawn { .. } => &[],
            EngineError::Exited { last_output, .. }
            | EngineError::Timeout { last_output, .. }
            | EngineError::Protocol { last_output, .. }
            | EngineError::Io { last_output, .. } => last_output,
        }
    }

    pub fn is_timeout(&self) -> bool {
        matches!(self, EngineError::Timeout { .. })
    }
}

fn describe_exit(status: Option<i32>, signal: Option<i32>) -> String {
    match (status, signal) {
        (Some(code), _) => format!("status {code}"),
        (None, Some(sig)) => format!("signal {sig}"),
        (None, None) => "status unknown".to_string(),
    }
}

fn show_output(lines: &[String]) -> String {
    if lines.is_empty() {
        return "; no output".to_string();
    }
    let mut s = String::from("; last output:");
    for line in lines {
        s.push_str("\n  ");
        s.push_str(line);
    }
    s
}

/// What the engine said about its search: one `info` line that carried a score
/// (`info string` lines are never parsed).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EngineInfo {
    /// The line's `multipv` index (1 = the best move; absent means 1).
    pub multipv: Option<u32>,
    pub depth: Option<u32>,
    pub seldepth: Option<u32>,
    pub nodes: Option<u64>,
    /// Centipawns from the side to move's point of view.
    pub score_cp: Option<i32>,
    /// Mate in this many plies (USI): positive when the side to move mates, negative when
    /// it is mated. `score mate +`/`-` give ±[`MATE_UNKNOWN_PLIES`].
    pub score_mate: Option<i32>,
    /// `lowerbound` / `upperbound` after the score, when the engine said so.
    pub bound: Option<ScoreBound>,
    pub time_ms: Option<u64>,
    pub nps: Option<u64>,
    pub pv: Vec<String>,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ScoreBound {
    Lower,
    Upper,
}

impl EngineInfo {
    /// Parses the fields of an `info` line (`line` with or without the leading `info`).
    /// Returns `None` for `info string …` and for lines without a score, and for
    /// secondary lines of a multi-PV search.
    pub fn parse_scored(line: &str) -> Option<EngineInfo> {
        Self::parse_any_pv(line).filter(|i| i.multipv.is_none_or(|k| k == 1))
    }

    /// As [`parse_scored`](Self::parse_scored), secondary lines of a multi-PV search
    /// included.
    fn parse_any_pv(line: &str) -> Option<EngineInfo> {
        let mut tokens = line.split_whitespace().peekable();
        if tokens.peek() == Some(&"info") {
            tokens.next();
        }
        let mut info = EngineInfo::default();
        let mut scored = false;
        while let Some(key) = tokens.next() {
            match key {
                "string" => return None,
                "depth" => info.depth = tokens.next().and_then(|t| t.parse().ok()),
                "seldepth" => info.seldepth = tokens.next().and_then(|t| t.parse().ok()),
                "nodes" => info.nodes = tokens.next().and_then(|t| t.parse().ok()),
                "nps" => info.nps = tokens.next().and_then(|t| t.parse().ok()),
                "time" => info.time_ms = tokens.next().and_then(|t| t.parse().ok()),
                "multipv" => info.multipv = tokens.next().and_then(|t| t.parse::<u32>().ok()),
                "score" => match tokens.next() {
                    Some("cp") => {
                        if let Some(cp) = tokens.next().and_then(|t| t.parse::<i64>().ok()) {
                            info.score_cp = Some(cp.clamp(i32::MIN as i64, i32::MAX as i64) as i32);
                            scored = true;
                        }
                    }
                    Some("mate") => {
                        let plies = match tokens.next() {
                            Some("+") => Some(MATE_UNKNOWN_PLIES),
                            Some("-") => Some(-MATE_UNKNOWN_PLIES),
                            Some(t) => t.parse::<i32>().ok(),
                            None => None,
                        };
                        if plies.is_some() {
                            info.score_mate = plies;
                            scored = true;
                        }
                    }
                    _ => {}
                },
                "lowerbound" => info.bound = Some(ScoreBound::Lower),
                "upperbound" => info.bound = Some(ScoreBound::Upper),
                "pv" => {
                    info.pv = tokens.by_ref().map(str::to_string).collect();
                }
                // Fields with one argument that are not kept.
                "currmove" | "currmovenumber" | "hashfull" | "tbhits" | "cpuload" | "sbhits" => {
                    tokens.next();
                }
                _ => {}
            }
        }
        scored.then_some(info)
    }
}

/// The engine's choice, as sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BestMove {
    /// A move in USI notation as the engine wrote it (not checked here).
    Move(String),
    /// `bestmove resign`.
    Resign,
    /// `bestmove win`: a declaration of a win under the entering-king rule.
    Win,
}

/// The answer to one `go`.
#[derive(Clone, Debug, PartialEq)]
pub struct EngineReply {
    pub best: BestMove,
    /// The move the engine would ponder on (`ponder …`), as sent.
    pub ponder: Option<String>,
    /// The last `info` line of this search that carried a score (default when none did).
    pub info: EngineInfo,
    /// The last scored line of each `multipv` index this search reported, by index (the
    /// lines of a `MultiPV` search; one line, or none, otherwise).
    pub lines: Vec<EngineInfo>,
    /// From the moment `go` was written to the moment the `bestmove` line was read.
    pub elapsed: Duration,
}

/// What the reader thread passes on.
enum Event {
    /// A line of standard output and when it was read.
    Line(String, Instant),
    /// Standard output closed (or could not be read): the engine is gone or going.
    Closed,
}

type Log = Arc<Mutex<VecDeque<String>>>;

fn log_push(log: &Log, prefix: &str, line: &str) {
    let mut entry = String::with_capacity(prefix.len() + line.len().min(LOG_LINE_CHARS));
    entry.push_str(prefix);
    match line.char_indices().nth(LOG_LINE_CHARS) {
        Some((cut, _)) => {
            entry.push_str(&line[..cut]);
            entry.push('…');
        }
        None => entry.push_str(line),
    }
    let mut log = log.lock().unwrap_or_else(|e| e.into_inner());
    if log.len() >= OUTPUT_LINES {
        log.pop_front();
    }
    log.push_back(entry);
}

/// Reads one line of at most [`MAX_LINE_BYTES`] (the rest of a longer line is skipped),
/// without its line ending. `None` at the end of the stream.
fn read_line_capped(reader: &mut impl BufRead, buf: &mut Vec<u8>) -> io::Result<Option<String>> {
    buf.clear();
    let mut seen_any = false;
    loop {
        let available = match reader.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            if !seen_any {
                return Ok(None);
            }
            break;
        }
        seen_any = true;
        let (chunk, done) = match available.iter().position(|&b| b == b'\n') {
            Some(i) => (&available[..i], Some(i + 1)),
            None => (available, None),
        };
        let room = MAX_LINE_BYTES.saturating_sub(buf.len());
        buf.extend_from_slice(&chunk[..chunk.len().min(room)]);
        let used = done.unwrap_or(available.len());
        reader.consume(used);
        if done.is_some() {
            break;
        }
    }
    if buf.last() == Some(&b'\r') {
        buf.pop();
    }
    Ok(Some(String::from_utf8_lossy(buf).into_owned()))
}

/// A thread name for an engine (no NUL bytes, which thread names cannot hold).
fn thread_name(kind: &str, engine: &str) -> String {
    let clean: String = engine.chars().filter(|&c| c != '\0').take(32).collect();
    format!("usi-{kind}-{clean}")
}

fn spawn_stdout_reader(name: &str, stdout: impl Read + Send + 'static, tx: SyncSender<Event>, log: Log) -> io::Result<()> {
    thread::Builder::new().name(thread_name("out", name)).spawn(move || {
        let mut reader = BufReader::with_capacity(64 * 1024, stdout);
        let mut buf = Vec::new();
        loop {
            match read_line_capped(&mut reader, &mut buf) {
                Ok(Some(line)) => {
                    let at = Instant::now();
                    log_push(&log, "< ", &line);
                    if tx.send(Event::Line(line, at)).is_err() {
                        return; // The client is gone.
                    }
                }
                Ok(None) | Err(_) => {
                    let _ = tx.send(Event::Closed);
                    return;
                }
            }
        }
    })?;
    Ok(())
}

/// Where the writer thread reports a failed write.
type WriteFailure = Arc<Mutex<Option<io::Error>>>;

fn spawn_stdin_writer(name: &str, mut stdin: ChildStdin, rx: Receiver<Vec<u8>>, failure: WriteFailure) -> io::Result<()> {
    thread::Builder::new().name(thread_name("in", name)).spawn(move || {
        // Ends when the client drops its sender (closing the engine's input) or a write fails.
        for bytes in rx {
            if let Err(e) = stdin.write_all(&bytes).and_then(|()| stdin.flush()) {
                *failure.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                return;
            }
        }
    })?;
    Ok(())
}

fn spawn_stderr_drain(name: &str, stderr: impl Read + Send + 'static, log: Log) -> io::Result<()> {
    thread::Builder::new().name(thread_name("err", name)).spawn(move || {
        let mut reader = BufReader::new(stderr);
        let mut buf = Vec::new();
        while let Ok(Some(line)) = read_line_capped(&mut reader, &mut buf) {
            log_push(&log, "! ", &line);
        }
    })?;
    Ok(())
}

/// A running USI engine. Dropping it kills the process (and reaps it).
pub struct UsiEngine {
    name: String,
    id_name: Option<String>,
    id_author: Option<String>,
    options: Vec<String>,
    init_timeout: Duration,
    child: Child,
    /// The queue to the writer thread; `None` once the engine's input is closed.
    input: Option<Sender<Vec<u8>>>,
    write_failure: WriteFailure,
    rx: Receiver<Event>,
    /// Lines sent (`> `), read from standard output (`< `) and from standard error (`! `).
    log: Log,
    /// `go` commands not yet answered by a `bestmove`; more than one after an abandoned
    /// search, whose late answers are discarded.
    outstanding: u32,
    /// `isready` commands not yet answered by a `readyok`; while one sent before the
    /// current `go` is, no `bestmove` can be its answer.
    readyok_pending: u32,
    /// When the current `go` was written.
    go_sent: Option<Instant>,
    /// The last scored `info` of each `multipv` index of the current search (the first is
    /// the reply's `info`).
    lines: Vec<EngineInfo>,
    /// Standard output has closed.
    closed: bool,
    /// The process has been reaped: (exit status, signal).
    exit: Option<(Option<i32>, Option<i32>)>,
    /// The death has been reported by `poll`/`wait` (reported once when idle).
    death_reported: bool,
}

impl UsiEngine {
    /// Starts the engine and plays the handshake: `usi` … `usiok` (collecting `id` and
    /// `option` lines), the configured options, `isready` … `readyok`, all within
    /// `cfg.init_timeout`. An option the engine did not declare is sent anyway, with a
    /// warning.
    pub fn start(cfg: &EngineConfig) -> Result<UsiEngine, EngineError> {
        let started = Instant::now();
        let deadline = started + cfg.init_timeout;
        let spawn_err = |source: io::Error| EngineError::Spawn { engine: cfg.name.clone(), command: cfg.command.clone(), source };
        let program = resolve_program(&cfg.command);
        let mut command = Command::new(&program);
        command.args(&cfg.args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        if let Some(dir) = &cfg.working_dir {
            command.current_dir(dir);
        }
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut child = command.spawn().map_err(spawn_err)?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        let log: Log = Arc::new(Mutex::new(VecDeque::with_capacity(OUTPUT_LINES)));
        let (tx, rx) = mpsc::sync_channel(CHANNEL_LINES);
        let (input, input_rx) = mpsc::channel::<Vec<u8>>();
        let write_failure: WriteFailure = Arc::new(Mutex::new(None));
        let threads = (|| {
            match stdin {
                Some(stdin) => spawn_stdin_writer(&cfg.name, stdin, input_rx, write_failure.clone())?,
                None => drop(input_rx),
            }
            if let Some(out) = stdout {
                spawn_stdout_reader(&cfg.name, out, tx, log.clone())?;
            } else {
                let _ = tx.send(Event::Closed);
            }
            if let Some(err) = stderr {
                spawn_stderr_drain(&cfg.name, err, log.clone())?;
            }
            Ok(())
        })();
        if let Err(e) = threads {
            kill_all(&mut child);
            let _ = child.wait();
            return Err(spawn_err(e));
        }
        let mut engine = UsiEngine {
            name: cfg.name.clone(),
            id_name: None,
            id_author: None,
            options: Vec::new(),
            init_timeout: cfg.init_timeout,
            child,
            input: Some(input),
            write_failure,
            rx,
            log,
            outstanding: 0,
            readyok_pending: 0,
            go_sent: None,
            lines: Vec::new(),
            closed: false,
            exit: None,
            death_reported: false,
        };
        // On an error the engine is dropped, which kills it.
        engine.send("usi")?;
        engine.wait_for("usiok", started, deadline, |e, line| {
            let mut t = line.split_whitespace();
            match t.next() {
                Some("usiok") => Ok(true),
                Some("uciok") => Err("the engine answered `uciok`: it speaks UCI, not USI".to_string()),
                Some("id") => {
                    match t.next() {
                        Some("name") => e.id_name = Some(rest_after(line, 2)),
                        Some("author") => e.id_author = Some(rest_after(line, 2)),
                        _ => {}
                    }
                    Ok(false)
                }
                Some("option") => {
                    if let Some(name) = option_name(line) {
                        e.options.push(name);
                    }
                    Ok(false)
                }
                _ => Ok(false),
            }
        })?;
        for (name, value) in &cfg.options {
            if !engine.options.iter().any(|o| o.eq_ignore_ascii_case(name)) {
                tracing::warn!(
                    engine = %engine.name,
                    option = %name,
                    "the engine did not declare this option; sending it anyway"
                );
            }
            if value.is_empty() {
                engine.send(&format!("setoption name {name}"))?;
            } else {
                engine.send(&format!("setoption name {name} value {value}"))?;
            }
        }
        engine.sync_until(started, deadline)?;
        tracing::debug!(
            engine = %engine.name,
            id = engine.id_name.as_deref().unwrap_or("?"),
            ms = started.elapsed().as_millis() as u64,
            "engine ready"
        );
        Ok(engine)
    }

    /// The configured name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The engine's own name (`id name …`), if it gave one.
    pub fn id_name(&self) -> Option<&str> {
        self.id_name.as_deref()
    }

    /// The engine's author (`id author …`), if it gave one.
    pub fn id_author(&self) -> Option<&str> {
        self.id_author.as_deref()
    }

    /// The names of the options the engine declared, in its order.
    pub fn options(&self) -> &[String] {
        &self.options
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether a `go` is waiting for its `bestmove`.
    pub fn searching(&self) -> bool {
        self.go_sent.is_some()
    }

    /// `usinewgame`, then `isready` … `readyok` within the init timeout. A search still
    /// running is stopped first and its `bestmove` awaited (and discarded) in the same time.
    pub fn new_game(&mut self) -> Result<(), EngineError> {
        let started = Instant::now();
        let deadline = started + self.init_timeout;
        if self.outstanding > 0 {
            self.send("stop")?;
        }
        self.go_sent = None;
        self.send("usinewgame")?;
        self.sync_until(started, deadline)?;
        if self.outstanding > 0 {
            let what = format!("bestmove after stop ({} unanswered go)", self.outstanding);
            self.wait_for(&what, started, deadline, |e, _| Ok(e.outstanding == 0))?;
        }
        Ok(())
    }

    /// `isready` … `readyok` within `timeout` (late `bestmove`s of abandoned searches are
    /// discarded meanwhile).
    pub fn sync(&mut self, timeout: Duration) -> Result<(), EngineError> {
        let started = Instant::now();
        self.sync_until(started, started + timeout)
    }

    /// Sends `position` then `go` (e.g. `position startpos moves 7g7f` and `go btime 1000
    /// wtime 1000 byoyomi 100`) and returns at once; the time of the reply counts from the
    /// moment `go` is handed to the writer thread (which writes it straight away). A search
    /// still running is stopped first and its answer will be discarded.
    pub fn go(&mut self, position: &str, go: &str) -> Result<(), EngineError> {
        if self.outstanding > 0 {
            self.send("stop")?;
        }
        // What the engine says before its `readyok` is not the answer to this `go`.
        self.send("isready")?;
        self.readyok_pending += 1;
        self.send(position)?;
        self.lines.clear();
        self.go_sent = Some(Instant::now());
        self.outstanding += 1;
        if let Err(e) = self.send(go) {
            self.go_sent = None;
            self.outstanding = self.outstanding.saturating_sub(1);
            return Err(e);
        }
        Ok(())
    }

    /// Takes what the engine has sent so far without blocking. `Some` when the `bestmove`
    /// of the current search has arrived, or when the process has died (an error, given
    /// once when no search is running); `None` otherwise.
    pub fn poll(&mut self) -> Option<Result<EngineReply, EngineError>> {
        // Lines read after this call began are left for the next (but one), so that an
        // engine printing without pause cannot keep the call from returning.
        let called = Instant::now();
        loop {
            match self.rx.try_recv() {
                Ok(Event::Line(line, at)) => {
                    match self.handle_search_line(&line, at) {
                        Ok(Some(reply)) => return Some(Ok(reply)),
                        Ok(None) => {}
                        Err(e) => return Some(Err(e)),
                    }
                    if at > called {
                        return None;
                    }
                }
                Ok(Event::Closed) | Err(TryRecvError::Disconnected) => {
                    self.closed = true;
                    break;
                }
                Err(TryRecvError::Empty) => break,
            }
        }
        if self.closed && (self.go_sent.is_some() || !self.death_reported) {
            let waiting_for = if self.go_sent.is_some() { "bestmove" } else { "nothing" };
            self.death_reported = true;
            return Some(Err(self.exited_error(waiting_for)));
        }
        None
    }

    /// Blocks until the `bestmove` of the current search arrives (`Ok`), the deadline
    /// passes (`Timeout`; the search is left running — [`stop`](Self::stop) it or drop
    /// the engine) or the process dies (`Exited`).
    pub fn wait(&mut self, deadline: Instant) -> Result<EngineReply, EngineError> {
        let Some(sent) = self.go_sent else {
            return Err(self.protocol_error("wait() called with no search running".to_string()));
        };
        loop {
            if self.closed {
                self.death_reported = true;
                return Err(self.exited_error("bestmove"));
            }
            let now = Instant::now();
            let event = if now >= deadline {
                match self.rx.try_recv() {
                    Ok(ev) => Ok(ev),
                    Err(TryRecvError::Empty) => Err(RecvTimeoutError::Timeout),
                    Err(TryRecvError::Disconnected) => Err(RecvTimeoutError::Disconnected),
                }
            } else {
                self.rx.recv_timeout(deadline - now)
            };
            match event {
                Ok(Event::Line(line, at)) => {
                    if let Some(reply) = self.handle_search_line(&line, at)? {
                        return Ok(reply);
                    }
                    if at > deadline {
                        // Past the deadline only the lines read before it are taken (and
                        // this one): a flood of output cannot stretch the wait.
                        return Err(self.timeout_error("bestmove", sent.elapsed()));
                    }
                }
                Ok(Event::Closed) | Err(RecvTimeoutError::Disconnected) => self.closed = true,
                Err(RecvTimeoutError::Timeout) => {
                    return Err(self.timeout_error("bestmove", sent.elapsed()));
                }
            }
        }
    }

    /// Sends `stop` (errors are ignored: a dead engine shows up in `poll`/`wait`).
    pub fn stop(&mut self) {
        if let Err(e) = self.send("stop") {
            tracing::debug!(engine = %self.name, error = %e, "stop not delivered");
        }
    }

    /// Sends `gameover win|lose|draw` (errors are ignored).
    pub fn game_over(&mut self, result: &str) {
        if let Err(e) = self.send(&format!("gameover {result}")) {
            tracing::debug!(engine = %self.name, error = %e, "gameover not delivered");
        }
    }

    /// Sends a line as it is (for commands this client has no method for).
    pub fn send_line(&mut self, line: &str) -> Result<(), EngineError> {
        self.send(line)
    }

    /// Sends `quit`, closes the engine's input, gives it about a second to exit, then
    /// kills it; the process is reaped either way.
    pub fn quit(mut self) {
        if self.exit.is_none() {
            let _ = self.send("quit");
            self.input = None; // The writer thread sends what is queued, then closes the input.
            let until = Instant::now() + QUIT_GRACE;
            while Instant::now() < until {
                match self.child.try_wait() {
                    Ok(Some(status)) => {
                        self.exit = Some(split_status(status));
                        break;
                    }
                    Ok(None) => thread::sleep(Duration::from_millis(5)),
                    Err(_) => break,
                }
            }
        }
        // Drop kills and reaps what is left.
    }

    /// The last [`OUTPUT_LINES`] lines sent (`> `), read (`< `) and written by the engine
    /// to standard error (`! `), oldest first.
    pub fn last_output(&self) -> Vec<String> {
        self.log.lock().unwrap_or_else(|e| e.into_inner()).iter().cloned().collect()
    }

    /// Whether the process is still running (reaps it when it is not).
    pub fn is_alive(&mut self) -> bool {
        if self.exit.is_some() {
            return false;
        }
        match self.child.try_wait() {
            Ok(Some(status)) => {
                self.exit = Some(split_status(status));
                false
            }
            Ok(None) => true,
            Err(_) => false,
        }
    }

    // -----------------------------------------------------------------------------------

    /// Queues a line for the writer thread. A dead engine, or one whose input could not be
    /// written, gives an error (possibly one command late: writes are asynchronous).
    fn send(&mut self, line: &str) -> Result<(), EngineError> {
        log_push(&self.log, "> ", line);
        let command = first_word(line).to_string();
        if self.closed || self.exit.is_some() {
            return Err(self.exited_error(&format!("its input to accept `{command}`")));
        }
        let failure = self.write_failure.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(e) = failure {
            self.input = None;
            return Err(self.write_error(&command, e));
        }
        let mut bytes = Vec::with_capacity(line.len() + 1);
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
        let queued = match &self.input {
            Some(input) => input.send(bytes).is_ok(),
            None => false,
        };
        if !queued {
            self.input = None;
            let e = io::Error::new(io::ErrorKind::BrokenPipe, "the engine's input is closed");
            return Err(self.write_error(&command, e));
        }
        Ok(())
    }

    fn write_error(&mut self, command: &str, e: io::Error) -> EngineError {
        if e.kind() == io::ErrorKind::BrokenPipe || !self.is_alive() {
            self.exited_error(&format!("its input to accept `{command}`"))
        } else {
            EngineError::Io { engine: self.name.clone(), context: format!("sending `{command}`"), source: e, last_output: self.last_output() }
        }
    }

    /// `isready`, then lines until its `readyok` (discarding late `bestmove`s, and the
    /// `readyok`s of earlier `isready`s).
    fn sync_until(&mut self, started: Instant, deadline: Instant) -> Result<(), EngineError> {
        self.send("isready")?;
        self.readyok_pending += 1;
        self.wait_for("readyok", started, deadline, |e, line| Ok(line.trim() == "readyok" && e.readyok_pending == 0))
    }

    /// Reads lines until `done` says so (or fails with a protocol message), the deadline
    /// passes or the engine dies. `bestmove` lines are counted off the outstanding
    /// searches before `done` sees them.
    fn wait_for(
        &mut self,
        what: &str,
        started: Instant,
        deadline: Instant,
        mut done: impl FnMut(&mut Self, &str) -> Result<bool, String>,
    ) -> Result<(), EngineError> {
        loop {
            if self.closed {
                self.death_reported = true;
                return Err(self.exited_error(what));
            }
            let now = Instant::now();
            let event = if now >= deadline { Err(RecvTimeoutError::Timeout) } else { self.rx.recv_timeout(deadline - now) };
            match event {
                Ok(Event::Line(line, _)) => {
                    if first_word(&line) == "bestmove" && self.outstanding > 0 {
                        self.outstanding -= 1;
                        if self.outstanding == 0 {
                            self.go_sent = None;
                        }
                    }
                    if line.trim() == "readyok" {
                        self.readyok_pending = self.readyok_pending.saturating_sub(1);
                    }
                    match done(self, &line) {
                        Ok(true) => return Ok(()),
                        Ok(false) => {}
                        Err(message) => return Err(self.protocol_error(message)),
                    }
                }
                Ok(Event::Closed) | Err(RecvTimeoutError::Disconnected) => self.closed = true,
                Err(RecvTimeoutError::Timeout) => {
                    return Err(self.timeout_error(what, started.elapsed()));
                }
            }
        }
    }

    /// One line while a search may be running: `info` updates the search's info,
    /// `bestmove` ends it (or is discarded when it answers an abandoned search, or comes
    /// before the `readyok` that precedes the current `go`).
    fn handle_search_line(&mut self, line: &str, at: Instant) -> Result<Option<EngineReply>, EngineError> {
        let mut tokens = line.split_whitespace();
        match tokens.next() {
            Some("readyok") if line.trim() == "readyok" => {
                self.readyok_pending = self.readyok_pending.saturating_sub(1);
                Ok(None)
            }
            Some("info") => {
                // Before the `readyok`, what is said is about an earlier search.
                if let Some(info) = EngineInfo::parse_any_pv(line).filter(|_| self.readyok_pending == 0) {
                    let k = info.multipv.unwrap_or(1).clamp(1, MAX_MULTIPV) as usize;
                    if self.lines.len() < k {
                        self.lines.resize(k, EngineInfo::default());
                    }
                    self.lines[k - 1] = info;
                }
                Ok(None)
            }
            Some("bestmove") => {
                if self.outstanding == 0 {
                    tracing::debug!(engine = %self.name, line, "bestmove with no search running; ignored");
                    return Ok(None);
                }
                if self.outstanding == 1 && self.readyok_pending > 0 {
                    tracing::debug!(engine = %self.name, line, "bestmove before the readyok that precedes go; ignored");
                    return Ok(None);
                }
                self.outstanding -= 1;
                if self.outstanding > 0 {
                    // The answer to an abandoned search.
                    self.lines.clear();
                    return Ok(None);
                }
                let sent = self.go_sent.take().unwrap_or(at);
                let best = match tokens.next() {
                    None => {
                        return Err(self.protocol_error("`bestmove` without a move".to_string()));
                    }
                    Some("resign") => BestMove::Resign,
                    Some("win") => BestMove::Win,
                    Some(m) => BestMove::Move(m.to_string()),
                };
                let mut ponder = None;
                while let Some(t) = tokens.next() {
                    if t == "ponder" {
                        ponder = tokens.next().map(str::to_string);
                    }
                }
                let lines = std::mem::take(&mut self.lines);
                let info = lines.first().cloned().unwrap_or_default();
                // Indices the engine skipped are left out.
                let lines = lines.into_iter().filter(|l| l.score_cp.is_some() || l.score_mate.is_some()).collect();
                Ok(Some(EngineReply { best, ponder, info, lines, elapsed: at.saturating_duration_since(sent) }))
            }
            _ => Ok(None),
        }
    }

    fn timeout_error(&self, waiting_for: &str, after: Duration) -> EngineError {
        EngineError::Timeout { engine: self.name.clone(), waiting_for: waiting_for.to_string(), after, last_output: self.last_output() }
    }

    fn protocol_error(&self, message: String) -> EngineError {
        EngineError::Protocol { engine: self.name.clone(), message, last_output: self.last_output() }
    }

    /// The error for a dead engine: reaps it (killing it if it closed its output but
    /// lingers past a short grace).
    fn exited_error(&mut self, waiting_for: &str) -> EngineError {
        let (status, signal) = self.reap(EXIT_GRACE);
        self.go_sent = None;
        self.outstanding = 0;
        self.readyok_pending = 0;
        // Let the stderr thread log the engine's last words.
        thread::sleep(Duration::from_millis(10));
        EngineError::Exited { engine: self.name.clone(), waiting_for: waiting_for.to_string(), status, signal, last_output: self.last_output() }
    }

    fn reap(&mut self, grace: Duration) -> (Option<i32>, Option<i32>) {
        if let Some(exit) = self.exit {
            return exit;
        }
        let until = Instant::now() + grace;
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => {
                    let exit = split_status(status);
                    self.exit = Some(exit);
                    return exit;
                }
                Ok(None) if Instant::now() < until => thread::sleep(Duration::from_millis(2)),
                Ok(None) | Err(_) => break,
            }
        }
        kill_all(&mut self.child);
        let exit = self.child.wait().map(split_status).unwrap_or((None, None));
        self.exit = Some(exit);
        exit
    }
}

impl Drop for UsiEngine {
    fn drop(&mut self) {
        self.input = None;
        if self.exit.is_none() {
            // The group too when the process has exited by itself: what it started may
            // live on (reaped after, so that the group's id is still ours).
            kill_all(&mut self.child);
            let _ = self.child.wait();
        }
    }
}

/// Kills the engine's process group (the engine and everything it started that stayed
/// in it), then the process itself. Only while the process is not reaped: until then
/// its id, which is the group's, cannot be another's.
fn kill_all(child: &mut Child) {
    #[cfg(unix)]
    if let Ok(pgid) = libc::pid_t::try_from(child.id()) {
        // SAFETY: kill(2) takes plain integers and touches no memory of ours; an empty
        // group (ESRCH) is no error here.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
    let _ = child.kill();
}

impl std::fmt::Debug for UsiEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UsiEngine")
            .field("name", &self.name)
            .field("id_name", &self.id_name)
            .field("pid", &self.child.id())
            .field("searching", &self.go_sent.is_some())
            .finish_non_exhaustive()
    }
}

fn split_status(status: ExitStatus) -> (Option<i32>, Option<i32>) {
    #[cfg(unix)]
    let signal = std::os::unix::process::ExitStatusExt::signal(&status);
    #[cfg(not(unix))]
    let signal = None;
    (status.code(), signal)
}

/// A relative path with several components is made absolute against the current
/// directory, so that it does not depend on the engine's working directory.
fn resolve_program(command: &Path) -> PathBuf {
    if command.is_relative() && command.components().count() > 1 {
        if let Ok(cwd) = std::env::current_dir() {
            return cwd.join(command);
        }
    }
    command.to_path_buf()
}

fn first_word(line: &str) -> &str {
    line.split_whitespace().next().unwrap_or("")
}

/// The text of `line` after its first `n` words, with inner spacing kept.
fn rest_after(line: &str, n: usize) -> String {
    let mut rest = line.trim_start();
    for _ in 0..n {
        rest = rest.trim_start();
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        rest = &rest[end..];
    }
    rest.trim().to_string()
}

/// The name in `option name <name…> type …` (names may contain spaces).
fn option_name(line: &str) -> Option<String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let start = words.iter().position(|&w| w == "name")? + 1;
    let end = words[start..].iter().position(|&w| w == "type").map_or(words.len(), |i| start + i);
    (end > start).then(|| words[start..end].join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_info_lines() {
        let i = EngineInfo::parse_scored("info depth 6 seldepth 10 time 316 score cp 38 nodes 95323 nps 301112 pv 2g2f 3c3d").unwrap();
        assert_eq!(i.depth, Some(6));
        assert_eq!(i.seldepth, Some(10));
        assert_eq!(i.time_ms, Some(316));
        assert_eq!(i.score_cp, Some(38));
        assert_eq!(i.nodes, Some(95323));
        assert_eq!(i.nps, Some(301112));
        assert_eq!(i.pv, vec!["2g2f", "3c3d"]);
        let m = EngineInfo::parse_scored("info depth 3 multipv 1 score mate -2 upperbound nodes 9 pv 5a4a G*4b").unwrap();
        assert_eq!((m.score_mate, m.score_cp, m.bound), (Some(-2), None, Some(ScoreBound::Upper)));
        assert_eq!(EngineInfo::parse_scored("info score mate +").unwrap().score_mate, Some(MATE_UNKNOWN_PLIES));
        assert!(EngineInfo::parse_scored("info string score cp 10").is_none());
        assert!(EngineInfo::parse_scored("info depth 6").is_none());
        assert!(EngineInfo::parse_scored("info currmove 7g7f").is_none());
        assert!(EngineInfo::parse_scored("info multipv 2 score cp 5").is_none());
        let second = EngineInfo::parse_any_pv("info depth 6 multipv 2 score cp -107 upperbound nodes 10007 pv 9g9f 2b8h").unwrap();
        assert_eq!((second.multipv, second.score_cp, second.bound), (Some(2), Some(-107), Some(ScoreBound::Upper)));
        assert_eq!(second.pv, vec!["9g9f", "2b8h"]);
        assert_eq!(EngineInfo::parse_scored("info multipv 1 score cp 5").unwrap().multipv, Some(1));
        assert_eq!(EngineInfo::parse_scored("info score cp -1148897").unwrap().score_cp, Some(-1148897));
    }

    #[test]
    fn parses_handshake_lines() {
        assert_eq!(option_name("option name Debug Log File type string default"), Some("Debug Log File".into()));
        assert_eq!(option_name("option name USI_Hash type spin default 256"), Some("USI_Hash".into()));
        assert_eq!(option_name("option name"), None);
        assert_eq!(rest_after("id name  Fairy-Stockfish 11.1 LB 64 ", 2), "Fairy-Stockfish 11.1 LB 64");
    }

    #[test]
    fn caps_long_lines() {
        let mut data = vec![b'x'; MAX_LINE_BYTES * 3];
        data.extend_from_slice(b"\r\nnext\n\xff\xfe tail");
        let mut r = BufReader::with_capacity(1000, &data[..]);
        let mut buf = Vec::new();
        assert_eq!(read_line_capped(&mut r, &mut buf).unwrap().unwrap().len(), MAX_LINE_BYTES);
        assert_eq!(read_line_capped(&mut r, &mut buf).unwrap().unwrap(), "next");
        assert_eq!(read_line_capped(&mut r, &mut buf).unwrap().unwrap(), "\u{fffd}\u{fffd} tail");
        assert!(read_line_capped(&mut r, &mut buf).unwrap().is_none());
    }
}
