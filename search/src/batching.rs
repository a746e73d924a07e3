//! A batching queue between many search threads and one evaluator (one accelerator):
//! each thread's call (its games' leaves) waits in a queue, and a server thread runs the
//! waiting calls together as one batch, so 16 workers with 32 games each meet in
//! batches of hundreds on the device instead of 16 small ones. On a CPU every worker
//! keeps its own evaluator instead (its batch already fills its core).
//!
//! # When a batch leaves (the adaptive part)
//! The server starts a batch when the positions waiting reach a *target*, or when the
//! oldest call has waited a *deadline*, whichever is first, and never takes more than
//! `max_batch` positions (whole calls only; a single larger call goes alone).
//! - Target: an exponential moving average (weight 1/4) of the positions waiting when a
//!   batch starts — in steady state, what all the workers submit while one batch runs. Waiting for that many fills
//!   the batch without waiting for a worker that is still busy with its tree.
//! - Deadline: half the moving average of the evaluator's time per batch, within
//!   [`BatchingConfig::min_wait`, `BatchingConfig::max_wait`]: waiting longer than half
//!   a batch's time for stragglers costs more device time than it saves.
//!
//! (The same trade-off as KataGo's `nnMaxBatchSize` with its server threads and
//! Leela Chess Zero's multiplexing backend, made adaptive.)
//!
//! # Batches in flight
//! `servers` threads take batches from the one queue, each running its own on the
//! evaluator, so that while one batch is on the device the next is gathered, encoded and
//! sent: with one server the device idles through every batch's CPU work and the
//! callers' replies (the H200's self-play used it 38% of the time). The evaluator must
//! take concurrent calls (burn's device backends queue them on the device's stream).
//!
//! # When the evaluator panics
//! The queue is poisoned: the callers of the failed batch, those queued behind it and
//! every later caller panic with the evaluator's message (none is served any more).

use crate::eval::{EvalRequest, Evaluation, Evaluator};
use crate::game::SearchGame;
use std::collections::VecDeque;
use std::panic::AssertUnwindSafe;
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Limits of the batching queue.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BatchingConfig {
    /// Most positions in one evaluator call.
    pub max_batch: usize,
    /// Shortest and longest time the oldest call waits for company.
    pub min_wait: Duration,
    pub max_wait: Duration,
    /// Server threads, each with one batch in the evaluator at a time (module docs).
    pub servers: usize,
}

impl Default for BatchingConfig {
    fn default() -> BatchingConfig {
        BatchingConfig { max_batch: 1024, min_wait: Duration::from_micros(50), max_wait: Duration::from_millis(5), servers: 1 }
    }
}

/// What the queue has done so far (for the self-play benchmark's report).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BatchingStats {
    pub batches: u64,
    pub positions: u64,
    /// Batches that left at the deadline with fewer positions waiting than the target
    /// (the rest left because the target was reached).
    pub deadline_batches: u64,
    /// Seconds inside the evaluator, summed over the servers (above the elapsed time when
    /// batches overlap), and since the queue started.
    pub busy_seconds: f64,
    pub elapsed_seconds: f64,
    /// Current target and deadline.
    pub target: f64,
    pub deadline_seconds: f64,
}

impl BatchingStats {
    pub fn mean_batch(&self) -> f64 {
        self.positions as f64 / self.batches.max(1) as f64
    }
    /// Evaluator time over elapsed time: the mean number of batches in the evaluator.
    pub fn busy_share(&self) -> f64 {
        self.busy_seconds / self.elapsed_seconds.max(1e-9)
    }
}

struct Call<G: SearchGame> {
    requests: Vec<EvalRequest<G>>,
    since: Instant,
    reply: mpsc::SyncSender<Vec<Evaluation>>,
}

struct State<G: SearchGame> {
    calls: VecDeque<Call<G>>,
    waiting_positions: usize,
    stop: bool,
    /// The evaluator panicked (its message): no call will be answered any more.
    poisoned: Option<String>,
    stats: BatchingStats,
    /// Moving average of seconds per evaluator call.
    batch_seconds: f64,
}

struct Shared<G: SearchGame> {
    state: Mutex<State<G>>,
    wake: Condvar,
    config: BatchingConfig,
    started: Instant,
}

/// An [`Evaluator`] that sends every call through the queue to `inner` (see the module
/// documentation). Cloning shares the queue; the server stops when the last clone drops.
pub struct BatchingEvaluator<G: SearchGame> {
    shared: Arc<Shared<G>>,
    _server: Arc<Server<G>>,
}

impl<G: SearchGame> Clone for BatchingEvaluator<G> {
    fn clone(&self) -> Self {
        BatchingEvaluator { shared: self.shared.clone(), _server: self._server.clone() }
    }
}

/// Stops and joins the server threads when the last evaluator handle is dropped.
struct Server<G: SearchGame> {
    shared: Arc<Shared<G>>,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

impl<G: SearchGame> Drop for Server<G> {
    fn drop(&mut self) {
        self.shared.state.lock().unwrap_or_else(|e| e.into_inner()).stop = true;
        self.shared.wake.notify_all();
        for t in std::mem::take(&mut *self.threads.lock().unwrap_or_else(|e| e.into_inner())) {
            let _ = t.join();
        }
    }
}

impl<G: SearchGame + Send + 'static> BatchingEvaluator<G>
where
    G::Move: Send,
{
    pub fn new<E: Evaluator<G> + 'static>(inner: E, config: BatchingConfig) -> BatchingEvaluator<G> {
        let config =
            BatchingConfig { max_batch: config.max_batch.max(1), max_wait: config.max_wait.max(config.min_wait), servers: config.servers.max(1), ..config };
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                calls: VecDeque::new(),
                waiting_positions: 0,
                stop: false,
                poisoned: None,
                stats: BatchingStats { target: 1.0, deadline_seconds: config.min_wait.as_secs_f64(), ..BatchingStats::default() },
                batch_seconds: 0.0,
            }),
            wake: Condvar::new(),
            config,
            started: Instant::now(),
        });
        let inner = Arc::new(inner);
        let threads = (0..config.servers)
            .map(|i| {
                let (for_thread, inner) = (shared.clone(), inner.clone());
                std::thread::Builder::new()
                    .name(format!("batching-evaluator-{i}"))
                    .spawn(move || {
                        // Any panic of a server fails the waiting callers instead of stranding them.
                        if let Err(p) = std::panic::catch_unwind(AssertUnwindSafe(|| serve(&for_thread, &*inner))) {
                            poison(&for_thread, &panic_message(&*p));
                        }
                    })
                    .expect("cannot start the batching evaluator's thread")
            })
            .collect();
        let server = Arc::new(Server { shared: shared.clone(), threads: Mutex::new(threads) });
        BatchingEvaluator { shared, _server: server }
    }
}

impl<G: SearchGame> BatchingEvaluator<G> {
    pub fn stats(&self) -> BatchingStats {
        let s = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
        BatchingStats { elapsed_seconds: self.shared.started.elapsed().as_secs_f64(), ..s.stats }
    }
}

impl<G: SearchGame + Send> Evaluator<G> for BatchingEvaluator<G>
where
    G::Move: Send,
{
    fn evaluate(&self, batch: &[EvalRequest<G>]) -> Vec<Evaluation> {
        if batch.is_empty() {
            return Vec::new();
        }
        let (reply, answer) = mpsc::sync_channel(1);
        {
            let mut s = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
            // Checked under the lock that `poison` drains the queue under: a call is
            // either refused here or dropped there, never left waiting.
            if let Some(m) = s.poisoned.clone() {
                drop(s);
                panic!("{}", poisoned_text(&m));
            }
            s.waiting_positions += batch.len();
            s.calls.push_back(Call { requests: batch.to_vec(), since: Instant::now(), reply });
        }
        self.shared.wake.notify_one();
        match answer.recv() {
            Ok(a) => a,
            Err(_) => {
                let m = self.shared.state.lock().unwrap_or_else(|e| e.into_inner()).poisoned.clone();
                panic!("{}", poisoned_text(m.as_deref().unwrap_or("the server stopped")))
            }
        }
    }
}

fn poisoned_text(message: &str) -> String {
    format!("the batching evaluator's evaluator panicked: {message}")
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_else(|| "(no message)".into())
}

/// Marks the queue failed (keeping the first message) and drops every queued call, so
/// that its caller's `recv` fails and it panics.
fn poison<G: SearchGame>(shared: &Shared<G>, message: &str) {
    let calls = {
        let mut s = shared.state.lock().unwrap_or_else(|e| e.into_inner());
        s.poisoned.get_or_insert_with(|| message.to_string());
        s.waiting_positions = 0;
        std::mem::take(&mut s.calls)
    };
    drop(calls);
    // The other servers stop too.
    shared.wake.notify_all();
}

/// The server loop: wait for a batch's worth (or the deadline), evaluate, reply.
fn serve<G: SearchGame, E: Evaluator<G>>(shared: &Shared<G>, inner: &E) {
    const EMA: f64 = 0.25;
    let config = shared.config;
    loop {
        let calls = {
            let mut s = shared.state.lock().unwrap_or_else(|e| e.into_inner());
            loop {
                if s.stop || s.poisoned.is_some() {
                    return;
                }
                if let Some(oldest) = s.calls.front().map(|c| c.since) {
                    let deadline = oldest + Duration::from_secs_f64(s.stats.deadline_seconds);
                    let now = Instant::now();
                    // The target is checked first: a batch whose target is reached counts
                    // as such even when the server came late (a busy machine).
                    if s.waiting_positions as f64 >= s.stats.target.min(config.max_batch as f64) {
                        break;
                    }
                    if now >= deadline {
                        s.stats.deadline_batches += 1;
                        break;
                    }
                    s = shared.wake.wait_timeout(s, deadline - now).unwrap_or_else(|e| e.into_inner()).0;
                } else {
                    s = shared.wake.wait(s).unwrap_or_else(|e| e.into_inner());
                }
            }
            // Whole calls up to max_batch positions (at least one call).
            let mut taken = Vec::new();
            let mut n = 0;
            while let Some(c) = s.calls.front() {
                if !taken.is_empty() && n + c.requests.len() > config.max_batch {
                    break;
                }
                n += c.requests.len();
                taken.push(s.calls.pop_front().unwrap());
            }
            // The target follows what is waiting when a batch starts: everything that
            // arrived while the previous one ran.
            let waiting = s.waiting_positions as f64;
            s.stats.target = ((1.0 - EMA) * s.stats.target + EMA * waiting).clamp(1.0, config.max_batch as f64);
            s.waiting_positions -= n;
            taken
        };
        let mut requests = Vec::with_capacity(calls.iter().map(|c| c.requests.len()).sum());
        let mut replies = Vec::with_capacity(calls.len());
        for c in calls {
            replies.push((c.requests.len(), c.reply));
            requests.extend(c.requests);
        }
        let started = Instant::now();
        let mut results = match std::panic::catch_unwind(AssertUnwindSafe(|| inner.evaluate(&requests))) {
            Ok(r) => r.into_iter(),
            Err(p) => {
                // Poisoned before this batch's replies drop, so its callers read the message.
                poison(shared, &panic_message(&*p));
                return;
            }
        };
        let seconds = started.elapsed().as_secs_f64();
        // Counted before the replies go out, so a caller holding its answers sees its
        // batch in `stats()`.
        {
            let mut s = shared.state.lock().unwrap_or_else(|e| e.into_inner());
            s.batch_seconds = if s.stats.batches == 0 { seconds } else { (1.0 - EMA) * s.batch_seconds + EMA * seconds };
            s.stats.deadline_seconds = (0.5 * s.batch_seconds).clamp(config.min_wait.as_secs_f64(), config.max_wait.as_secs_f64());
            s.stats.batches += 1;
            s.stats.positions += requests.len() as u64;
            s.stats.busy_seconds += seconds;
        }
        for (len, reply) in replies {
            let answer: Vec<Evaluation> = results.by_ref().take(len).collect();
            // A worker that gave up (its thread ended) is no reason to stop the others.
            let _ = reply.send(answer);
        }
    }
}
