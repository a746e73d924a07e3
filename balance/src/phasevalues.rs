//! The network's value of every game over its phases: one value network (the study's
//! `value_model`, or its first checkpoint tier's) judges each game at [`VALUE_PLIES`], for
//! Black. Beside the material balance it says who the games favour as they go on, in the
//! same units for every tier, alpha-beta tiers included.
//!
//! The value at ply p is the mean of Black's value after p and after p + 1 plies: one
//! position with each side to move, so that a value head's bias toward the side to move
//! (or a capture not yet answered) is not read as Black's edge.
//!
//! The values are kept per game in `phase-values.jsonl` (a header naming the model, then
//! one line per game), so a resumed or extended study evaluates only its new games and the
//! study's page (`copper view`) reads them without a network. The file is derived data:
//! one that does not read, or that another model, ply list, length limit or method wrote,
//! is rebuilt.

use crate::error::{io_err, BalanceError};
use arena::runner::JobResult;
use neteval::NetEvaluator;
use rules::{Color, Game, Position, Variant};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The plies (after that many moves from the start, random opening plies included) at
/// which the network judges a game, with the ply after each; a game is judged at a ply
/// only if it went on past the ply after it.
pub const VALUE_PLIES: [usize; 10] = [0, 10, 20, 30, 40, 60, 80, 100, 120, 160];

/// The file in the study directory.
pub const FILE: &str = "phase-values.jsonl";

/// Positions evaluated in one batch.
const BATCH: usize = 256;

/// Black's value (P(Black wins) − P(White wins)) at each of [`VALUE_PLIES`] by game (job id);
/// `None` where the game had ended.
pub type PhaseValues = BTreeMap<u64, Vec<Option<f32>>>;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Header {
    /// The model directory as given.
    model: String,
    plies: Vec<usize>,
    /// The game length limit the positions were encoded with (0: the variant's).
    max_plies: u32,
    /// How a ply's value is made (files of another method are rebuilt).
    method: String,
}

/// [`Header::method`] of this version.
const METHOD: &str = "mean of plies p and p+1";

#[derive(Serialize, Deserialize)]
struct Line {
    id: u64,
    values: Vec<Option<f32>>,
}

/// The values in `dir`'s file, with the model that made them; `None` when there is no
/// file, or it does not read (a warning: the file is rebuilt by the next study run).
pub fn read(dir: &Path) -> Result<Option<(String, PhaseValues)>, BalanceError> {
    Ok(read_with_header(dir)?.map(|(h, v)| (h.model, v)))
}

fn read_with_header(dir: &Path) -> Result<Option<(Header, PhaseValues)>, BalanceError> {
    let path = dir.join(FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_err(&path)(e)),
    };
    let parsed = (|| -> Result<(Header, PhaseValues), String> {
        let mut lines = text.lines().enumerate();
        let (_, first) = lines.next().ok_or("empty")?;
        let header: Header = serde_json::from_str(first).map_err(|e| format!("line 1: {e}"))?;
        let mut values = PhaseValues::new();
        for (i, l) in lines.filter(|(_, l)| !l.trim().is_empty()) {
            let line: Line = serde_json::from_str(l).map_err(|e| format!("line {}: {e}", i + 1))?;
            if line.values.len() != header.plies.len() {
                return Err(format!("line {}: {} values for {} plies", i + 1, line.values.len(), header.plies.len()));
            }
            values.insert(line.id, line.values);
        }
        Ok((header, values))
    })();
    match parsed {
        Ok(p) => Ok(Some(p)),
        Err(problem) => {
            tracing::warn!(path = %path.display(), "the network's phase values do not read ({problem}); they will be recomputed");
            Ok(None)
        }
    }
}

/// The values at [`VALUE_PLIES`] of every game in `results`: those already in `dir`'s file
/// (when the same model, plies and length limit made it), the rest computed with `eval`,
/// and the file rewritten atomically with every game's.
pub fn update(
    dir: &Path,
    model: &Path,
    eval: &NetEvaluator,
    variant: &'static Variant,
    max_plies: Option<u32>,
    results: &[JobResult],
) -> Result<PhaseValues, BalanceError> {
    let header = Header { model: model.display().to_string(), plies: VALUE_PLIES.to_vec(), max_plies: max_plies.unwrap_or(0), method: METHOD.into() };
    let mut values = match read_with_header(dir)? {
        Some((h, v)) if h == header => v,
        Some((h, _)) => {
            tracing::info!(
                "the phase values were made by {} (plies {:?}, max_plies {}, {}); recomputing with {}",
                h.model,
                h.plies,
                h.max_plies,
                h.method,
                header.model
            );
            PhaseValues::new()
        }
        None => PhaseValues::new(),
    };
    let todo: Vec<&JobResult> = results.iter().filter(|r| !values.contains_key(&r.job.id)).collect();
    if !todo.is_empty() {
        tracing::info!("the network judges {} games at plies {:?}", todo.len(), VALUE_PLIES);
    }
    // Positions are gathered across games so that each network call is a full batch;
    // `slots` says whose value (game id, ply index) each position adds half of.
    let (mut slots, mut games): (Vec<(u64, usize)>, Vec<Game>) = (Vec::new(), Vec::new());
    let flush = |slots: &mut Vec<(u64, usize)>, games: &mut Vec<Game>, values: &mut PhaseValues| {
        for (((id, j), g), wdl) in slots.drain(..).zip(games.iter()).zip(eval.wdl_batch(games)) {
            let v = values.get_mut(&id).expect("inserted with its positions")[j].get_or_insert(0.0);
            *v += 0.5 * black_value(g.position().side_to_move(), wdl);
        }
        games.clear();
    };
    for r in todo {
        let positions = match r
            .hands
            .first()
            .ok_or_else(|| "no game".to_string())
            .and_then(|h| positions_at_plies(variant, &h.record.start_sfen, &h.record.moves, max_plies))
        {
            Ok(p) => p,
            Err(e) => {
                tracing::warn!(game = r.job.id, "phase values: the record does not replay: {e}");
                continue;
            }
        };
        values.insert(r.job.id, vec![None; VALUE_PLIES.len()]);
        for (j, pair) in positions.into_iter().enumerate() {
            if let Some((at, next)) = pair {
                slots.extend([(r.job.id, j), (r.job.id, j)]);
                games.extend([at, next]);
            }
        }
        if games.len() >= BATCH {
            flush(&mut slots, &mut games, &mut values);
        }
    }
    flush(&mut slots, &mut games, &mut values);
    let mut text = serde_json::to_string(&header).expect("plain data");
    text.push('\n');
    for (id, v) in &values {
        text += &serde_json::to_string(&Line { id: *id, values: v.clone() }).expect("plain data");
        text.push('\n');
    }
    let path: PathBuf = dir.join(FILE);
    records::write_atomic(&path, text.as_bytes()).map_err(io_err(&path))?;
    Ok(values)
}

/// P(Black wins) − P(White wins) from the side to move's `[win, draw, loss]`.
fn black_value(to_move: Color, wdl: [f32; 3]) -> f32 {
    match to_move {
        Color::Black => wdl[0] - wdl[2],
        Color::White => wdl[2] - wdl[0],
    }
}

/// The game after each of [`VALUE_PLIES`] plies and after the next ply, where the game
/// went on past both (`None` from where it ended).
fn positions_at_plies(variant: &'static Variant, start_sfen: &str, moves: &[String], max_plies: Option<u32>) -> Result<Vec<Option<(Game, Game)>>, String> {
    let start = Position::from_sfen(variant, start_sfen).map_err(|e| format!("start {start_sfen}: {e}"))?;
    let mut g = Game::new(start, max_plies);
    let mut out = vec![None; VALUE_PLIES.len()];
    let mut held: Option<(usize, Game)> = None;
    for ply in 0..=moves.len() {
        if let Some((j, at)) = held.take() {
            if ply < moves.len() {
                out[j] = Some((at, g.clone()));
            }
        }
        if let Some(j) = VALUE_PLIES.iter().position(|&p| p == ply) {
            held = Some((j, g.clone()));
        }
        if ply < moves.len() {
            g.play_usi(&moves[ply]).map_err(|e| format!("ply {} ({}): {e}", ply + 1, moves[ply]))?;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    const SEED: &str = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b c 1 C";

    fn variant() -> &'static Variant {
        Variant::builtin("pocket-copper").unwrap()
    }

    /// Game `id`: up to `plies` legal moves from the seed start, each chosen by a fixed
    /// arithmetic rule from the legal list, stopping early if the game ends.
    fn result(id: u64, plies: usize) -> JobResult {
        let mut g = Game::new(Position::from_sfen(variant(), SEED).unwrap(), None);
        for i in 0..plies {
            let moves = g.legal_moves();
            if g.is_over() || moves.is_empty() {
                break;
            }
            g.play(moves[(i * 7 + id as usize * 3) % moves.len()]).unwrap();
        }
        let moves: Vec<String> = g.moves().iter().map(|&m| variant().move_to_usi(m)).collect();
        let end = arena::GameEnd { outcome: rules::Outcome::Draw, ending: arena::Ending::AdjudicatedDraw };
        serde_json::from_value(serde_json::json!({
            "job": { "id": id, "first": 0, "second": 0, "opening": 0 },
            "first": "t", "second": "t", "opening": "seed", "first_score": 0.5, "seconds": 0.0,
            "hands": [{
                "record": { "variant": "pocket-copper", "start_sfen": SEED, "moves": moves, "end": end, "black": "t", "white": "t" },
                "end": end, "first_is_black": true, "incident": null
            }]
        }))
        .unwrap()
    }

    /// The position after `n` of the game's moves, replayed on a bare position.
    fn sfen_after(r: &JobResult, n: usize) -> String {
        let mut pos = Position::from_sfen(variant(), SEED).unwrap();
        for m in &r.hands[0].record.moves[..n] {
            let m = pos.parse_usi(m).unwrap();
            pos.play_unchecked(m);
        }
        pos.to_sfen()
    }

    #[test]
    fn black_s_value_turns_the_side_to_move_s_view() {
        assert_eq!(black_value(Color::Black, [0.5, 0.25, 0.25]), 0.25);
        assert_eq!(black_value(Color::White, [0.5, 0.25, 0.25]), -0.25);
    }

    #[test]
    fn a_game_is_judged_at_each_ply_it_went_on_past() {
        let r = result(1, 45);
        let moves = &r.hands[0].record.moves;
        assert_eq!(moves.len(), 45, "the test game lasts 45 plies");
        let at = positions_at_plies(variant(), SEED, moves, Some(300)).unwrap();
        for (j, &ply) in VALUE_PLIES.iter().enumerate() {
            match &at[j] {
                Some((g, next)) => {
                    assert!(ply + 1 < 45, "ply {ply}");
                    assert_eq!((g.ply(), g.position().to_sfen()), (ply, sfen_after(&r, ply)), "ply {ply}");
                    assert_eq!((next.ply(), next.position().to_sfen()), (ply + 1, sfen_after(&r, ply + 1)), "ply {ply}");
                    assert_eq!((g.max_plies(), next.max_plies()), (300, 300));
                }
                None => assert!(ply + 1 >= 45, "ply {ply}"),
            }
        }
        // Ply 40 is the last judged; 60 and on are past the end.
        assert_eq!(at.iter().filter(|g| g.is_some()).count(), 5);
        let e = positions_at_plies(variant(), SEED, &["7g7f".into(), "7f7e".into()], None).unwrap_err();
        assert!(e.starts_with("ply 2 (7f7e)"), "{e}");
    }

    #[test]
    fn values_are_computed_once_kept_in_the_file_and_redone_for_another_model() {
        let tmp = tempfile::tempdir().unwrap();
        let (model_a, model_b) = (tmp.path().join("a"), tmp.path().join("b"));
        neteval::save_random_model(variant(), &model_a, 1, 8, 1).unwrap();
        neteval::save_random_model(variant(), &model_b, 1, 8, 2).unwrap();
        let (net_a, net_b) = (neteval::load(&model_a, variant()).unwrap(), neteval::load(&model_b, variant()).unwrap());
        let study = tmp.path().join("study");
        std::fs::create_dir_all(&study).unwrap();
        let games = [result(0, 45), result(1, 12), result(2, 0)];

        let values = update(&study, &model_a, &net_a, variant(), None, &games).unwrap();
        assert_eq!(values.len(), 3);
        for r in &games {
            let n = r.hands[0].record.moves.len();
            for (j, &ply) in VALUE_PLIES.iter().enumerate() {
                // The game so far (the network reads its ply count and repetitions too).
                let value_after = |plies: usize| {
                    let mut g = Game::new(Position::from_sfen(variant(), SEED).unwrap(), None);
                    for m in &r.hands[0].record.moves[..plies] {
                        g.play_usi(m).unwrap();
                    }
                    black_value(g.position().side_to_move(), net_a.wdl(&g))
                };
                let want = (ply + 1 < n).then(|| (value_after(ply) + value_after(ply + 1)) / 2.0);
                let got = values[&r.job.id][j];
                match (got, want) {
                    (Some(x), Some(y)) => assert!((x - y).abs() < 1e-6, "game {} ply {ply}: {x} against {y}", r.job.id),
                    (x, y) => assert_eq!(x.is_some(), y.is_some(), "game {} ply {ply}", r.job.id),
                }
            }
        }
        // The 0-ply game ended at its start: judged nowhere, and still in the file.
        assert!(values[&2].iter().all(Option::is_none));
        assert_eq!(read(&study).unwrap().unwrap(), (model_a.display().to_string(), values.clone()));

        // A value in the file is kept, not recomputed; a new game is added.
        let path = study.join(FILE);
        let text = std::fs::read_to_string(&path).unwrap();
        let marked: String = text
            .lines()
            .map(|l| {
                if l.starts_with("{\"id\":1,") {
                    "{\"id\":1,\"values\":[0.5,0.5,null,null,null,null,null,null,null,null]}".to_string()
                } else {
                    l.to_string()
                }
            })
            .map(|l| l + "\n")
            .collect();
        std::fs::write(&path, marked).unwrap();
        let more = [result(0, 45), result(1, 12), result(2, 0), result(3, 30)];
        let kept = update(&study, &model_a, &net_a, variant(), None, &more).unwrap();
        assert_eq!(kept[&1][0], Some(0.5));
        assert_eq!(kept[&0], values[&0]);
        assert_eq!(kept[&3].iter().filter(|v| v.is_some()).count(), 3, "plies 0, 10 and 20 (with 21) of 30");

        // Another model, or another length limit, recomputes everything.
        let other = update(&study, &model_b, &net_b, variant(), None, &more).unwrap();
        assert_ne!(other[&1][0], Some(0.5));
        assert_ne!(other[&0], values[&0]);
        let limited = update(&study, &model_b, &net_b, variant(), Some(100), &more).unwrap();
        assert_eq!(limited.len(), 4);

        // A file that does not read is rebuilt, not an error.
        std::fs::write(&path, "not json\n").unwrap();
        assert!(read(&study).unwrap().is_none());
        let rebuilt = update(&study, &model_a, &net_a, variant(), None, &more).unwrap();
        assert_eq!(rebuilt[&0], values[&0]);
    }
}
