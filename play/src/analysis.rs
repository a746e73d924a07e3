//! What the page shows about a position or a game besides the board: the network's
//! win/draw/loss and policy, a live search (PUCT, as Lizzie and KaTrain show KataGo's:
//! top moves by visits with their value and line, stoppable), the alpha-beta's score, and
//! for a whole game both evaluations per ply with the moves that lose the most marked.
//!
//! Every number comes from the library (`neteval`, `search`, `players`); the page only
//! draws it. Values are for the side to move unless a name says Black's.

use players::limits::ClockView;
use players::player::{Answer, Reply};
use players::{Limit, PlayerFactory, PlayerSpec, Score};
use rules::{Color, Game, Move, MoveKind, Position};
use search::{EvalRequest, Evaluator, Search, SearchConfig, SearchGame};
use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The network: the variant's model, loaded once per server.
pub type Network = Arc<neteval::NetEvaluator>;

/// A move as the page lists and marks it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MoveMark {
    pub usi: String,
    /// `P 7g7f`: after the mover's piece.
    pub label: String,
    /// The squares to mark on the board (from and to; one for drops and pocket moves).
    pub marks: Vec<u16>,
    /// Where the move starts and ends as the page names places (see [`place`]): what an
    /// arrow joins, a hand piece or the pocket included.
    pub from: String,
    pub to: String,
}

fn mark(pos: &Position, m: Move) -> MoveMark {
    let (from, to) = place(pos, m);
    MoveMark { usi: pos.move_to_usi(m), label: viewer::game::move_label(pos, m), marks: viewer::game::marked_squares(m), from, to }
}

/// `b` or `w`, as the page names sides.
pub(crate) fn side_letter(c: Color) -> &'static str {
    if c == Color::Black {
        "b"
    } else {
        "w"
    }
}

/// Where a move starts (`sq:<index>`, `hand:<b|w>:<token>`, `pocket:<b|w>`) and where it
/// goes (`sq:<index>`, `pocket:<b|w>`): the `data-at` names of the places the board draws.
pub fn place(pos: &Position, m: Move) -> (String, String) {
    let v = pos.variant();
    let side = side_letter(pos.side_to_move());
    match m.kind() {
        MoveKind::Board { from, to, .. } => (format!("sq:{}", from.index()), format!("sq:{}", to.index())),
        MoveKind::Drop { kind, to } => (format!("hand:{side}:{}", v.kind(kind).token), format!("sq:{}", to.index())),
        MoveKind::PocketIn { from } => (format!("sq:{}", from.index()), format!("pocket:{side}")),
        MoveKind::PocketDrop { to, .. } => (format!("pocket:{side}"), format!("sq:{}", to.index())),
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct PolicyMove {
    #[serde(flatten)]
    pub mv: MoveMark,
    pub prior: f32,
}

/// The network's view of one position.
#[derive(Clone, Debug, Serialize)]
pub struct NetView {
    /// P(win), P(draw), P(loss) for the side to move.
    pub wdl: [f32; 3],
    /// win − loss, for the side to move.
    pub value: f32,
    /// The most likely moves by the policy head, best first.
    pub policy: Vec<PolicyMove>,
}

/// The network's value and policy for `game`'s position (`top` moves); `None` when the
/// game is over.
pub fn network_view(net: &neteval::NetEvaluator, game: &Game, top: usize) -> Option<NetView> {
    if game.is_over() {
        return None;
    }
    let moves = SearchGame::legal_moves(game);
    let eval = net.evaluate(&[EvalRequest { state: game.clone(), moves: moves.clone() }]).pop()?;
    let wdl = net.wdl(game);
    let mut order: Vec<usize> = (0..moves.len()).collect();
    order.sort_by(|&a, &b| eval.priors[b].total_cmp(&eval.priors[a]));
    let pos = game.position();
    let policy = order.into_iter().take(top).map(|i| PolicyMove { mv: mark(pos, moves[i]), prior: eval.priors[i] }).collect();
    Some(NetView { wdl, value: wdl[0] - wdl[2], policy })
}

/// One root move of a search.
#[derive(Clone, Debug, Serialize)]
pub struct SearchLine {
    #[serde(flatten)]
    pub mv: MoveMark,
    pub visits: u32,
    /// Q for the side to move at the root.
    pub q: Option<f32>,
    pub prior: f32,
    /// The move and then the most visited reply at each node, as far as the tree goes.
    pub pv: Vec<String>,
}

/// A search as it stands.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SearchView {
    pub running: bool,
    pub simulations: u32,
    pub budget: u32,
    /// The root value for the side to move.
    pub value: f32,
    pub lines: Vec<SearchLine>,
    pub ms: u64,
}

/// The analysis search's settings: PUCT without noise and the one-ply mate check, at a
/// budget of `simulations`.
pub fn analysis_config(simulations: u32) -> SearchConfig {
    let mut c = SearchConfig::puct(simulations).for_evaluation();
    c.mate_in_one = true;
    c
}

/// The seed of the analysis search (no noise: it only breaks ties).
pub const ANALYSIS_SEED: u64 = 0;

/// What a search says of its root: the `top` most visited moves, each with its line.
pub fn search_view(search: &Search<Game>, top: usize) -> SearchView {
    let r = search.result();
    let pos = search.root().position();
    let mut order: Vec<usize> = (0..r.policy.len()).collect();
    order.sort_by(|&a, &b| r.visits[b].cmp(&r.visits[a]).then(r.priors[b].total_cmp(&r.priors[a])));
    let lines = order
        .into_iter()
        .take(top)
        .map(|i| {
            let m = r.policy[i].0;
            let mut path = vec![m];
            while path.len() < 12 {
                let Some(children) = search.node_visits(&path) else { break };
                let Some(&(best, n)) = children.iter().max_by_key(|(_, n)| *n) else { break };
                if n == 0 {
                    break;
                }
                path.push(best);
            }
            SearchLine { mv: mark(pos, m), visits: r.visits[i], q: r.q_values[i], prior: r.priors[i], pv: crate::session::pv_text(pos, &path) }
        })
        .collect();
    SearchView { running: !search.is_done(), simulations: r.simulations, budget: search.config().simulations, value: r.value, lines, ms: 0 }
}

/// A search running on its own thread; the page reads its latest view.
pub struct LiveSearch {
    stop: Arc<AtomicBool>,
    view: Arc<Mutex<SearchView>>,
}

impl LiveSearch {
    pub fn start(net: Network, game: Game, budget: u32) -> LiveSearch {
        let stop = Arc::new(AtomicBool::new(false));
        let view = Arc::new(Mutex::new(SearchView { running: true, budget, ..SearchView::default() }));
        let (s, v) = (stop.clone(), view.clone());
        std::thread::Builder::new()
            .name("play-analysis".into())
            .spawn(move || {
                let started = Instant::now();
                let mut search = Search::with_seed(game, analysis_config(budget), ANALYSIS_SEED);
                let mut shown = Instant::now();
                let publish = |search: &Search<Game>, running: bool| {
                    let mut view = search_view(search, 8);
                    view.running = running;
                    view.ms = started.elapsed().as_millis() as u64;
                    *v.lock().unwrap_or_else(|e| e.into_inner()) = view;
                };
                while let Some(req) = search.next_leaf() {
                    let eval = net.evaluate(std::slice::from_ref(&req)).pop().expect("one evaluation per request");
                    search.apply(eval);
                    // Stopped: the page asked, or the session dropped its handle (`Drop`).
                    if s.load(Ordering::Relaxed) {
                        break;
                    }
                    if shown.elapsed() > Duration::from_millis(150) {
                        publish(&search, true);
                        shown = Instant::now();
                    }
                }
                publish(&search, false);
            })
            .expect("spawn the analysis thread");
        LiveSearch { stop, view }
    }

    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    pub fn view(&self) -> SearchView {
        self.view.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl Drop for LiveSearch {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The alpha-beta's answer for one position.
#[derive(Clone, Debug, Serialize)]
pub struct AlphaBetaView {
    /// For the side to move: `+123`, `mate +5`.
    pub score: String,
    /// Centipawns for the side to move (a mate at ±[`viewer::game::MATE_CP`]).
    pub cp: f64,
    pub depth: u32,
    pub pv: Vec<String>,
}

fn score_cp(s: Score) -> f64 {
    match s {
        Score::Cp(cp) => cp as f64,
        Score::Mate(n) if n >= 0 => viewer::game::MATE_CP,
        Score::Mate(_) => -viewer::game::MATE_CP,
    }
}

/// The alpha-beta baseline at `depth` on `game`'s position; `None` when the game is over.
pub fn alphabeta_view(game: &Game, depth: u32) -> Result<Option<AlphaBetaView>, String> {
    if game.is_over() {
        return Ok(None);
    }
    let variant = game.position().variant();
    let spec = PlayerSpec::parse(&format!("alphabeta,depth={depth}")).map_err(|e| e.to_string())?;
    let factory = PlayerFactory::new(spec, variant, None, 1, Duration::from_secs(60)).map_err(|e| e.to_string())?;
    let mut player = factory.instance(0);
    player.go(0, game, &ClockView { limit: Limit::Depth(depth), remaining_ms: [0, 0] });
    let mut answers: Vec<Answer> = Vec::new();
    loop {
        player.poll(Duration::from_millis(1), &mut answers);
        if let Some(a) = answers.pop() {
            return Ok(match a.reply {
                Reply::Move(_, t) => Some(AlphaBetaView {
                    score: crate::session::score_text(t.score),
                    cp: score_cp(t.score),
                    depth: t.depth,
                    pv: crate::session::pv_text(game.position(), &t.pv),
                }),
                _ => None,
            });
        }
    }
}

/// Both evaluations of every position of a game, from Black's side, and the moves that
/// lose the most by the network.
#[derive(Clone, Debug, Serialize)]
pub struct Review {
    /// The network's value (win − loss) after each ply, ply 0 the start; `None` where
    /// the game is over (its result is the value).
    pub network: Vec<Option<f32>>,
    /// The alpha-beta's score in centipawns after each ply.
    pub alphabeta: Vec<Option<f64>>,
    /// What each ply's move lost of the network's value for its mover (negative: it
    /// gained), ply 0 and moves whose values are unknown `None`.
    pub losses: Vec<Option<f32>>,
    /// Plies whose move lost the most network value for its mover (at least
    /// [`MISTAKE`]), worst first, with what it lost.
    pub mistakes: Vec<(usize, f32)>,
}

/// A move that loses this much of the network's value (on −1 … +1) is marked.
pub const MISTAKE: f32 = 0.2;

/// Reviews `game` from its start: the network on every position (in batches), the
/// alpha-beta at `depth` on each.
pub fn review(net: &neteval::NetEvaluator, game: &Game, depth: u32) -> Result<Review, String> {
    let mut positions = vec![Game::new(game.start().clone(), Some(game.max_plies()))];
    for &m in game.moves() {
        let mut next = positions.last().unwrap().clone();
        next.play(m).map_err(|e| e.to_string())?;
        positions.push(next);
    }
    let black = |g: &Game, v: f32| if g.position().side_to_move() == Color::Black { v } else { -v };
    let live: Vec<Game> = positions.iter().filter(|g| !g.is_over()).cloned().collect();
    let mut wdl = Vec::new();
    for chunk in live.chunks(64) {
        wdl.extend(net.wdl_batch(chunk));
    }
    let mut wdl = wdl.into_iter();
    let network: Vec<Option<f32>> = positions.iter().map(|g| if g.is_over() { None } else { wdl.next().map(|w| black(g, w[0] - w[2])) }).collect();
    let mut alphabeta = Vec::new();
    for g in &positions {
        alphabeta.push(alphabeta_view(g, depth)?.map(|a| black(g, 1.0) as f64 * a.cp));
    }
    let mut losses = vec![None];
    let mut mistakes = Vec::new();
    for ply in 1..positions.len() {
        let mover = positions[ply - 1].position().side_to_move();
        let sign = if mover == Color::Black { 1.0 } else { -1.0 };
        let after = network[ply].or_else(|| positions[ply].result().map(|r| r.outcome.value_for(Color::Black)));
        let lost = match (network[ply - 1], after) {
            (Some(before), Some(after)) => Some(sign * (before - after)),
            _ => None,
        };
        if let Some(lost) = lost.filter(|&l| l >= MISTAKE) {
            mistakes.push((ply, lost));
        }
        losses.push(lost);
    }
    mistakes.sort_by(|a, b| b.1.total_cmp(&a.1));
    mistakes.truncate(5);
    Ok(Review { network, alphabeta, losses, mistakes })
}
