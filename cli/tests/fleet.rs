//! The fleet as users run it: one trainer and three worker processes on one run, over a
//! real S3-compatible server (Garage on 127.0.0.1, installed by scripts/install-garage.sh)
//! and over a local directory, with a worker and the trainer SIGKILLed mid-work.

use records::run_dir::{keys, ModelManifest, StepManifest};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const GENERATIONS: u32 = 3;
const GAMES: u64 = 24;

/// A one-node Garage server with a bucket `copper` and a key that may use it.
struct Garage {
    child: Child,
    _dir: tempfile::TempDir,
    port: u16,
}

const KEY_ID: &str = "GK00000000000000000000c0ff";
const SECRET: &str = "00000000000000000000000000000000000000000000000000000000000c0ffe";

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn garage_binary() -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.tools/bin/garage");
    assert!(p.exists(), "{} is missing: run scripts/install-garage.sh (scripts/test.sh does)", p.display());
    p
}

impl Garage {
    fn start() -> Garage {
        let dir = tempfile::tempdir().unwrap();
        let (s3, rpc) = (free_port(), free_port());
        let config = dir.path().join("garage.toml");
        std::fs::write(
            &config,
            format!(
                "metadata_dir = \"{d}/meta\"\ndata_dir = \"{d}/data\"\ndb_engine = \"sqlite\"\nreplication_factor = 1\n\
                 rpc_bind_addr = \"127.0.0.1:{rpc}\"\nrpc_public_addr = \"127.0.0.1:{rpc}\"\n\
                 rpc_secret = \"{secret}\"\n[s3_api]\ns3_region = \"garage\"\napi_bind_addr = \"127.0.0.1:{s3}\"\n",
                d = dir.path().display(),
                secret = "1".repeat(64)
            ),
        )
        .unwrap();
        let log = std::fs::File::create(dir.path().join("server.log")).unwrap();
        let child = Command::new(garage_binary()).arg("-c").arg(&config).arg("server").stdout(log.try_clone().unwrap()).stderr(log).spawn().unwrap();
        let garage = |args: &[&str]| -> String {
            let out = Command::new(garage_binary()).arg("-c").arg(&config).args(args).output().unwrap();
            assert!(out.status.success(), "garage {args:?}: {}", String::from_utf8_lossy(&out.stderr));
            String::from_utf8_lossy(&out.stdout).into_owned()
        };
        let t = Instant::now();
        let node = loop {
            let out = Command::new(garage_binary()).arg("-c").arg(&config).args(["node", "id", "-q"]).output().unwrap();
            if out.status.success() {
                break String::from_utf8_lossy(&out.stdout).split('@').next().unwrap().trim().to_string();
            }
            assert!(t.elapsed() < Duration::from_secs(120), "garage did not start: {}", String::from_utf8_lossy(&out.stderr));
            std::thread::sleep(Duration::from_millis(200));
        };
        garage(&["layout", "assign", "-z", "dc1", "-c", "1G", &node]);
        garage(&["layout", "apply", "--version", "1"]);
        garage(&["bucket", "create", "copper"]);
        garage(&["key", "import", "--yes", "-n", "copper", KEY_ID, SECRET]);
        garage(&["bucket", "allow", "--read", "--write", "--owner", "copper", "--key", "copper"]);
        Garage { child, _dir: dir, port: s3 }
    }

    fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ACCESS_KEY_ID", KEY_ID.into()),
            ("AWS_SECRET_ACCESS_KEY", SECRET.into()),
            ("AWS_REGION", "garage".into()),
            ("AWS_ENDPOINT_URL", format!("http://127.0.0.1:{}", self.port)),
        ]
    }
}

impl Drop for Garage {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The quick preset, small: three generations of 24 games.
fn config(dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/quick.toml")).unwrap();
    let mut cfg: toml::Table = toml::from_str(&text).unwrap();
    cfg["generations"] = (GENERATIONS as i64).into();
    cfg["threads"] = 1.into();
    cfg["selfplay"]["games"] = (GAMES as i64).into();
    // What this test counts on is the loop's roles, not the preset's teacher stage or
    // its leaf mix: without them each generation is a few seconds.
    cfg.remove("teacher");
    cfg["selfplay"]["qmix"] = 0.0.into();
    cfg["selfplay"]["games_in_flight"] = 4.into();
    cfg["training"]["steps_per_generation"] = 60.into();
    cfg["training"]["checkpoint_every"] = 10.into();
    for k in ["previous_pairs", "uniform_pairs", "anchor_pairs"] {
        cfg["evaluation"][k] = 1.into();
    }
    let path = dir.join("run.toml");
    std::fs::write(&path, toml::to_string(&cfg).unwrap()).unwrap();
    path
}

struct Fleet<'a> {
    url: String,
    env: Vec<(&'static str, String)>,
    work: &'a Path,
}

impl Fleet<'_> {
    fn copper(&self, args: &[&str], id: &str, work: &str) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_copper"));
        c.args(args).args(["--store", &self.url, "--id", id, "--poll-seconds", "0.1", "--quiet"]).arg("--work-dir").arg(self.work.join(work));
        c.envs(self.env.iter().map(|(k, v)| (*k, v.as_str())));
        c.stdout(Stdio::piped()).stderr(Stdio::piped());
        c
    }
    fn worker(&self, id: &str) -> Child {
        self.copper(&["worker", "--threads", "1"], id, id).spawn().unwrap()
    }
    fn trainer(&self, id: &str, config: &Path, work: &str) -> Child {
        self.copper(&["trainer", "--settle-seconds", "0.5", "--lease-seconds", "30", "--config", config.to_str().unwrap()], id, work).spawn().unwrap()
    }
    fn store(&self) -> store::Store {
        for (k, v) in &self.env {
            std::env::set_var(k, v);
        }
        store::Store::open(&self.url).unwrap()
    }
}

fn wait_until(what: &str, mut ready: impl FnMut() -> bool, children: &mut [&mut Child]) {
    let t = Instant::now();
    while !ready() {
        for c in children.iter_mut() {
            if let Some(status) = c.try_wait().unwrap() {
                let mut err = String::new();
                std::io::Read::read_to_string(c.stderr.as_mut().unwrap(), &mut err).unwrap();
                panic!("a process exited ({status}) while waiting for {what}: {err}");
            }
        }
        assert!(t.elapsed() < Duration::from_secs(600), "{what} never happened");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn finish(child: Child, what: &str) -> String {
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{what} failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn kill(mut child: Child) {
    child.kill().unwrap(); // SIGKILL: no chance to clean up
    child.wait().unwrap();
}

/// Trainer t1 and workers w1..w3; w1 is killed while uploading its games and restarted,
/// the trainer is killed during generation 2's training and restarted on a fresh work
/// directory (a new machine), and a second trainer loses its claim. Then: every game that
/// finished is in exactly one step manifest (the last generation's late games in at most
/// one), nothing partial was read, and the run completed.
fn a_fleet_run(fleet: &Fleet) {
    let cfg = config(fleet.work);
    let s = fleet.store();
    let games_of = |s: &store::Store, worker: &str| {
        s.list(keys::SELFPLAY).unwrap().iter().filter(|l| keys::parse_game_shard(&l.key).is_some_and(|(_, w, _)| w == worker)).count()
    };
    let mut trainer = fleet.trainer("t1", &cfg, "t1-a");
    let mut w1 = fleet.worker("w1");
    let mut w2 = fleet.worker("w2");
    let mut w3 = fleet.worker("w3");
    // A partial upload as a kill between a game's two puts leaves it: a log line without
    // its shard. It must never be consumed.
    s.put_new("selfplay/gen-0001/w9/game-01000000.json", "{}").unwrap();
    wait_until("w1's second game", || games_of(&s, "w1") >= 2, &mut [&mut trainer, &mut w1, &mut w2, &mut w3]);
    kill(w1);
    let w1 = fleet.worker("w1");
    // A second trainer on the same run loses the claim and stops.
    wait_until("t1's claim", || !s.list(&keys::claims(1)).unwrap().is_empty(), &mut [&mut trainer]);
    let out = fleet.trainer("t2", &cfg, "t2").wait_with_output().unwrap();
    assert!(!out.status.success(), "a second trainer must stop");
    assert!(String::from_utf8_lossy(&out.stderr).contains("held by trainer `t1`"), "{}", String::from_utf8_lossy(&out.stderr));
    // Kill the trainer mid-step: generation 2's games are consumed, its model not out.
    wait_until("generation 2's training", || s.get(&keys::step_manifest(2)).unwrap().is_some(), &mut [&mut trainer]);
    assert!(s.get(&keys::model_manifest(2)).unwrap().is_none(), "the kill must land before generation 2's model");
    kill(trainer);
    let trainer = fleet.trainer("t1", &cfg, "t1-b");
    let out = finish(trainer, "the restarted trainer");
    assert!(out.contains(&format!("gen {GENERATIONS}:")), "{out}");
    for (w, name) in [(w1, "w1"), (w2, "w2"), (w3, "w3")] {
        finish(w, name);
    }

    // Every finished game is consumed exactly once; nothing else is.
    let finished: Vec<String> =
        s.list(keys::SELFPLAY).unwrap().into_iter().map(|l| l.key).filter(|k| keys::parse_game_shard(k).is_some_and(|(g, _, _)| g > 0)).collect();
    let mut uses: BTreeMap<String, u32> = BTreeMap::new();
    for g in 1..=GENERATIONS {
        let m: StepManifest = serde_json::from_slice(&s.get(&keys::step_manifest(g)).unwrap().unwrap()).unwrap();
        assert!(m.games.len() as u64 >= GAMES, "step {g} has {} games", m.games.len());
        assert_eq!(m.trainer, "t1");
        for k in m.games {
            *uses.entry(k).or_default() += 1;
        }
    }
    assert!(uses.values().all(|&n| n == 1), "a game consumed twice: {uses:?}");
    for k in &finished {
        let (g, _, _) = keys::parse_game_shard(k).unwrap();
        assert!(g == GENERATIONS || uses.contains_key(k), "{k} finished but never used");
        // Whole: every stored shard decodes.
        let tmp = fleet.work.join("check.shard");
        std::fs::write(&tmp, s.get(k).unwrap().unwrap()).unwrap();
        records::read_shard(&tmp).unwrap_or_else(|e| panic!("{k}: {e}"));
    }
    assert!(uses.keys().all(|k| finished.contains(k)), "a step consumed a game that is not in the store");
    assert!(!uses.keys().any(|k| k.contains("/w9/")), "a game without a shard was consumed");
    // The published models are whole and the run's reports are there.
    for g in 1..=GENERATIONS {
        let m: ModelManifest = serde_json::from_slice(&s.get(&keys::model_manifest(g)).unwrap().unwrap()).unwrap();
        for f in &m.files {
            let bytes = s.get(&format!("{}/{}", keys::model_dir(g), f.name)).unwrap().unwrap();
            assert_eq!(bytes.len() as u64, f.size, "model {g}: {}", f.name);
        }
        assert!(s.get(&format!("eval/gen-{g:04}.json")).unwrap().is_some(), "generation {g}'s evaluation");
    }
    assert!(s.get("summary.tsv").unwrap().is_some());
    // The ladder reads the same store and writes its table back there.
    let mut ladder = Command::new(env!("CARGO_BIN_EXE_copper"));
    ladder.args(["ladder", "--run", &fleet.url, "--anchor", "random", "--rounds", "1", "--sims", "4", "--threads", "1", "--quiet", "--work-dir"]);
    ladder.arg(fleet.work.join("ladder")).envs(fleet.env.iter().map(|(k, v)| (*k, v.as_str())));
    let out = ladder.output().unwrap();
    assert!(out.status.success(), "ladder: {}", String::from_utf8_lossy(&out.stderr));
    let table = String::from_utf8(s.get("ladder/ladder.tsv").unwrap().expect("the ladder's table in the store").to_vec()).unwrap();
    assert_eq!(table.lines().count(), 1 + GENERATIONS as usize, "a header and one rung per generation: {table}");
}

#[test]
fn a_fleet_on_a_real_s3_server_survives_kills_and_uses_every_game_once() {
    let garage = Garage::start();
    let work = tempfile::tempdir().unwrap();
    a_fleet_run(&Fleet { url: "s3://copper/run".into(), env: garage.env(), work: work.path() });
}

#[test]
fn a_fleet_on_a_local_directory_survives_kills_and_uses_every_game_once() {
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join("run");
    a_fleet_run(&Fleet { url: format!("file://{}", root.display()), env: Vec::new(), work: work.path() });
}
