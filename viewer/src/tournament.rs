//! The page of an arena tournament directory (`tournament.toml`, `results.jsonl`): the
//! rating list with its plot, the crosstable, the pairings' statistics and every game.
//! The statistics are the arena's own (`arena::report::build` over the results file), so
//! the page says what `copper arena` prints, also for a tournament still running.

use crate::error::{invalid, io_err, ViewError};
use crate::game::GameView;
use crate::page::{inline_svg, Cell, PageData, Section};
use arena::report::Report;
use arena::runner::JobResult;
use arena::stats::Sprt;
use arena::TournamentConfig;
use players::spec::PlayerSpec;
use std::collections::{BTreeMap, HashSet};
use std::path::Path;

/// What a tournament directory holds, read and checked.
pub struct Tournament {
    pub config: TournamentConfig,
    pub names: Vec<String>,
    /// The results counted (those of the configured rounds), in the file's order.
    pub results: Vec<JobResult>,
    pub report: Report,
}

/// Reads a tournament directory and computes its report with the arena's functions.
pub fn read(dir: &Path) -> Result<Tournament, ViewError> {
    let toml_path = dir.join("tournament.toml");
    let text = std::fs::read_to_string(&toml_path).map_err(io_err(&toml_path))?;
    let config: TournamentConfig = toml::from_str(&text).map_err(|e| invalid(&toml_path, e.to_string().trim_end()))?;
    let names: Vec<String> = config
        .players
        .iter()
        .map(|p| PlayerSpec::parse(p).map(|s| s.name).map_err(|e| invalid(&toml_path, format!("player '{p}': {e}"))))
        .collect::<Result<_, _>>()?;
    if names.len() < 2 {
        return Err(invalid(&toml_path, "fewer than two players"));
    }
    let ids: HashSet<u64> = config.jobs().iter().map(|j| j.id).collect();
    let results: Vec<JobResult> = arena::tournament::read_results(&dir.join("results.jsonl"))?.into_iter().filter(|r| ids.contains(&r.job.id)).collect();
    for r in &results {
        if r.job.first >= names.len() || r.job.second >= names.len() {
            return Err(invalid(&dir.join("results.jsonl"), format!("game {} names player {} of {}", r.job.id, r.job.first.max(r.job.second), names.len())));
        }
    }
    let anchor = config.anchor.as_ref().and_then(|a| names.iter().position(|n| n == a)).unwrap_or(0);
    let sprt = config.sprt.as_ref().map(|s| Sprt { elo0: s.elo0, elo1: s.elo1, alpha: s.alpha, beta: s.beta });
    let report = arena::report::build(&names, &config.pairings(), &results, anchor, config.anchor_elo, sprt.as_ref());
    Ok(Tournament { config, names, results, report })
}

/// Adds every hand of every result to the page as a game; returns the page indices of
/// each result's games, by job id.
pub fn add_games(page: &mut PageData, path: &Path, results: &[JobResult], prefix: &str) -> Result<BTreeMap<u64, Vec<usize>>, ViewError> {
    let mut by_job = BTreeMap::new();
    for r in results {
        for (h, hand) in r.hands.iter().enumerate() {
            let hand_text = if r.hands.len() > 1 { format!(", hand {}", h + 1) } else { String::new() };
            let opening = if r.opening.is_empty() { String::new() } else { format!(" ({})", r.opening) };
            let title = format!("{prefix}game {}{hand_text}{opening}: {} - {}", r.job.id, hand.record.black, hand.record.white);
            let view = GameView::from_record(&hand.record, title).map_err(|source| ViewError::Game {
                path: path.to_path_buf(),
                game: format!("{}{hand_text}", r.job.id),
                source: Box::new(source),
            })?;
            let variant = hand.record.load_variant().map_err(|source| ViewError::Game {
                path: path.to_path_buf(),
                game: r.job.id.to_string(),
                source: Box::new(source),
            })?;
            let i = page.push_game(variant, view);
            by_job.entry(r.job.id).or_insert_with(Vec::new).push(i);
        }
    }
    Ok(by_job)
}

fn elo(x: f64) -> String {
    if x.is_finite() {
        format!("{:+.0}", if x.abs() < 0.5 { 0.0 } else { x })
    } else if x.is_nan() {
        "n/a".into()
    } else if x > 0.0 {
        "+inf".into()
    } else {
        "-inf".into()
    }
}

/// The tables and the plot of a tournament report; `games_of(player set)` gives the page
/// indices of the games between the given players.
pub fn sections(t: &Tournament, by_job: &BTreeMap<u64, Vec<usize>>) -> Vec<Section> {
    let rep = &t.report;
    let games_between = |a: usize, b: Option<usize>| -> Vec<usize> {
        t.results
            .iter()
            .filter(|r| match b {
                None => r.job.first == a || r.job.second == a,
                Some(b) => (r.job.first == a && r.job.second == b) || (r.job.first == b && r.job.second == a),
            })
            .flat_map(|r| by_job.get(&r.job.id).cloned().unwrap_or_default())
            .collect()
    };
    let index_of = |name: &str| t.names.iter().position(|n| n == name);
    let mut out = Vec::new();

    let rows: Vec<Vec<Cell>> = rep
        .ratings
        .entries
        .iter()
        .enumerate()
        .map(|(k, e)| {
            let games = index_of(&e.name).map(|i| games_between(i, None)).unwrap_or_default();
            vec![
                Cell::text((k + 1).to_string()),
                Cell::games(e.name.clone(), games),
                Cell::text(elo(e.elo)),
                Cell::text(format!("[{}, {}]", elo(e.lo), elo(e.hi))),
                Cell::text(e.games.to_string()),
                Cell::text(format!("{:.3}", e.score)),
            ]
        })
        .collect();
    let mut note = format!("Maximum-likelihood ratings (Bradley-Terry), anchor {} fixed; {} games.", rep.anchor, rep.games);
    if !rep.ratings.virtual_pairings.is_empty() {
        let pairs: Vec<String> = rep.ratings.virtual_pairings.iter().map(|(a, b)| format!("{a}–{b}")).collect();
        note += &format!(" One virtual draw on each pairing where one side never scored ({}): those gaps are lower bounds.", pairs.join(", "));
    }
    out.push(Section::Table {
        title: "Standings".into(),
        note,
        columns: ["rank", "player", "Elo", "95% interval", "games", "score"].map(String::from).to_vec(),
        rows,
    });

    // Crosstable: the row player's W-D-L against the column player, with the score's interval.
    let mut cross = Vec::new();
    for (i, a) in t.names.iter().enumerate() {
        let mut row = vec![Cell::games(a.clone(), games_between(i, None))];
        for (j, b) in t.names.iter().enumerate() {
            let p = rep.pairings.iter().find(|p| (&p.a == a && &p.b == b) || (&p.a == b && &p.b == a));
            row.push(match p {
                _ if i == j => Cell::text("—"),
                Some(p) if p.games > 0 => {
                    let flip = &p.a != a;
                    let (w, l) = if flip { (p.losses, p.wins) } else { (p.wins, p.losses) };
                    let (s, lo, hi) = if flip { (1.0 - p.score, 1.0 - p.score_hi, 1.0 - p.score_lo) } else { (p.score, p.score_lo, p.score_hi) };
                    Cell::games(format!("+{w} ={} -{l}  {s:.2} [{lo:.2}, {hi:.2}]", p.draws), games_between(i, Some(j)))
                }
                _ => Cell::text(""),
            });
        }
        cross.push(row);
    }
    let mut columns = vec!["W-D-L of the row player, score [95%]".to_string()];
    columns.extend(t.names.iter().cloned());
    out.push(Section::Table { title: "Crosstable".into(), note: String::new(), columns, rows: cross });

    let rows = rep
        .pairings
        .iter()
        .map(|p| {
            let games = match (index_of(&p.a), index_of(&p.b)) {
                (Some(a), Some(b)) => games_between(a, Some(b)),
                _ => Vec::new(),
            };
            vec![
                Cell::text(p.a.clone()),
                Cell::text(p.b.clone()),
                Cell::games(p.games.to_string(), games),
                Cell::text(format!("+{} ={} -{}", p.wins, p.draws, p.losses)),
                Cell::text(format!("{:.3} [{:.3}, {:.3}]", p.score, p.score_lo, p.score_hi)),
                Cell::text(format!("{} [{}, {}]", elo(p.elo), elo(p.elo_lo), elo(p.elo_hi))),
                Cell::text(format!("[{}, {}]", elo(p.pentanomial_elo_lo), elo(p.pentanomial_elo_hi))),
                Cell::text(format!("{:.3}", p.los)),
                Cell::text(format!("{:.2}", p.draw_ratio)),
                Cell::text(p.sprt.as_ref().map(|s| s.describe()).unwrap_or_default()),
            ]
        })
        .collect();
    out.push(Section::Table {
        title: "Pairings".into(),
        note: "Elo intervals from game (trinomial) and game-pair (pentanomial) counts.".into(),
        columns: ["player", "opponent", "games", "+/=/-", "score [95%]", "Elo [95%]", "Elo [95%] pairs", "LOS", "draws", "SPRT"].map(String::from).to_vec(),
        rows,
    });
    if let Some(svg) = ratings_svg(rep) {
        out.push(Section::Svg { title: "Ratings".into(), svg });
    }
    let endings: Vec<String> = rep.endings.iter().map(|(k, v)| format!("{k} {v}")).collect();
    out.push(Section::Text { title: "How games ended".into(), text: endings.join(", ") });
    out
}

/// The arena's ratings plot of the report (`arena::plot::interval_chart`, drawn into a
/// temporary file and read back).
fn ratings_svg(rep: &Report) -> Option<String> {
    let points: Vec<arena::plot::Interval> =
        rep.ratings.entries.iter().map(|e| arena::plot::Interval { label: e.name.clone(), value: e.elo, lo: e.lo, hi: e.hi }).collect();
    let dir = std::env::temp_dir().join(format!("copper-view-{}-{:?}", std::process::id(), std::thread::current().id()));
    std::fs::create_dir_all(&dir).ok()?;
    let path = dir.join("ratings.svg");
    let drawn = arena::plot::interval_chart(&path, &format!("Ratings (anchor {} = fixed)", rep.anchor), "Elo", &points);
    let text = drawn.ok().and_then(|_| std::fs::read_to_string(&path).ok());
    let _ = std::fs::remove_dir_all(&dir);
    text.map(|t| inline_svg(&t))
}

/// The page of a tournament directory.
pub fn page(dir: &Path) -> Result<PageData, ViewError> {
    let t = read(dir)?;
    let title = format!("Tournament {} — {} ({:?}), {} players", dir.display(), t.config.variant, t.config.mode, t.names.len());
    let mut page = PageData::new("tournament", title, dir);
    let by_job = add_games(&mut page, &dir.join("results.jsonl"), &t.results, "")?;
    page.sections = sections(&t, &by_job);
    Ok(page)
}
