//! The edge's price from real matches: `copper arena` directories at unequal budgets,
//! read back game by game and fitted.

use arena::tournament::{run, Mode, TournamentConfig};
use balance::price::{games_of_matches, price_report};
use std::path::Path;

fn play(dir: &Path, a: &str, b: &str, rounds: u32, seed: u64) {
    let mut cfg = TournamentConfig::new(vec![a.to_string(), b.to_string()]);
    cfg.variant = "pocket-copper".into();
    cfg.mode = Mode::Match;
    cfg.rounds = rounds;
    cfg.threads = 2;
    cfg.seed = seed;
    cfg.max_plies = 200;
    cfg.out_dir = dir.to_path_buf();
    run(&cfg, false).unwrap();
}

/// Two matches (4:1 nodes, and 1:1) give three budget settings; every game is counted
/// once, with Black's score as the records say, and the report's files are written.
#[test]
fn matches_at_unequal_budgets_give_the_settings_and_a_fitted_price() {
    let dir = tempfile::tempdir().unwrap();
    let (odds, even) = (dir.path().join("odds"), dir.path().join("even"));
    play(&odds, "alphabeta,nodes=800,noise=20,name=ab800", "alphabeta,nodes=200,noise=20,name=ab200", 12, 1);
    play(&even, "alphabeta,nodes=200,noise=20,name=a", "alphabeta,nodes=200,noise=20,name=b", 6, 2);

    let (settings, start, unit) = games_of_matches(&[&odds, &even]).unwrap();
    assert_eq!(settings.iter().map(|s| s.games).sum::<u64>(), 36);
    assert_eq!(unit, "nodes");
    assert!(start.contains(" b "), "the seed start, Black to move: {start}");
    let ratios: Vec<f64> = settings.iter().map(|s| s.black_budget / s.white_budget).collect();
    assert_eq!(ratios, vec![0.25, 1.0, 4.0]);
    assert_eq!(settings.iter().map(|s| s.games).collect::<Vec<_>>(), vec![12, 12, 12], "colours paired");
    // Black's points at 4:1 and at 1:4 from the arena's own results: the stronger player's
    // points as Black plus the weaker's as Black.
    let results = arena::tournament::read_results(&odds.join("results.jsonl")).unwrap();
    let black_points = |black: &str| -> f64 {
        results
            .iter()
            .filter(|r| r.hands[0].record.black == black)
            .map(|r| match r.hands[0].end.outcome {
                rules::Outcome::Draw => 0.5,
                rules::Outcome::Win(rules::Color::Black) => 1.0,
                rules::Outcome::Win(rules::Color::White) => 0.0,
            })
            .sum()
    };
    assert_eq!(settings[2].black_points, black_points("ab800"));
    assert_eq!(settings[0].black_points, black_points("ab200"));

    let out = dir.path().join("price");
    let report = price_report(&[&odds, &even], &out, 0.95).unwrap();
    assert_eq!(report.fit.games, 36);
    for f in ["price.json", "price.csv", "price.svg"] {
        assert!(out.join(f).exists(), "{f}");
    }
    let csv = std::fs::read_to_string(out.join("price.csv")).unwrap();
    assert_eq!(csv.lines().filter(|l| l.starts_with("setting,")).count(), 3, "{csv}");
    assert!(csv.lines().any(|l| l.starts_with("price_ratio,")), "{csv}");

    // The committed table alone gives the same fit: the games matter only by their counts.
    let again = price_report(&[&out.join("price.csv")], &dir.path().join("again"), 0.95).unwrap();
    assert_eq!(again.settings, report.settings);
    assert!((again.fit.b0 - report.fit.b0).abs() < 1e-9 && (again.fit.b1 - report.fit.b1).abs() < 1e-9, "{:?} against {:?}", again.fit, report.fit);
    assert_eq!((again.unit.as_str(), again.start_sfen.as_str()), (report.unit.as_str(), report.start_sfen.as_str()));
}

#[test]
fn a_player_without_a_budget_ratio_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("depth");
    play(&m, "alphabeta,depth=1,name=d1", "alphabeta,nodes=50,name=n50", 1, 3);
    let e = games_of_matches(&[&m]).unwrap_err().to_string();
    assert!(e.contains("d1") && e.contains("nodes=N"), "{e}");
}
