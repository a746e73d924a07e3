//! Tournaments and studies handed to `copper worker` processes through a store give the
//! games, and so the counts, of one process (dispatch/src/lib.rs).
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Child, Command, Stdio};

fn copper(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_copper")).args(args).env_remove("COPPER_STORE").output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

/// Worker processes, killed when the test ends however it ends.
struct Workers(Vec<Child>);

impl Drop for Workers {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn workers(store: &str, work: &Path) -> Workers {
    Workers(
        ["w1", "w2"]
            .iter()
            .map(|id| {
                Command::new(env!("CARGO_BIN_EXE_copper"))
                    .args(["worker", "--jobs-only", "--quiet", "--poll-seconds", "0.05", "--store", store, "--id", id, "--work-dir", work.to_str().unwrap()])
                    .env_remove("COPPER_STORE")
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .unwrap()
            })
            .collect(),
    )
}

/// Each game of a `results.jsonl` by id: its players, score and moves (not its timings).
fn games(dir: &Path) -> BTreeMap<u64, (String, String, String, String)> {
    let text = std::fs::read_to_string(dir.join("results.jsonl")).unwrap();
    text.lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let moves: Vec<String> = v["hands"].as_array().unwrap().iter().map(|h| h["record"]["moves"].to_string()).collect();
            (v["job"]["id"].as_u64().unwrap(), (v["first"].to_string(), v["second"].to_string(), v["first_score"].to_string(), moves.join(";")))
        })
        .collect()
}

/// Wins, draws and losses per player.
fn counts(games: &BTreeMap<u64, (String, String, String, String)>) -> BTreeMap<String, [u32; 3]> {
    let mut c: BTreeMap<String, [u32; 3]> = BTreeMap::new();
    for (first, second, score, _) in games.values() {
        let s: f64 = score.parse().unwrap();
        let k = if s == 1.0 {
            0
        } else if s == 0.5 {
            1
        } else {
            2
        };
        c.entry(first.clone()).or_default()[k] += 1;
        c.entry(second.clone()).or_default()[2 - k] += 1;
    }
    c
}

#[test]
fn an_arena_tournament_on_two_workers_gives_the_counts_of_one_process() {
    let dir = tempfile::tempdir().unwrap();
    let (local, remote) = (dir.path().join("local"), dir.path().join("remote"));
    let store = format!("file://{}", dir.path().join("store").display());
    let args = |out: &Path| -> Vec<String> {
        "arena --quiet -v minishogi -p random,name=rnd -p greedy,name=grd -p alphabeta,depth=1,name=ab --mode round-robin --rounds 3 --threads 1 --games-in-flight 1 --max-plies 80 --out"
            .split(' ')
            .map(String::from)
            .chain([out.display().to_string()])
            .collect()
    };
    let a = args(&local);
    let (ok, one_table, err) = copper(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(ok, "{err}");
    let _workers = workers(&store, &dir.path().join("work"));
    let mut b = args(&remote);
    b.extend(["--store".into(), store.clone(), "--poll-seconds".into(), "0.05".into()]);
    let (ok, two_table, err) = copper(&b.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(ok, "{err}");
    let (one, two) = (games(&local), games(&remote));
    assert_eq!(one.len(), 18);
    assert_eq!(one, two, "the same game for every job id");
    assert_eq!(counts(&one), counts(&two));
    // The table (scores, Elo) is the same too, but for the output directory it names.
    assert_eq!(one_table.replace(local.to_str().unwrap(), "OUT"), two_table.replace(remote.to_str().unwrap(), "OUT"));
    // A second coordinator with the same command finds every result in place.
    std::fs::remove_dir_all(&remote).unwrap();
    drop(_workers);
    let (ok, _, err) = copper(&b.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(ok, "{err}");
    assert_eq!(games(&remote), one, "rebuilt from the store's results, no worker needed");
}

#[test]
fn a_balance_study_on_two_workers_gives_the_counts_of_one_process() {
    let dir = tempfile::tempdir().unwrap();
    let (local, remote) = (dir.path().join("local"), dir.path().join("remote"));
    let store = format!("file://{}", dir.path().join("store").display());
    let args = |out: &Path| -> Vec<String> {
        "balance --quiet --tier greedy,name=g --tier random,name=r --starts seed,no-copper --games 3 --opening-plies 2 --max-plies 60 --threads 1 --games-in-flight 1 --out"
            .split(' ')
            .map(String::from)
            .chain([out.display().to_string()])
            .collect()
    };
    let a = args(&local);
    let (ok, _, err) = copper(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(ok, "{err}");
    let _workers = workers(&store, &dir.path().join("work"));
    let mut b = args(&remote);
    b.extend(["--store".into(), store, "--poll-seconds".into(), "0.05".into()]);
    let (ok, _, err) = copper(&b.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(ok, "{err}");
    let (one, two) = (games(&local), games(&remote));
    assert_eq!(one.len(), 12);
    assert_eq!(one, two, "the same game for every job id");
    assert_eq!(counts(&one), counts(&two));
    let summary = |d: &Path| -> serde_json::Value { serde_json::from_str(&std::fs::read_to_string(d.join("summary.json")).unwrap()).unwrap() };
    assert_eq!(summary(&local)["cells"], summary(&remote)["cells"], "the same table");
}
