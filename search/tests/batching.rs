//! The batching queue: every caller gets exactly its own answers, calls from many
//! threads meet in batches larger than any one call, `max_batch` is respected, and
//! dropping the last handle stops the server (and drops the evaluator it owns).

use search::toy::Bandit;
use search::{BatchingConfig, BatchingEvaluator, EvalRequest, Evaluation, Evaluator, SearchGame};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Answers value = the request's first arm value (so each answer names its request),
/// records every batch size, and takes `delay` per call, as a device would.
struct Recording {
    sizes: Arc<Mutex<Vec<usize>>>,
    delay: Duration,
    dropped: Arc<AtomicBool>,
}

impl Evaluator<Bandit> for Recording {
    fn evaluate(&self, batch: &[EvalRequest<Bandit>]) -> Vec<Evaluation> {
        self.sizes.lock().unwrap().push(batch.len());
        std::thread::sleep(self.delay);
        batch.iter().map(|r| Evaluation::uniform(r.moves.len(), r.state.values[0])).collect()
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        self.dropped.store(true, Ordering::SeqCst);
    }
}

fn request(tag: f32) -> EvalRequest<Bandit> {
    let state = Bandit::new(vec![tag, 0.0]);
    let moves = state.legal_moves();
    EvalRequest { state, moves }
}

fn recording(delay_ms: u64) -> (Recording, Arc<Mutex<Vec<usize>>>, Arc<AtomicBool>) {
    let sizes = Arc::new(Mutex::new(Vec::new()));
    let dropped = Arc::new(AtomicBool::new(false));
    (Recording { sizes: sizes.clone(), delay: Duration::from_millis(delay_ms), dropped: dropped.clone() }, sizes, dropped)
}

/// `threads` callers, each making `calls` calls of `per_call` requests tagged with
/// (thread, call, index); every answer is checked against its request.
fn hammer(queue: &BatchingEvaluator<Bandit>, threads: usize, calls: usize, per_call: usize) {
    std::thread::scope(|scope| {
        for t in 0..threads {
            scope.spawn(move || {
                for c in 0..calls {
                    let tags: Vec<f32> = (0..per_call).map(|i| (t * 1_000_000 + c * 1000 + i) as f32 / 1e7).collect();
                    let batch: Vec<_> = tags.iter().map(|&x| request(x)).collect();
                    let answers = queue.evaluate(&batch);
                    assert_eq!(answers.len(), per_call);
                    for (a, x) in answers.iter().zip(&tags) {
                        assert_eq!(a.value, *x, "thread {t} call {c}: an answer of another request");
                        assert_eq!(a.priors.len(), 2);
                    }
                }
            });
        }
    });
}

#[test]
fn calls_from_many_threads_meet_in_larger_batches_and_get_their_own_answers() {
    let (inner, sizes, _) = recording(2);
    let queue = BatchingEvaluator::new(inner, BatchingConfig::default());
    hammer(&queue, 8, 20, 4);
    let sizes = sizes.lock().unwrap().clone();
    let positions: usize = sizes.iter().sum();
    assert_eq!(positions, 8 * 20 * 4);
    let stats = queue.stats();
    assert_eq!((stats.batches as usize, stats.positions as usize), (sizes.len(), positions));
    // While one batch sleeps 2 ms the other seven threads queue their calls: batches
    // hold several calls (one call alone is 4 positions).
    assert!(stats.mean_batch() >= 12.0, "mean batch {} of calls of 4: the queue does not merge calls ({sizes:?})", stats.mean_batch());
    assert!(stats.target > 4.0, "the target adapted to what arrives: {}", stats.target);
    assert!(stats.busy_share() > 0.0 && stats.busy_share() <= 1.0);
}

#[test]
fn no_batch_is_larger_than_max_batch_unless_one_call_is() {
    let (inner, sizes, _) = recording(1);
    let queue = BatchingEvaluator::new(inner, BatchingConfig { max_batch: 10, ..BatchingConfig::default() });
    hammer(&queue, 6, 10, 3);
    assert!(sizes.lock().unwrap().iter().all(|&n| n <= 10), "{:?}", sizes.lock().unwrap());
    // A call larger than max_batch goes alone, whole.
    let big: Vec<_> = (0..25).map(|i| request(i as f32)).collect();
    assert_eq!(queue.evaluate(&big).len(), 25);
    assert_eq!(*sizes.lock().unwrap().last().unwrap(), 25);
}

/// With one caller the target stays at 1: no call waits for company that never comes.
/// Counted, not timed: every batch must leave because its target was reached, none at
/// the deadline. (The earlier bound, 20 calls within 5 × max_wait, could not catch a
/// target stuck above 1: with an evaluator that takes no time the deadline is
/// `min_wait`, so twenty deadline waits cost 20 ms, well inside 100 ms.)
#[test]
fn a_lone_caller_is_not_kept_waiting_past_the_deadline() {
    let (inner, _, _) = recording(0);
    let queue =
        BatchingEvaluator::new(inner, BatchingConfig { max_batch: 1024, min_wait: Duration::from_millis(1), max_wait: Duration::from_millis(20), servers: 1 });
    for i in 0..20 {
        assert_eq!(queue.evaluate(&[request(i as f32)])[0].value, i as f32);
    }
    let stats = queue.stats();
    assert_eq!(stats.batches, 20);
    assert_eq!(stats.deadline_batches, 0, "a lone caller's calls waited for the deadline (target {})", stats.target);
    assert_eq!(stats.target, 1.0);
}

#[test]
fn dropping_the_last_handle_stops_the_server() {
    let (inner, _, dropped) = recording(0);
    let queue = BatchingEvaluator::new(inner, BatchingConfig::default());
    let other = queue.clone();
    drop(queue);
    assert_eq!(other.evaluate(&[request(0.5)])[0].value, 0.5, "a clone keeps the queue alive");
    assert!(!dropped.load(Ordering::SeqCst));
    drop(other);
    assert!(dropped.load(Ordering::SeqCst), "the server thread ended and dropped its evaluator");
}

/// Answers as `Recording` does, but panics (a lost device) on batch `fail_at`, after
/// `delay` so that other calls queue up behind it meanwhile.
struct Failing {
    batches: Mutex<usize>,
    fail_at: usize,
    delay: Duration,
}

impl Evaluator<Bandit> for Failing {
    fn evaluate(&self, batch: &[EvalRequest<Bandit>]) -> Vec<Evaluation> {
        let n = {
            let mut b = self.batches.lock().unwrap();
            *b += 1;
            *b
        };
        std::thread::sleep(self.delay);
        assert!(n != self.fail_at, "device lost");
        batch.iter().map(|r| Evaluation::uniform(r.moves.len(), r.state.values[0])).collect()
    }
}

fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default()
}

/// An evaluator that panics fails every caller, not only those in its batch: the calls
/// queued behind it and every later call panic with its message instead of waiting
/// forever. The callers run on their own threads and the test waits for each
/// with a generous bound, so a deadlock fails the test rather than stalling it.
#[test]
fn a_panicking_evaluator_fails_every_caller_instead_of_deadlocking() {
    let queue = BatchingEvaluator::new(
        Failing { batches: Mutex::new(0), fail_at: 3, delay: Duration::from_millis(5) },
        // Two calls a batch: most callers are outside the batch that fails.
        BatchingConfig { max_batch: 4, ..BatchingConfig::default() },
    );
    let threads = 16;
    let (tx, rx) = std::sync::mpsc::channel();
    for t in 0..threads {
        let (queue, tx) = (queue.clone(), tx.clone());
        std::thread::spawn(move || {
            for c in 0..1000 {
                let x = (t * 1000 + c) as f32 / 1e6;
                match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| queue.evaluate(&[request(x), request(x)]))) {
                    Ok(a) => assert_eq!(a[1].value, x),
                    Err(p) => return tx.send((t, Some(panic_text(&*p)))).unwrap(),
                }
            }
            tx.send((t, None)).unwrap();
        });
    }
    let ended: Vec<_> =
        (0..threads).map(|_| rx.recv_timeout(Duration::from_secs(120)).expect("a caller is still waiting two minutes after the evaluator panicked")).collect();
    for (t, failure) in ended {
        let text = failure.unwrap_or_else(|| panic!("thread {t} made 1000 calls after batch 3 panicked"));
        assert!(text.contains("device lost") && text.contains("batching evaluator"), "thread {t}: {text}");
    }
    let later = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| queue.evaluate(&[request(0.5)]))).unwrap_err();
    assert!(panic_text(&*later).contains("device lost"), "{}", panic_text(&*later));
}

/// A device that notes how many batches it holds at once; each batch waits (at most
/// `hold`) until `want` are in, as a device's stream holds queued work.
struct Overlapping {
    inside: Mutex<usize>,
    most: Arc<Mutex<usize>>,
    arrived: std::sync::Condvar,
    want: usize,
    hold: Duration,
}

impl Evaluator<Bandit> for Overlapping {
    fn evaluate(&self, batch: &[EvalRequest<Bandit>]) -> Vec<Evaluation> {
        let mut n = self.inside.lock().unwrap();
        *n += 1;
        {
            let mut m = self.most.lock().unwrap();
            *m = (*m).max(*n);
        }
        self.arrived.notify_all();
        let (mut n, _) = self.arrived.wait_timeout_while(n, self.hold, |n| *n < self.want).unwrap();
        *n -= 1;
        batch.iter().map(|r| Evaluation::uniform(r.moves.len(), r.state.values[0])).collect()
    }
}

/// With two servers two batches are in the evaluator at once (the next is gathered and
/// sent while one runs), every caller still gets its own answers, and a panic still fails
/// every caller; with one server there is never more than one.
#[test]
fn two_servers_keep_two_batches_in_flight() {
    for servers in [1, 2] {
        let most = Arc::new(Mutex::new(0));
        let device = Overlapping { inside: Mutex::new(0), most: most.clone(), arrived: std::sync::Condvar::new(), want: 2, hold: Duration::from_millis(200) };
        let queue = BatchingEvaluator::new(device, BatchingConfig { max_batch: 2, servers, ..BatchingConfig::default() });
        hammer(&queue, 4, 3, 2);
        assert_eq!(*most.lock().unwrap(), servers, "batches in the evaluator at once with {servers} server(s)");
    }
    let queue = BatchingEvaluator::new(
        Failing { batches: Mutex::new(0), fail_at: 2, delay: Duration::from_millis(1) },
        BatchingConfig { servers: 2, ..BatchingConfig::default() },
    );
    let failed = (0..6).filter(|&i| std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| queue.evaluate(&[request(i as f32)]))).is_err()).count();
    assert!(failed >= 4, "calls after the failing batch fail ({failed} of 6)");
}
