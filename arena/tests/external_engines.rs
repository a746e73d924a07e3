//! Short matches in standard shogi against real third-party engines from Debian
//! (Fairy-Stockfish and GPSShogi, installed by scripts/install-engines.sh): every move
//! they send is checked by our rules engine (the records replay), results and records
//! are written, and cshogi reads the KIF and CSA files back to the same moves.

use arena::runner::JobResult;
use arena::tournament::{read_results, run, Mode, OpeningsConfig, TournamentConfig};
use rules::Variant;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn install_engines() {
    let out = Command::new("bash").arg(root().join("scripts/install-engines.sh")).output().expect("bash");
    assert!(out.status.success(), "scripts/install-engines.sh failed: {}", String::from_utf8_lossy(&out.stderr));
    for bin in ["/usr/games/fairy-stockfish", "/usr/games/gpsusi"] {
        assert!(Path::new(bin).exists(), "{bin} is missing after scripts/install-engines.sh");
    }
}

fn cshogi_python() -> PathBuf {
    let out = Command::new("bash").arg(root().join("scripts/install-cshogi.sh")).output().expect("bash");
    assert!(out.status.success(), "installing cshogi failed: {}", String::from_utf8_lossy(&out.stderr));
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn tiny_model(variant: &'static Variant, dir: &Path) {
    neteval::save_random_model(variant, dir, 1, 8, 11).unwrap();
}

fn gauntlet(players: Vec<String>, out: &Path) -> TournamentConfig {
    let mut c = TournamentConfig::new(players);
    c.variant = "shogi".into();
    c.mode = Mode::Gauntlet;
    c.rounds = 1;
    c.threads = 2;
    c.games_in_flight = 2;
    c.max_plies = 60;
    c.openings = OpeningsConfig { file: None, starts: Vec::new(), random_plies: 2 };
    c.out_dir = out.to_path_buf();
    c
}

/// Every game replays in our rules engine; every game has its KIF and CSA file, and
/// cshogi reads both back to the same moves.
fn check(results: &[JobResult], out: &Path) {
    let v = Variant::builtin("shogi").unwrap();
    let mut files = Vec::new();
    for r in results {
        let h = &r.hands[0];
        h.record.to_game(v).unwrap_or_else(|e| panic!("game {} does not replay: {e}", r.job.id));
        assert!(!h.record.moves.is_empty());
        for ext in ["kifu", "csa"] {
            let f = out.join("games").join(format!("{:06}-1.{ext}", r.job.id));
            assert!(f.exists(), "{}", f.display());
            files.push((f, h.record.moves.clone()));
        }
    }
    let python = cshogi_python();
    let script = root().join("gamerecords/tests/read_records.py");
    let paths: Vec<&PathBuf> = files.iter().map(|(f, _)| f).collect();
    let read = Command::new(python).arg(script).args(&paths).output().unwrap();
    assert!(read.status.success(), "{}", String::from_utf8_lossy(&read.stdout));
    let text = String::from_utf8_lossy(&read.stdout);
    for ((f, moves), line) in files.iter().zip(text.lines()) {
        let parsed: Value = serde_json::from_str(line).unwrap();
        let got: Vec<String> = parsed["moves"].as_array().unwrap().iter().map(|m| m.as_str().unwrap().to_string()).collect();
        assert_eq!(&got, moves, "{}", f.display());
    }
}

#[test]
fn our_players_against_fairy_stockfish() {
    install_engines();
    let dir = tempfile::tempdir().unwrap();
    let model_dir = dir.path().join("gen-0001");
    tiny_model(Variant::builtin("shogi").unwrap(), &model_dir);
    let out = dir.path().join("t");
    let players = vec![
        "usi:/usr/games/fairy-stockfish,nodes=300,option.Threads=1,name=fsf-300".to_string(),
        format!("checkpoint:{},sims=8,name=tiny", model_dir.display()),
        "alphabeta,depth=1".to_string(),
    ];
    let report = run(&gauntlet(players, &out), false).unwrap();
    assert_eq!(report.games, 4);
    let results = read_results(&out.join("results.jsonl")).unwrap();
    assert!(results.iter().all(|r| r.hands[0].incident.is_none()), "no engine failure expected");
    check(&results, &out);
    assert!(out.join("ratings.csv").exists() && out.join("summary.json").exists());
}

#[test]
fn our_players_against_gpsshogi() {
    install_engines();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t");
    // gpsusi honours only time controls (`go nodes` aborts it); LimitDepth 4 keeps a
    // move near 0.1 s, inside byoyomi. Its wrapper gives it a private OSL_HOME.
    let gps = format!("usi:{},arg=-N,arg=1,option.LimitDepth=4,time=0,byoyomi=1000,name=gpsshogi", root().join("scripts/gpsusi.sh").display());
    let mut c = gauntlet(vec![gps, "alphabeta,depth=1".to_string()], &out);
    c.mode = Mode::Match;
    c.max_plies = 40;
    run(&c, false).unwrap();
    let results = read_results(&out.join("results.jsonl")).unwrap();
    assert_eq!(results.len(), 2);
    assert!(results.iter().all(|r| r.hands[0].incident.is_none()), "{:?}", results.iter().map(|r| &r.hands[0].incident).collect::<Vec<_>>());
    check(&results, &out);
}
