//! The requests the page makes, each checked before anything is done: the token, the
//! JSON, the variant, the position, the move, the player spec (a USI engine only where
//! the command line allowed it). Every refusal is a 4xx answer `{"error": "…"}` that
//! says what was wrong; the page shows it.

use crate::analysis::{self, LiveSearch, Network};
use crate::analysis::{place, side_letter};
use crate::session::{attach_opponent, HumanClock, Session, ThoughtView};
use crate::PlayConfig;
use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::extract::{DefaultBodyLimit, Path, Query, Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use gamerecords::{Ending, GameEnd};
use players::spec::Kind;
use players::{Limit, PlayerFactory, PlayerSpec};
use rules::{Color, Game, Outcome, Position, TerminationReason, Variant};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};
use viewer::game::PlyView;
use viewer::page::VariantView;

const PAGE: &str = include_str!("page.html");
/// The largest request body, SFEN and move list the server reads.
const MAX_BODY: usize = 64 * 1024;
const MAX_SFEN: usize = 512;
const MAX_MOVES: usize = 2048;
/// Games open at once (each may hold an engine).
const MAX_SESSIONS: usize = 32;
/// Opponent threads alive at once: the open games' and those of closed games still
/// leaving their search (within a second of the close).
const MAX_OPPONENT_THREADS: usize = MAX_SESSIONS + 16;
/// The analysis search's largest budget, and a search opponent's.
const MAX_SIMULATIONS: u32 = 200_000;
/// What an opponent named by the page may ask for (each a few minutes of one core or
/// ~100 MB at most): the alpha-beta's depth, nodes and table entries; an allowed USI
/// engine's nodes and depth; any player's time per move, main time and byoyomi or
/// increment, in ms.
pub(crate) const MAX_ALPHABETA_DEPTH: u32 = 6;
pub(crate) const MAX_ALPHABETA_NODES: u64 = 20_000_000;
pub(crate) const MAX_TT_ENTRIES: usize = 1 << 22;
pub(crate) const MAX_ENGINE_NODES: u64 = 1_000_000_000;
pub(crate) const MAX_ENGINE_DEPTH: u32 = 64;
pub(crate) const MAX_MOVETIME_MS: u64 = 600_000;
pub(crate) const MAX_MAIN_TIME_MS: u64 = 3 * 3_600_000;

pub(crate) struct AppState {
    token: String,
    out: PathBuf,
    allowed_engines: players::EngineAllowList,
    /// Model directories the command line named (`--model`), as given and resolved.
    models: Vec<(PathBuf, Option<PathBuf>)>,
    idle_timeout: Duration,
    sessions: Mutex<HashMap<u64, Arc<Mutex<Session>>>>,
    next_id: AtomicU64,
    /// Each variant's shipped network, loaded on first use (`None`: it has none); a cell
    /// of its own per variant, so a load holds up only those waiting for that network.
    networks: Mutex<HashMap<String, Arc<OnceLock<Option<Network>>>>>,
}

type Shared = Arc<AppState>;

impl AppState {
    pub fn new(config: &PlayConfig, token: String) -> Shared {
        Arc::new(AppState {
            token,
            out: config.out.clone(),
            allowed_engines: config.allowed_engines.clone(),
            models: config.models.iter().map(|m| (m.clone(), m.canonicalize().ok())).collect(),
            idle_timeout: config.idle_timeout,
            sessions: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
            networks: Mutex::new(HashMap::new()),
        })
    }

    fn session(&self, id: u64) -> Result<Arc<Mutex<Session>>, ApiError> {
        let sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        sessions
            .get(&id)
            .cloned()
            .ok_or_else(|| ApiError::new(StatusCode::NOT_FOUND, format!("no game {id} (closed, or the server restarted): start a new one")))
    }

    /// The variant's network, loaded the first time (reads files: call it off the
    /// runtime's threads, as [`network_of`] does).
    fn network(&self, variant: &'static Variant) -> Result<Network, ApiError> {
        let cell = self.networks.lock().unwrap_or_else(|e| e.into_inner()).entry(variant.name.clone()).or_default().clone();
        let entry = cell.get_or_init(|| {
            let spec = PlayerSpec::parse("checkpoint").ok()?.with_shipped_model(variant).ok()?;
            let Kind::Checkpoint(dir) = spec.kind else { return None };
            match neteval::load(&dir, variant) {
                Ok(n) => Some(Arc::new(n)),
                Err(e) => {
                    tracing::warn!(variant = %variant.name, "no network for analysis: {e}");
                    None
                }
            }
        });
        entry.clone().ok_or_else(|| ApiError::new(StatusCode::CONFLICT, format!("{} has no shipped model to analyse with", variant.title)))
    }
}

#[derive(Debug)]
pub(crate) struct ApiError {
    status: StatusCode,
    message: String,
}

impl ApiError {
    fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError { status, message: message.into() }
    }
    fn bad(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(serde_json::json!({ "error": self.message }))).into_response()
    }
}

impl From<JsonRejection> for ApiError {
    fn from(r: JsonRejection) -> ApiError {
        ApiError::new(
            if r.status() == StatusCode::PAYLOAD_TOO_LARGE { r.status() } else { StatusCode::BAD_REQUEST },
            format!("malformed request: {}", r.body_text()),
        )
    }
}

impl From<PathRejection> for ApiError {
    fn from(r: PathRejection) -> ApiError {
        ApiError::bad(format!("malformed address: {}", r.body_text()))
    }
}

impl From<QueryRejection> for ApiError {
    fn from(r: QueryRejection) -> ApiError {
        ApiError::bad(format!("malformed query: {}", r.body_text()))
    }
}

type ApiResult<T> = Result<Json<T>, ApiError>;

pub(crate) fn router(state: Shared) -> Router {
    guarded(routes(), state)
}

/// What every route answers through: a panic in a handler becomes a 500 whose message
/// says so (the server and the other games go on), the token check, the body limit.
fn guarded(routes: Router<Shared>, state: Shared) -> Router {
    routes
        .fallback(|| async { ApiError::new(StatusCode::NOT_FOUND, "no such page") })
        .layer(axum::middleware::from_fn_with_state(state.clone(), check_token))
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .layer(tower_http::catch_panic::CatchPanicLayer::custom(panic_answer))
        .with_state(state)
}

/// The 500 a panicking handler answers with.
fn panic_answer(panic: Box<dyn std::any::Any + Send + 'static>) -> Response {
    let what = crate::panic_text(panic.as_ref());
    tracing::error!("a request handler panicked: {what}");
    ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, format!("the server failed answering this request ({what}); the other games go on")).into_response()
}

fn routes() -> Router<Shared> {
    Router::new()
        .route("/", get(page))
        .route("/api/setup", get(setup))
        .route("/api/games", post(new_game))
        .route("/api/games/{id}", get(game_state))
        .route("/api/games/{id}/move", post(play_move))
        .route("/api/games/{id}/takeback", post(take_back))
        .route("/api/games/{id}/resign", post(resign))
        .route("/api/games/{id}/stop", post(stop))
        .route("/api/games/{id}/close", post(close))
        .route("/api/games/{id}/network", get(network))
        .route("/api/games/{id}/alphabeta", get(alphabeta))
        .route("/api/games/{id}/search", post(start_search))
        .route("/api/games/{id}/search/stop", post(stop_search))
        .route("/api/games/{id}/review", post(review))
        .route("/api/games/{id}/line", post(line))
        .route("/api/games/{id}/kif", get(kif))
        .route("/api/position", post(check_position))
}

/// Every request names the token: `?token=…` (the page's URL) or the `x-copper-token`
/// header (the page's requests).
async fn check_token(State(state): State<Shared>, request: Request, next: Next) -> Response {
    let from_header = request.headers().get("x-copper-token").and_then(|v| v.to_str().ok()).map(str::to_string);
    let from_query = request.uri().query().and_then(|q| q.split('&').find_map(|kv| kv.strip_prefix("token=")).map(str::to_string));
    let given = from_header.or(from_query).unwrap_or_default();
    // Length first, then every byte: the time taken says nothing about the token.
    let same = given.len() == state.token.len() && given.bytes().zip(state.token.bytes()).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0;
    if !same {
        return ApiError::new(StatusCode::FORBIDDEN, "missing or wrong token: open the URL `copper play` printed").into_response();
    }
    next.run(request).await
}

async fn page() -> Response {
    let html = PAGE.replacen("{{BOARD_JS}}", viewer::page::BOARD_JS, 1);
    ([(header::CACHE_CONTROL, "no-store")], Html(html)).into_response()
}

#[derive(Serialize)]
struct Preset {
    label: String,
    spec: String,
}

#[derive(Serialize)]
struct VariantSetup {
    name: String,
    title: String,
    starts: Vec<String>,
    /// The variant's own start, for the board editor.
    start_sfen: String,
    view: VariantView,
    has_model: bool,
    opponents: Vec<Preset>,
}

#[derive(Serialize)]
struct Setup {
    variants: Vec<VariantSetup>,
    movetime_ms: u64,
    engines: Vec<String>,
}

/// The variants the page offers.
fn variants() -> Vec<&'static Variant> {
    ["pocket-copper", "shogi", "hand-shogi", "minishogi"].iter().filter_map(|n| Variant::builtin(n).ok()).collect()
}

/// The named opponents of `variant`: its shipped model at a few strengths (the mate
/// checks and the quiescence mix its model card plays with), the alpha-beta at a few
/// depths, random moves.
fn presets(variant: &Variant, has_model: bool, models: &[(PathBuf, Option<PathBuf>)], engines: &players::EngineAllowList) -> Vec<Preset> {
    let p = |label: &str, spec: String| Preset { label: label.into(), spec };
    let extras = if variant.name == "hand-shogi" { "mate=on,qmix=0.5,qscale=1000" } else { "mate=on,mate3=all,qmix=0.5,qscale=1000" };
    let mut out = Vec::new();
    if has_model {
        out.push(p("model, at the time per move", format!("checkpoint,{extras},name=model")));
        out.push(p("model, 100 simulations", format!("checkpoint,sims=100,{extras},name=model-100")));
        out.push(p("model, 16 simulations", "checkpoint,sims=16,name=model-16".into()));
        out.push(p("model, policy only (1 simulation)", "checkpoint,sims=1,name=model-policy".into()));
    }
    // The models the command line named, where trained for this variant (first: the
    // reason to name one is to play it).
    let own: Vec<Preset> = models
        .iter()
        .filter(|(dir, _)| model::read_manifest(dir).ok().and_then(|m| m.game).is_some_and(|t| t.variant == variant.name))
        .map(|(dir, _)| {
            let name = dir.file_name().map(|f| f.to_string_lossy().to_string()).unwrap_or_else(|| "model".into());
            let quoted = players::spec::quote(&dir.display().to_string());
            p(&format!("{}, at the time per move", dir.display()), format!("checkpoint:{quoted},{extras},name={}", players::spec::quote(&name)))
        })
        .collect();
    out.splice(0..0, own);
    out.push(p("alpha-beta, at the time per move", "alphabeta,name=alphabeta".into()));
    for d in 1..=4 {
        out.push(p(&format!("alpha-beta, depth {d}"), format!("alphabeta,depth={d},name=alphabeta-d{d}")));
    }
    out.push(p("random moves", "random".into()));
    for e in engines.engines() {
        let name = e.command.file_name().map(|f| f.to_string_lossy().to_string()).unwrap_or_default();
        out.push(p(&format!("USI engine {}", e.command.display()), format!("{},name={}", e.to_spec(), players::spec::quote(&name))));
    }
    out
}

async fn setup(State(state): State<Shared>) -> Json<Setup> {
    let variants = variants()
        .into_iter()
        .map(|v| {
            let has_model = PlayerSpec::parse("checkpoint").ok().and_then(|s| s.with_shipped_model(v).ok()).is_some();
            VariantSetup {
                name: v.name.clone(),
                title: v.title.clone(),
                starts: v.start_family().into_iter().map(|(n, _)| n).collect(),
                start_sfen: v.start_sfen.clone(),
                view: VariantView::of(v),
                has_model,
                opponents: presets(v, has_model, &state.models, &state.allowed_engines),
            }
        })
        .collect();
    Json(Setup { variants, movetime_ms: 500, engines: state.allowed_engines.engines().iter().map(|e| e.command.display().to_string()).collect() })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewGame {
    variant: String,
    /// A start of the variant's start family (default: its own).
    #[serde(default)]
    start: Option<String>,
    /// A position to start from instead (analysis): an SFEN, or a game as a USI line
    /// (`sfen … moves …`, `startpos moves …`); and moves played from it.
    #[serde(default)]
    sfen: Option<String>,
    #[serde(default)]
    moves: Vec<String>,
    /// `black`, `white`, or `both` (a study board: no opponent).
    side: String,
    #[serde(default)]
    opponent: Option<String>,
    #[serde(default)]
    movetime_ms: Option<u64>,
    /// The person's clock against an opponent: main time, then byoyomi (ms).
    #[serde(default)]
    clock_main_ms: Option<u64>,
    #[serde(default)]
    clock_byoyomi_ms: Option<u64>,
}

/// One legal move as the page clicks it: where it starts (`sq:<index>`,
/// `hand:<b|w>:<token>`, `pocket:<b|w>`) and where it goes (`sq:<index>`, `pocket:<b|w>`).
#[derive(Serialize)]
struct LegalMove {
    u: String,
    from: String,
    to: String,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    promo: bool,
}

/// The person's clock as the page shows it.
#[derive(Serialize)]
struct ClockState {
    #[serde(flatten)]
    clock: HumanClock,
    running: bool,
    /// What is left of this turn (main time and byoyomi).
    left_ms: u64,
}

#[derive(Serialize)]
struct GameState {
    id: u64,
    variant: String,
    start: String,
    /// The person's side: `b`, `w` or `both`.
    human: String,
    black: String,
    white: String,
    plies: Vec<PlyView>,
    /// The main line's moves, USI.
    usi: Vec<String>,
    legal: Vec<LegalMove>,
    to_move: String,
    over: bool,
    /// `1-0`, `0-1`, `1/2-1/2`, `*`.
    result: String,
    /// How it ended (`checkmate`, `resignation`, …), and in words.
    reason: String,
    reason_text: String,
    thinking: bool,
    think_ms: u64,
    last_thought: Option<ThoughtView>,
    message: Option<String>,
    record: String,
    /// Why the game could not be saved (the page shows it); absent when it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    save_error: Option<String>,
    search: Option<analysis::SearchView>,
    /// The position the search is of: a ply, and the variation's moves from it.
    search_ply: usize,
    search_line: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    clock: Option<ClockState>,
}

/// The legal moves of `game`'s position as the page clicks them (none once it is over).
fn legal_of(game: &Game) -> Vec<LegalMove> {
    let now = game.position();
    if game.is_over() {
        return Vec::new();
    }
    game.legal_moves()
        .iter()
        .map(|&m| {
            let (from, to) = place(now, m);
            LegalMove { u: now.move_to_usi(m), from, to, promo: m.is_promotion() }
        })
        .collect()
}

fn result_text(end: Option<GameEnd>) -> &'static str {
    match end.map(|e| e.outcome) {
        Some(Outcome::Win(Color::Black)) => "1-0",
        Some(Outcome::Win(Color::White)) => "0-1",
        Some(Outcome::Draw) => "1/2-1/2",
        None => "*",
    }
}

/// What an ending means, for the person.
fn reason_text(end: &GameEnd) -> String {
    match end.ending {
        Ending::Rules(r) => match r {
            TerminationReason::Checkmate => "checkmate".into(),
            TerminationReason::NoLegalMoves => "no legal move".into(),
            TerminationReason::DropMate => "mate by a pawn drop, which loses for the dropper".into(),
            TerminationReason::Flag => "a king reached the square where the opposing king started".into(),
            TerminationReason::PerpetualCheck => "perpetual check: the checking side loses".into(),
            TerminationReason::Repetition => "fourfold repetition".into(),
            TerminationReason::Declaration => "the 27-point declaration".into(),
            TerminationReason::NoCapture => "too many moves without a capture".into(),
            TerminationReason::MaxPlies => "the game's length limit".into(),
        },
        Ending::Resignation => "resignation".into(),
        Ending::IllegalMove => "an illegal move".into(),
        Ending::TimeForfeit => "time: the clock ran out".into(),
        Ending::Crash => "the engine failed".into(),
        Ending::AdjudicatedWin | Ending::AdjudicatedDraw => "adjudication".into(),
    }
}

fn state_of(s: &Session) -> GameState {
    let plies = viewer::game::plies_of(&s.game);
    let now = s.game.position();
    let legal = if s.is_over() { Vec::new() } else { legal_of(&s.game) };
    let mut p = s.game.start().clone();
    let usi = s
        .game
        .moves()
        .iter()
        .map(|&m| {
            let text = p.move_to_usi(m);
            p.play_unchecked(m);
            text
        })
        .collect();
    let clock =
        s.clock.map(|clock| ClockState { clock, running: s.clock_running(), left_ms: s.clock_left_ms().unwrap_or(clock.remaining_ms + clock.byoyomi_ms) });
    GameState {
        id: s.id,
        variant: s.variant.name.clone(),
        start: s.start_name.clone(),
        human: s.human.map_or("both", side_letter).to_string(),
        black: s.names[0].clone(),
        white: s.names[1].clone(),
        plies,
        usi,
        legal,
        to_move: side_letter(now.side_to_move()).to_string(),
        over: s.is_over(),
        result: result_text(s.end).into(),
        reason: s.end.map(|e| e.name().to_string()).unwrap_or_default(),
        reason_text: s.end.as_ref().map(reason_text).unwrap_or_default(),
        thinking: s.thinking_since.is_some(),
        think_ms: s.thinking_since.map_or(0, |t| t.elapsed().as_millis() as u64),
        last_thought: s.last_thought.clone(),
        message: s.message.clone(),
        record: s.record_path.display().to_string(),
        save_error: s.save_error.clone(),
        search: s.search.as_ref().map(LiveSearch::view),
        search_ply: s.search_at.0,
        search_line: s.search_at.1.clone(),
        clock,
    }
}

fn lock(s: &Arc<Mutex<Session>>) -> std::sync::MutexGuard<'_, Session> {
    s.lock().unwrap_or_else(|e| e.into_inner())
}

/// Builds the opponent's player (loading a network takes a moment: off the async threads).
async fn build_player(state: &Shared, text: &str, variant: &'static Variant, movetime_ms: u64) -> Result<(PlayerFactory, Limit), ApiError> {
    if text.len() > 1024 {
        return Err(ApiError::bad("player spec: longer than 1024 characters"));
    }
    let spec = PlayerSpec::parse(text).map_err(|e| ApiError::bad(e.to_string()))?;
    check_page_spec(state, &spec)?;
    let limit = spec.limit.unwrap_or(Limit::MoveTime(movetime_ms));
    let timeout = Duration::from_millis(movetime_ms.saturating_mul(4)).max(Duration::from_secs(30));
    let factory = tokio::task::spawn_blocking(move || PlayerFactory::new(spec, variant, Some(limit), 1, timeout))
        .await
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?
        .map_err(|e| ApiError::bad(e.to_string()))?;
    Ok((factory, limit))
}

/// Whether the page may have `spec` as an opponent: it starts no program but those the
/// command line allowed, as it allowed them (403); it reads no model but the shipped
/// ones and those the command line named (403); and it asks for no more time, work or
/// memory than the caps above (400, naming the cap).
fn check_page_spec(state: &AppState, spec: &PlayerSpec) -> Result<(), ApiError> {
    let forbidden = |problem: String| ApiError::new(StatusCode::FORBIDDEN, format!("player '{}': {problem}", spec.text));
    state.allowed_engines.check(spec).map_err(|e| forbidden(format!("{} (the page may start only what `copper play --allow-engine` allows)", e.problem)))?;
    if let Kind::Checkpoint(dir) = &spec.kind {
        let named = dir.as_os_str().is_empty()
            || state.models.iter().any(|(given, resolved)| given == dir || resolved.is_some() && dir.canonicalize().ok() == *resolved);
        if !named {
            return Err(forbidden(format!(
                "the page may play the shipped models and the models the command line named, not {} (copper play --model {} names it)",
                dir.display(),
                dir.display()
            )));
        }
    }
    let over = |what: &str, value: u64, cap: u64| -> Result<(), ApiError> {
        if value > cap {
            return Err(ApiError::bad(format!("player '{}': {what} {value} is over this server's cap of {cap}", spec.text)));
        }
        Ok(())
    };
    let search = matches!(spec.kind, Kind::Checkpoint(_) | Kind::Uniform);
    let usi = matches!(spec.kind, Kind::Usi(_));
    match spec.limit {
        Some(Limit::Nodes(n)) if search => over("simulations", n, MAX_SIMULATIONS as u64)?,
        Some(Limit::Nodes(n)) if usi => over("nodes", n, MAX_ENGINE_NODES)?,
        Some(Limit::Nodes(n)) => over("nodes", n, MAX_ALPHABETA_NODES)?,
        Some(Limit::Depth(d)) if usi => over("depth", d as u64, MAX_ENGINE_DEPTH as u64)?,
        Some(Limit::Depth(d)) => over("depth", d as u64, MAX_ALPHABETA_DEPTH as u64)?,
        Some(Limit::MoveTime(ms)) => over("movetime (ms)", ms, MAX_MOVETIME_MS)?,
        Some(Limit::Byoyomi { main_ms, byoyomi_ms: extra }) | Some(Limit::Fischer { main_ms, increment_ms: extra }) => {
            over("main time (ms)", main_ms, MAX_MAIN_TIME_MS)?;
            over("byoyomi or increment (ms)", extra, MAX_MOVETIME_MS)?;
        }
        None => {}
    }
    over("tt (entries)", spec.tt_entries as u64, MAX_TT_ENTRIES as u64)
}

async fn new_game(State(state): State<Shared>, body: Result<Json<NewGame>, JsonRejection>) -> ApiResult<GameState> {
    let Json(req) = body?;
    let variant = variants().into_iter().find(|v| v.name == req.variant).ok_or_else(|| {
        ApiError::bad(format!("variant '{}': not one of pocket-copper, shogi, hand-shogi, minishogi", req.variant.chars().take(40).collect::<String>()))
    })?;
    let human = match req.side.as_str() {
        "black" => Some(Color::Black),
        "white" => Some(Color::White),
        "both" => None,
        other => return Err(ApiError::bad(format!("side '{}': expected black, white or both", other.chars().take(40).collect::<String>()))),
    };
    let movetime_ms = req.movetime_ms.unwrap_or(500);
    if !(10..=600_000).contains(&movetime_ms) {
        return Err(ApiError::bad(format!("movetime_ms {movetime_ms}: expected 10 to 600000")));
    }
    let clock = match (req.clock_main_ms.unwrap_or(0), req.clock_byoyomi_ms.unwrap_or(0)) {
        (0, 0) => None,
        _ if human.is_none() => return Err(ApiError::bad("a clock is for a game against an opponent, not for a study board")),
        (main_ms, _) if main_ms > MAX_MAIN_TIME_MS => {
            return Err(ApiError::bad(format!("clock main time {main_ms} ms is over this server's cap of {MAX_MAIN_TIME_MS}")))
        }
        (_, byoyomi_ms) if byoyomi_ms > MAX_MOVETIME_MS => {
            return Err(ApiError::bad(format!("clock byoyomi {byoyomi_ms} ms is over this server's cap of {MAX_MOVETIME_MS}")))
        }
        (main_ms, byoyomi_ms) => Some(HumanClock { main_ms, byoyomi_ms, remaining_ms: main_ms }),
    };
    let mut moves = Vec::new();
    let (start, start_name) = match (&req.sfen, &req.start) {
        (Some(text), _) => {
            let text = text.trim();
            let (sfen, line_moves) = if text.starts_with("sfen ") || text.starts_with("startpos") || text.starts_with("position ") {
                // A game as a USI line: `sfen … moves …`, `startpos moves …`.
                if text.len() > MAX_SFEN + MAX_MOVES * 8 {
                    return Err(ApiError::bad(format!("game line: {} characters, too long", text.len())));
                }
                gamerecords::parse_sfen_line(text, variant).map_err(|e| ApiError::bad(format!("game line: {e}")))?
            } else {
                (text.to_string(), Vec::new())
            };
            if sfen.len() > MAX_SFEN {
                return Err(ApiError::bad(format!("SFEN: {} characters, at most {MAX_SFEN}", sfen.len())));
            }
            moves = line_moves;
            (Position::from_sfen(variant, &sfen).map_err(|e| ApiError::bad(format!("SFEN: {e}")))?, "position".to_string())
        }
        (None, start) => {
            let family = variant.start_family();
            let name = start.clone().unwrap_or_else(|| family.iter().find(|(_, s)| *s == variant.start_sfen).map_or("default".into(), |(n, _)| n.clone()));
            let sfen = family.iter().find(|(n, _)| *n == name).map(|(_, s)| s.clone()).ok_or_else(|| {
                ApiError::bad(format!(
                    "start '{}': {} has {}",
                    name.chars().take(40).collect::<String>(),
                    variant.title,
                    family.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(", ")
                ))
            })?;
            (Position::from_sfen(variant, &sfen).map_err(|e| ApiError::bad(format!("start '{name}': {e}")))?, name)
        }
    };
    moves.extend(req.moves.iter().cloned());
    if moves.len() > MAX_MOVES {
        return Err(ApiError::bad(format!("{} moves: at most {MAX_MOVES}", moves.len())));
    }
    let mut game = Game::new(start, None);
    for (i, m) in moves.iter().enumerate() {
        game.play_usi(m).map_err(|e| ApiError::bad(format!("move {}: {e}", i + 1)))?;
    }
    let threads = crate::session::OPPONENT_THREADS.load(Ordering::Relaxed);
    if human.is_some() && threads >= MAX_OPPONENT_THREADS {
        return Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            format!("{threads} opponents are still running (closed games' engines are stopping): try again in a moment"),
        ));
    }
    let opponent = match (human, &req.opponent) {
        (None, _) => None,
        (Some(_), None) => return Err(ApiError::bad("no opponent: give a player spec (or side \"both\" for a study board)")),
        (Some(_), Some(text)) => Some(build_player(&state, text, variant, movetime_ms).await?),
    };
    let id = state.next_id.fetch_add(1, Ordering::Relaxed);
    // The least recently seen game makes room (on the blocking pool: a game's lock may
    // wait on a save).
    let full = state.clone();
    blocking(move || {
        let mut sessions = full.sessions.lock().unwrap_or_else(|e| e.into_inner());
        if sessions.len() >= MAX_SESSIONS {
            let oldest = sessions.iter().min_by_key(|(_, s)| lock(s).touched).map(|(&k, _)| k);
            if let Some(k) = oldest {
                sessions.remove(&k);
            }
        }
        Ok(())
    })
    .await?;
    let names = match (human, &opponent) {
        (Some(Color::Black), Some((f, _))) => ["you".to_string(), f.name().to_string()],
        (Some(Color::White), Some((f, _))) => [f.name().to_string(), "you".to_string()],
        _ => ["black".to_string(), "white".to_string()],
    };
    let when = std::time::SystemTime::now();
    let path = crate::record::path_for(&state.out, when, &variant.name, id);
    let session = Arc::new(Mutex::new(Session::new(id, game, start_name, human, names, path)));
    // The first save (a study board that starts with moves) fsyncs: off the runtime's threads.
    let answer = blocking({
        let session = session.clone();
        move || {
            let mut s = lock(&session);
            s.started_at = when;
            s.clock = clock;
            if let Some((factory, limit)) = opponent {
                let name = factory.name().to_string();
                s.opponent = Some(attach_opponent(&session, factory.instance(id), limit, name));
            }
            s.save();
            s.kick();
            Ok(Json(state_of(&s)))
        }
    })
    .await?;
    state.sessions.lock().unwrap_or_else(|e| e.into_inner()).insert(id, session);
    tracing::info!(game = id, variant = %variant.name, "new game");
    Ok(answer)
}

/// Runs `f` on the game, on the blocking pool: the game's lock may wait on a save (which
/// fsyncs) by its opponent's thread, and `f` may save; neither holds up the runtime's
/// threads. Every request about a game looks at the person's clock first.
async fn with_session<T: Send + 'static>(
    state: &Shared,
    id: Result<Path<u64>, PathRejection>,
    f: impl FnOnce(&mut Session) -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    let Path(id) = id?;
    let session = state.session(id)?;
    blocking(move || {
        let mut s = lock(&session);
        s.touched = Instant::now();
        s.check_clock();
        f(&mut s)
    })
    .await
}

/// The variant's network, loaded (the first time) on the blocking pool.
async fn network_of(state: &Shared, variant: &'static Variant) -> Result<Network, ApiError> {
    let state = state.clone();
    blocking(move || state.network(variant)).await
}

async fn game_state(State(state): State<Shared>, id: Result<Path<u64>, PathRejection>) -> ApiResult<GameState> {
    with_session(&state, id, |s| Ok(Json(state_of(s)))).await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MoveRequest {
    usi: String,
}

async fn play_move(State(state): State<Shared>, id: Result<Path<u64>, PathRejection>, body: Result<Json<MoveRequest>, JsonRejection>) -> ApiResult<GameState> {
    let Json(req) = body?;
    if req.usi.len() > 16 {
        return Err(ApiError::bad("move: longer than any move's text"));
    }
    with_session(&state, id, move |s| {
        s.human_move(&req.usi).map_err(|e| ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, e))?;
        s.kick();
        Ok(Json(state_of(s)))
    })
    .await
}

async fn take_back(State(state): State<Shared>, id: Result<Path<u64>, PathRejection>) -> ApiResult<GameState> {
    with_session(&state, id, |s| {
        s.take_back().map_err(|e| ApiError::new(StatusCode::CONFLICT, e))?;
        s.kick();
        Ok(Json(state_of(s)))
    })
    .await
}

async fn resign(State(state): State<Shared>, id: Result<Path<u64>, PathRejection>) -> ApiResult<GameState> {
    with_session(&state, id, |s| {
        s.resign().map_err(|e| ApiError::new(StatusCode::CONFLICT, e))?;
        Ok(Json(state_of(s)))
    })
    .await
}

async fn stop(State(state): State<Shared>, id: Result<Path<u64>, PathRejection>) -> ApiResult<GameState> {
    with_session(&state, id, |s| {
        s.stop_thinking();
        Ok(Json(state_of(s)))
    })
    .await
}

/// The page went away (its tab closed): the game and its engine are freed.
async fn close(State(state): State<Shared>, id: Result<Path<u64>, PathRejection>) -> Result<StatusCode, ApiError> {
    let Path(id) = id?;
    let removed = state.sessions.lock().unwrap_or_else(|e| e.into_inner()).remove(&id);
    match removed {
        Some(_) => Ok(StatusCode::NO_CONTENT),
        None => Err(ApiError::new(StatusCode::NOT_FOUND, format!("no game {id}"))),
    }
}

/// The position a request analyses: the game's current one, or an earlier ply of it.
/// (The query also carries the token, so unknown fields are allowed here.)
#[derive(Deserialize)]
struct PlyQuery {
    #[serde(default)]
    ply: Option<usize>,
    /// A variation played from `ply`: USI moves, separated by spaces.
    #[serde(default)]
    line: Option<String>,
    #[serde(default)]
    depth: Option<u32>,
}

impl PlyQuery {
    fn line(&self) -> Result<Vec<String>, ApiError> {
        let text = self.line.as_deref().unwrap_or_default();
        if text.len() > MAX_MOVES * 8 {
            return Err(ApiError::bad(format!("variation: {} characters, too long", text.len())));
        }
        Ok(text.split_whitespace().map(str::to_string).collect())
    }
}

/// The game at `ply` of the main line (default: its end), then the moves of `line` played
/// from there, each checked by the rules engine, with the game's history kept (so that
/// repetitions count the moves before the variation).
fn game_at(s: &Session, ply: Option<usize>, line: &[String]) -> Result<Game, ApiError> {
    let ply = ply.unwrap_or(s.game.ply());
    if ply > s.game.ply() {
        return Err(ApiError::bad(format!("ply {ply}: the game has {} plies", s.game.ply())));
    }
    if line.len() > MAX_MOVES {
        return Err(ApiError::bad(format!("variation of {} moves: at most {MAX_MOVES}", line.len())));
    }
    let mut g = Game::new(s.game.start().clone(), Some(s.game.max_plies()));
    for &m in &s.game.moves()[..ply] {
        g.play(m).map_err(|e| ApiError::bad(e.to_string()))?;
    }
    for (i, m) in line.iter().enumerate() {
        let refused = |why: String| {
            ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, format!("variation move {} ({}): {why}", i + 1, m.chars().take(16).collect::<String>()))
        };
        if g.is_over() {
            return Err(refused("the game is over here".into()));
        }
        g.play_usi(m).map_err(|e| refused(e.to_string()))?;
    }
    Ok(g)
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> Result<T, ApiError> + Send + 'static) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(f).await.map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?
}

async fn network(
    State(state): State<Shared>,
    id: Result<Path<u64>, PathRejection>,
    q: Result<Query<PlyQuery>, QueryRejection>,
) -> ApiResult<Option<analysis::NetView>> {
    let Query(q) = q?;
    let line = q.line()?;
    let (game, variant) = with_session(&state, id, move |s| Ok((game_at(s, q.ply, &line)?, s.variant))).await?;
    let net = network_of(&state, variant).await?;
    blocking(move || Ok(Json(analysis::network_view(&net, &game, 8)))).await
}

async fn alphabeta(
    State(state): State<Shared>,
    id: Result<Path<u64>, PathRejection>,
    q: Result<Query<PlyQuery>, QueryRejection>,
) -> ApiResult<Option<analysis::AlphaBetaView>> {
    let Query(q) = q?;
    let depth = q.depth.unwrap_or(3);
    if !(1..=5).contains(&depth) {
        return Err(ApiError::bad(format!("depth {depth}: expected 1 to 5")));
    }
    let line = q.line()?;
    let game = with_session(&state, id, move |s| game_at(s, q.ply, &line)).await?;
    blocking(move || analysis::alphabeta_view(&game, depth).map(Json).map_err(ApiError::bad)).await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SearchRequest {
    simulations: u32,
    #[serde(default)]
    ply: Option<usize>,
    /// A variation played from `ply` (USI moves).
    #[serde(default)]
    line: Vec<String>,
}

async fn start_search(
    State(state): State<Shared>,
    id: Result<Path<u64>, PathRejection>,
    body: Result<Json<SearchRequest>, JsonRejection>,
) -> ApiResult<GameState> {
    let Json(req) = body?;
    if !(1..=MAX_SIMULATIONS).contains(&req.simulations) {
        return Err(ApiError::bad(format!("simulations {}: expected 1 to {MAX_SIMULATIONS}", req.simulations)));
    }
    let id = id?;
    let variant = with_session(&state, Ok(Path(id.0)), |s| Ok(s.variant)).await?;
    let net = network_of(&state, variant).await?;
    with_session(&state, Ok(id), move |s| {
        let game = game_at(s, req.ply, &req.line)?;
        if game.is_over() {
            return Err(ApiError::new(StatusCode::CONFLICT, "the game is over: nothing to search"));
        }
        s.search = Some(LiveSearch::start(net, game, req.simulations));
        s.search_at = (req.ply.unwrap_or(s.game.ply()), req.line);
        Ok(Json(state_of(s)))
    })
    .await
}

async fn stop_search(State(state): State<Shared>, id: Result<Path<u64>, PathRejection>) -> ApiResult<GameState> {
    with_session(&state, id, |s| {
        if let Some(search) = &s.search {
            search.stop();
        }
        Ok(Json(state_of(s)))
    })
    .await
}

async fn review(State(state): State<Shared>, id: Result<Path<u64>, PathRejection>) -> ApiResult<analysis::Review> {
    let (game, variant) = with_session(&state, id, |s| Ok((game_at(s, None, &[])?, s.variant))).await?;
    let net = network_of(&state, variant).await?;
    blocking(move || analysis::review(&net, &game, 2).map(Json).map_err(ApiError::bad)).await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LineRequest {
    /// The ply of the main line the variation leaves it at.
    ply: usize,
    /// The variation's moves from there (USI).
    moves: Vec<String>,
}

/// A variation as the page shows it: its positions, and what can be played at its end.
#[derive(Serialize)]
struct LineState {
    ply: usize,
    moves: Vec<String>,
    /// The position after each of `moves`.
    plies: Vec<PlyView>,
    legal: Vec<LegalMove>,
    to_move: String,
    over: bool,
    result: String,
    reason_text: String,
}

/// A variation: moves from an earlier ply of the game (or its end), checked by the rules
/// engine. The game itself (its main line and its record) is left as it is; the page
/// keeps its variations.
async fn line(State(state): State<Shared>, id: Result<Path<u64>, PathRejection>, body: Result<Json<LineRequest>, JsonRejection>) -> ApiResult<LineState> {
    let Json(req) = body?;
    with_session(&state, id, move |s| {
        let game = game_at(s, Some(req.ply), &req.moves)?;
        let end = gamerecords::rules_end(&game);
        let plies = viewer::game::plies_of(&game).split_off(req.ply + 1);
        Ok(Json(LineState {
            ply: req.ply,
            moves: req.moves,
            plies,
            legal: legal_of(&game),
            to_move: side_letter(game.position().side_to_move()).to_string(),
            over: end.is_some(),
            result: result_text(end).into(),
            reason_text: end.as_ref().map(reason_text).unwrap_or_default(),
        }))
    })
    .await
}

#[derive(Serialize)]
struct KifText {
    kif: String,
}

/// The game to the shown ply (and variation) as KIF, for standard shogi.
async fn kif(State(state): State<Shared>, id: Result<Path<u64>, PathRejection>, q: Result<Query<PlyQuery>, QueryRejection>) -> ApiResult<KifText> {
    let Query(q) = q?;
    let line = q.line()?;
    with_session(&state, id, move |s| {
        if s.variant.name != "shogi" {
            return Err(ApiError::bad(format!("KIF is written for standard shogi, not {}: copy the USI line", s.variant.title)));
        }
        let game = game_at(s, q.ply, &line)?;
        let whole = game.ply() == s.game.ply() && line.is_empty();
        let mut record = gamerecords::GameRecord::from_game(&game, if whole { s.end } else { gamerecords::rules_end(&game) }, &s.names[0], &s.names[1]);
        record.start_time = Some(gamerecords::rfc3339_utc(s.started_at));
        let kif = gamerecords::kif::to_kif(&record).map_err(|e| ApiError::bad(format!("KIF: {e}")))?;
        Ok(Json(KifText { kif }))
    })
    .await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PositionRequest {
    variant: String,
    sfen: String,
}

/// A position the board editor made, as the rules engine reads it.
#[derive(Serialize)]
struct PositionCheck {
    /// The position as the rules engine writes it.
    sfen: String,
    legal_moves: usize,
    over: bool,
    reason_text: String,
}

/// Checks a position (the board editor's) with the rules engine: a 400 says what is
/// wrong with it.
async fn check_position(body: Result<Json<PositionRequest>, JsonRejection>) -> ApiResult<PositionCheck> {
    let Json(req) = body?;
    let variant = variants()
        .into_iter()
        .find(|v| v.name == req.variant)
        .ok_or_else(|| ApiError::bad(format!("variant '{}': not one this page plays", req.variant.chars().take(40).collect::<String>())))?;
    if req.sfen.len() > MAX_SFEN {
        return Err(ApiError::bad(format!("SFEN: {} characters, at most {MAX_SFEN}", req.sfen.len())));
    }
    let pos = Position::from_sfen(variant, req.sfen.trim()).map_err(|e| ApiError::bad(e.to_string()))?;
    let game = Game::new(pos, None);
    let end = gamerecords::rules_end(&game);
    Ok(Json(PositionCheck {
        sfen: game.position().to_sfen(),
        legal_moves: game.legal_moves().len(),
        over: end.is_some(),
        reason_text: end.as_ref().map(reason_text).unwrap_or_default(),
    }))
}

/// Closes games no page has asked about for the idle timeout (a tab closed without
/// saying so, a browser that crashed).
/// Looks at the open games' clocks too, so a person who closed the tab still loses on
/// time (and the record says so). On the blocking pool: a game's lock may wait on a save.
pub(crate) async fn reap_idle(state: Shared) {
    let mut tick = tokio::time::interval(Duration::from_secs(5));
    loop {
        tick.tick().await;
        let state = state.clone();
        let _ = tokio::task::spawn_blocking(move || {
            let open: Vec<Arc<Mutex<Session>>> = {
                let mut sessions = state.sessions.lock().unwrap_or_else(|e| e.into_inner());
                sessions.retain(|id, s| {
                    let keep = lock(s).touched.elapsed() < state.idle_timeout;
                    if !keep {
                        tracing::info!(game = id, "closed: no page asked about it");
                    }
                    keep
                });
                sessions.values().cloned().collect()
            };
            for s in open {
                lock(&s).check_clock();
            }
        })
        .await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A handler that panics answers 500 with a message, and the server keeps serving.
    #[test]
    fn a_panicking_handler_is_a_500_and_the_server_goes_on() {
        let state = AppState::new(&PlayConfig::new("127.0.0.1:0".parse().unwrap(), std::env::temp_dir()), "t0k".into());
        let app = guarded(routes().route("/api/boom", get(|| async { panic!("a bug") as &'static str })), state);
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
        let addr = listener.local_addr().unwrap();
        runtime.spawn(async move { axum::serve(listener, app).await });
        let agent = ureq::AgentBuilder::new().timeout(Duration::from_secs(60)).build();
        match agent.get(&format!("http://{addr}/api/boom?token=t0k")).call() {
            Err(ureq::Error::Status(500, r)) => {
                let body = r.into_string().unwrap();
                assert!(body.contains("a bug") && body.contains("the other games go on"), "{body}");
            }
            other => panic!("a panicking handler answered {other:?}"),
        }
        assert_eq!(agent.get(&format!("http://{addr}/api/setup?token=t0k")).call().unwrap().status(), 200, "the server still serves");
    }
}
