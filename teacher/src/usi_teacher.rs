//! A USI engine as the teacher: one process per worker thread, `MultiPV` set to the
//! config's `multipv`, `go nodes N` on every position. The first move of each `multipv`
//! line is a scored move; the others get no policy mass, as the alpha-beta's moves beyond
//! its margin get none. At a node limit the lines can come from different iterations
//! (the last one reported of each index is kept) and some carry bounds: the engine's
//! scores are taken as it gave them.

use std::time::{Duration, Instant};

use players::baseline::RootScores;
use players::player::usi_position;
use players::Score;
use rules::{Game, Move, Position};
use usi::client::{BestMove, EngineConfig, EngineReply, UsiEngine};

use crate::{policy_cp, TeacherConfig, TeacherError};

/// How long one position may take before the engine counts as hung (a node limit should
/// take well under a second).
const MOVE_TIMEOUT: Duration = Duration::from_secs(300);

pub(crate) struct UsiTeacher {
    config: EngineConfig,
    engine: Option<UsiEngine>,
    go: String,
}

impl UsiTeacher {
    pub(crate) fn new(command: &str, cfg: &TeacherConfig) -> UsiTeacher {
        let mut config = EngineConfig::new("teacher", command);
        config.options = cfg.engine_options.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        if !cfg.engine_options.keys().any(|k| k.eq_ignore_ascii_case("MultiPV")) {
            config.options.push(("MultiPV".into(), cfg.multipv.to_string()));
        }
        config.init_timeout = Duration::from_secs(30);
        UsiTeacher { config, engine: None, go: format!("go nodes {}", cfg.nodes) }
    }

    fn error(&self, problem: String) -> TeacherError {
        TeacherError::Engine { engine: self.config.command.display().to_string(), problem }
    }

    /// The running engine, started (again, after a death) when needed.
    fn engine(&mut self) -> Result<&mut UsiEngine, TeacherError> {
        if self.engine.as_mut().is_some_and(|e| !e.is_alive()) {
            self.engine = None;
        }
        if self.engine.is_none() {
            let e = UsiEngine::start(&self.config).map_err(|e| self.error(e.to_string()))?;
            self.engine = Some(e);
        }
        Ok(self.engine.as_mut().expect("started above"))
    }

    pub(crate) fn new_game(&mut self) -> Result<(), TeacherError> {
        let result = self.engine()?.new_game();
        result.map_err(|e| {
            self.engine = None;
            self.error(e.to_string())
        })
    }

    /// The engine's scores for the game's position; one failed search (a crash, a hang)
    /// is retried on a fresh process before it is an error.
    pub(crate) fn score(&mut self, game: &Game, margin_cp: i32) -> Result<Option<RootScores>, TeacherError> {
        let position = usi_position(game);
        let mut last_error = String::new();
        for attempt in 0..2 {
            if attempt > 0 {
                self.engine = None;
                self.new_game()?;
            }
            let go = self.go.clone();
            let e = self.engine()?;
            match e.go(&position, &go).and_then(|()| e.wait(Instant::now() + MOVE_TIMEOUT)) {
                Ok(reply) => return score_usi(game.position(), &reply, margin_cp).map_err(|p| self.error(format!("{p} (after {position})"))),
                Err(err) => {
                    tracing::warn!(error = %err, "teacher engine failed; restarting it");
                    last_error = err.to_string();
                }
            }
        }
        Err(self.error(last_error))
    }
}

/// The teacher's scores from a USI reply: the first move of each `multipv` line with the
/// line's score (for the side to move), the first line's score as the position's. The
/// engine's `bestmove` is the best move and comes first (scored as the first line when no
/// line starts with it); moves more than `margin_cp` below the best are left out. `None` when the
/// engine resigns or declares with no line to play (as it does with no legal move). An illegal move in the reply is an
/// error.
pub fn score_usi(pos: &Position, reply: &EngineReply, margin_cp: i32) -> Result<Option<RootScores>, String> {
    let parse = |text: &str| pos.parse_usi(text).map_err(|e| format!("the engine's move {text} is not legal: {e}"));
    let mut moves: Vec<(Move, Score)> = Vec::new();
    for line in &reply.lines {
        let (Some(first), Some(score)) = (line.pv.first(), Score::of_usi_info(line)) else { continue };
        let m = parse(first)?;
        if !moves.iter().any(|&(seen, _)| seen == m) {
            moves.push((m, score));
        }
    }
    let position_score = Score::of_usi_info(&reply.info).or_else(|| reply.lines.first().and_then(Score::of_usi_info)).unwrap_or(Score::Cp(0));
    let best = match &reply.best {
        BestMove::Move(text) => parse(text)?,
        BestMove::Resign | BestMove::Win => match moves.first() {
            Some(&(m, _)) => m,
            None => return Ok(None),
        },
    };
    // The best move first, as the alpha-beta teacher's.
    match moves.iter().position(|&(m, _)| m == best) {
        Some(i) => moves[..=i].rotate_right(1),
        None => moves.insert(0, (best, position_score)),
    }
    let best_cp = moves.iter().map(|&(_, s)| policy_cp(s)).fold(f64::MIN, f64::max);
    let kept = moves.into_iter().filter(|&(_, s)| policy_cp(s) >= best_cp - margin_cp as f64).map(|(m, s)| (m, Some(s))).collect();
    Ok(Some(RootScores { moves: kept, best, score: position_score, nodes: reply.info.nodes.unwrap_or(0) }))
}
