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
    dir: tempfile::TempDir,
    port: u16,
}

const KEY_ID: &str = "GK00000000000000000000c0ff";
const SECRET: &str = "00000000000000000000000000000000000000000000000000000000000c0ffe";

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Where scripts/install-garage.sh keeps the server (a per-user cache outside the checkout).
fn garage_binary() -> PathBuf {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/install-garage.sh");
    let out = Command::new("bash").arg(&script).arg("--path").output().unwrap();
    assert!(out.status.success(), "{} --path: {}", script.display(), String::from_utf8_lossy(&out.stderr));
    let p = PathBuf::from(String::from_utf8(out.stdout).unwrap().trim());
    assert!(p.exists(), "{} is missing: run scripts/install-garage.sh (scripts/test.sh does)", p.display());
    p
}

impl Garage {
    /// Starts a server, trying again on fresh ports if it exits before it answers (a port
    /// `free_port` handed out can be taken by another test before the server binds it).
    fn start() -> Garage {
        let mut last = String::new();
        for _ in 0..3 {
            match Self::try_start() {
                Ok(g) => return g,
                Err(e) => {
                    eprintln!("garage did not start, trying again on other ports: {e}");
                    last = e;
                }
            }
        }
        panic!("garage did not start three times: {last}")
    }

    fn try_start() -> Result<Garage, String> {
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
        let mut child = Self::serve(dir.path());
        let run = |args: &[&str]| Command::new(garage_binary()).arg("-c").arg(&config).args(args).output().unwrap();
        let server_log = || std::fs::read_to_string(dir.path().join("server.log")).unwrap_or_default();
        // `node id` reads the key on disk; `status` goes over RPC, so once it answers the
        // server is listening and the layout commands below can reach it.
        let t = Instant::now();
        loop {
            let out = run(&["status"]);
            if out.status.success() {
                break;
            }
            if let Some(code) = child.try_wait().unwrap() {
                return Err(format!("server exited ({code}): {}", server_log()));
            }
            if t.elapsed() > Duration::from_secs(120) {
                let _ = child.kill();
                return Err(format!("no answer over RPC in 120 s: {} / {}", String::from_utf8_lossy(&out.stderr), server_log()));
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        let garage = |args: &[&str]| -> String {
            let out = run(args);
            assert!(out.status.success(), "garage {args:?}: {} / server log: {}", String::from_utf8_lossy(&out.stderr), server_log());
            String::from_utf8_lossy(&out.stdout).into_owned()
        };
        let node = garage(&["node", "id", "-q"]).split('@').next().unwrap().trim().to_string();
        garage(&["layout", "assign", "-z", "dc1", "-c", "1G", &node]);
        garage(&["layout", "apply", "--version", "1"]);
        garage(&["bucket", "create", "copper"]);
        garage(&["key", "import", "--yes", "-n", "copper", KEY_ID, SECRET]);
        garage(&["bucket", "allow", "--read", "--write", "--owner", "copper", "--key", "copper"]);
        Ok(Garage { child, dir, port: s3 })
    }

    /// The server process on the configuration and data in `dir`.
    fn serve(dir: &Path) -> Child {
        let log = std::fs::OpenOptions::new().create(true).append(true).open(dir.join("server.log")).unwrap();
        Command::new(garage_binary()).arg("-c").arg(dir.join("garage.toml")).arg("server").stdout(log.try_clone().unwrap()).stderr(log).spawn().unwrap()
    }

    /// Kills the server (its data stays), as a crash or a machine going away would.
    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Starts the server again on the same data and port, and waits until it answers.
    fn restart(&mut self) {
        self.child = Self::serve(self.dir.path());
        let t = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(t.elapsed() < Duration::from_secs(120), "garage did not come back");
            std::thread::sleep(Duration::from_millis(100));
        }
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
    config_with(dir, "run.toml", |_| {})
}

/// The test's run config with `edit` applied, written to `dir/name`.
fn config_with(dir: &Path, name: &str, edit: impl FnOnce(&mut toml::Table)) -> PathBuf {
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
    edit(&mut cfg);
    let path = dir.join(name);
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
        self.trainer_leased(id, config, work, 30.0)
    }
    fn trainer_leased(&self, id: &str, config: &Path, work: &str, lease: f64) -> Child {
        let lease = lease.to_string();
        self.copper(&["trainer", "--settle-seconds", "0.5", "--lease-seconds", &lease, "--config", config.to_str().unwrap()], id, work).spawn().unwrap()
    }
    /// The same server, another run (a prefix of the bucket, or a directory).
    fn another_run(&self, name: &str) -> Fleet<'_> {
        let url = match self.url.strip_prefix("file://") {
            Some(root) => format!("file://{root}-{name}"),
            None => format!("{}-{name}", self.url),
        };
        Fleet { url, env: self.env.clone(), work: self.work }
    }
    fn is_local(&self) -> bool {
        self.url.starts_with("file://")
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

    let uses = every_game_consumed_once(fleet, &s);
    assert!(!uses.keys().any(|k| k.contains("/w9/")), "a game without a shard was consumed");
    // The published models are whole and the run's reports are there.
    published_generations_hold_together(fleet, &s, GENERATIONS);
    assert!(s.get("summary.tsv").unwrap().is_some());
    // What the run no longer needs is gone: checkpoints but the last two.
    assert!(s.list("trainer").unwrap().len() <= 2, "{:?}", s.list("trainer").unwrap());
    // The ladder reads the same store and writes its table back there.
    let mut ladder = Command::new(env!("CARGO_BIN_EXE_copper"));
    ladder.args(["ladder", "--run", &fleet.url, "--anchor", "random", "--rounds", "1", "--sims", "4", "--threads", "1", "--quiet", "--work-dir"]);
    ladder.arg(fleet.work.join("ladder")).envs(fleet.env.iter().map(|(k, v)| (*k, v.as_str())));
    let out = ladder.output().unwrap();
    assert!(out.status.success(), "ladder: {}", String::from_utf8_lossy(&out.stderr));
    let table = String::from_utf8(s.get("ladder/ladder.tsv").unwrap().expect("the ladder's table in the store").to_vec()).unwrap();
    assert_eq!(table.lines().count(), 1 + GENERATIONS as usize, "a header and one rung per generation: {table}");
}

/// Generations 1..=`last` are done and each is one trainer's work: the published model
/// is whole, the checkpoint that made it and its training report are the ones named by its
/// hash, and its evaluation is there.
fn published_generations_hold_together(fleet: &Fleet, s: &store::Store, last: u32) {
    for g in 1..=last {
        let m: ModelManifest = serde_json::from_slice(&s.get(&keys::model_manifest(g)).unwrap().unwrap()).unwrap();
        pipeline::fleet::fetch_model(s, g, &fleet.work.join("check-cache")).unwrap_or_else(|e| panic!("model {g}: {e:#}"));
        // (The trainer keeps the last two generations' checkpoints.)
        if g + 1 >= last {
            assert!(s.get(&keys::checkpoint_after(g, &m.hash)).unwrap().is_some(), "model {g}'s checkpoint");
        }
        assert_eq!(
            s.get(&keys::train_report(g)).unwrap().expect("a training report"),
            s.get(&keys::train_report_of(g, &m.hash)).unwrap().expect("the report under the model's hash"),
            "generation {g}'s report is not its model's"
        );
        assert!(s.get(&keys::eval_report(g)).unwrap().is_some(), "generation {g}'s evaluation");
    }
}

/// Every finished game is in exactly one step manifest (the last generation's late games
/// in at most one), every step by trainer `t1` with its quota, every stored shard whole,
/// and nothing consumed that is not in the store. Returns how often each game was used.
fn every_game_consumed_once(fleet: &Fleet, s: &store::Store) -> BTreeMap<String, u32> {
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
    uses
}

/// The store stops answering for two minutes mid-run (Garage killed, then started again on
/// its data) and the trainer is killed meanwhile: the workers wait it out, and count the
/// wait as idle; the restarted trainer finishes the run; every game is counted once.
fn a_fleet_survives_the_store_stopping(garage: &mut Garage, fleet: &Fleet) {
    const OUTAGE: Duration = Duration::from_secs(120);
    let cfg = config(fleet.work);
    let s = fleet.store();
    let mut trainer = fleet.trainer("t1", &cfg, "outage-t1a");
    let mut w1 = fleet.worker("w1");
    let mut w2 = fleet.worker("w2");
    wait_until("model 1", || s.get(&keys::model_manifest(1)).unwrap().is_some(), &mut [&mut trainer, &mut w1, &mut w2]);
    garage.stop();
    let down = Instant::now();
    // The roles keep trying; none gives up while the store is away.
    std::thread::sleep(OUTAGE / 2);
    kill(trainer);
    std::thread::sleep(OUTAGE.saturating_sub(down.elapsed()));
    for (w, name) in [(&mut w1, "w1"), (&mut w2, "w2")] {
        assert!(w.try_wait().unwrap().is_none(), "{name} gave up during the outage");
    }
    garage.restart();
    let out = finish(fleet.trainer("t1", &cfg, "outage-t1b"), "the trainer restarted after the outage");
    assert!(out.contains(&format!("gen {GENERATIONS}:")), "{out}");
    for (w, name) in [(w1, "w1"), (w2, "w2")] {
        let out = finish(w, name);
        let busy: f64 = out.split("busy ").nth(1).and_then(|r| r.split('%').next()).and_then(|x| x.parse().ok()).unwrap_or_else(|| panic!("{out}"));
        let alive: f64 = out.split("% of ").nth(1).and_then(|r| r.split(' ').next()).and_then(|x| x.parse().ok()).unwrap_or_else(|| panic!("{out}"));
        let idle = (1.0 - busy / 100.0) * alive;
        assert!(idle >= OUTAGE.as_secs_f64() / 2.0, "{name} idled {idle:.0} s through a {} s outage: {out}", OUTAGE.as_secs());
        assert!(out.contains("waiting out outages"), "{name}: {out}");
    }
    every_game_consumed_once(fleet, &s);
}

/// A second trainer refused: it leaves the stored config as it was (whether its own
/// differs in the games count, refused by name, or only in `generations`, refused by the
/// claim), and a second trainer on a fresh run loses generation 0 (the teacher stage) too.
fn second_trainers(fleet: &Fleet) {
    let run = fleet.another_run("second");
    let s = run.store();
    let cfg = config_with(fleet.work, "second.toml", |_| {});
    let mut t1 = run.trainer("t1", &cfg, "second-t1");
    // No worker: t1 holds generation 1 and waits for its games.
    // It claims, then publishes the config.
    wait_until("t1's claim and config", || s.get(keys::CONFIG).unwrap().is_some(), &mut [&mut t1]);
    let stored = s.get(keys::CONFIG).unwrap().unwrap();
    let fewer = config_with(fleet.work, "fewer.toml", |c| c["selfplay"]["games"] = 7.into());
    let out = run.trainer("t2", &fewer, "second-t2").wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("selfplay.games"), "{err}");
    let longer = config_with(fleet.work, "longer.toml", |c| c["generations"] = 9.into());
    let out = run.trainer("t2", &longer, "second-t2").wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("held by trainer `t1`"), "{err}");
    assert_eq!(s.get(keys::CONFIG).unwrap().unwrap(), stored, "a refused trainer rewrote the run's config");
    assert!(t1.try_wait().unwrap().is_none(), "t1 must go on");
    kill(t1);

    // Generation 0: the teacher stage is claimed like any other generation.
    let run = fleet.another_run("zero");
    let s = run.store();
    let teacher = config_with(fleet.work, "teacher.toml", |c| {
        let t: toml::Table = toml::from_str(
            "games = 12\ndepth = 1\ntemperature = 100.0\nmargin = 600\nrandom_plies = 4\nsample_plies = 6\nvalue_share = 1.0\nsteps = 400\nwindow_generations = 1\n",
        )
        .unwrap();
        c.insert("teacher".into(), t.into());
    });
    let mut t1 = run.trainer("t1", &teacher, "zero-t1");
    wait_until("t1's claim on generation 0", || !s.list(&keys::claims(0)).unwrap().is_empty(), &mut [&mut t1]);
    let out = run.trainer("t2", &teacher, "zero-t2").wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("held by trainer `t1`"), "{err}");
    if !run.is_local() {
        assert!(!fleet.work.join("zero-t2/trainer-t2/teacher").exists(), "the refused trainer played a teacher stage");
    }
    kill(t1);
}

/// A stored config is not the operator's: a trainer that goes on with it (no `--config`)
/// starts no teacher or anchor engine its command line did not allow, however the spec is
/// spelled, and `copper ladder` takes no anchor engine from it; a trainer whose
/// `generations` leaves it nothing to train writes nothing and says why.
fn a_stored_config_is_not_trusted(fleet: &Fleet) {
    let run = fleet.another_run("stored-config");
    let s = run.store();
    let marker = fleet.work.join("stored-config-ran");
    let script = fleet.work.join("stored-config-engine.sh");
    std::fs::write(&script, format!("#!/bin/sh\necho \"$@\" >> {}\n", marker.display())).unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let engine = script.display().to_string();
    let teacher = format!(
        "games = 4\nengine = \"usi:{engine}\"\ndepth = 1\ntemperature = 100.0\nmargin = 600\nrandom_plies = 4\nsample_plies = 6\nvalue_share = 1.0\nsteps = 10\nwindow_generations = 1\n"
    );
    type Edit<'a> = Box<dyn Fn(&mut toml::Table) + 'a>;
    let hostile: [(&str, Edit); 4] = [
        ("a teacher", Box::new(|c: &mut toml::Table| _ = c.insert("teacher".into(), toml::from_str::<toml::Table>(&teacher).unwrap().into()))),
        ("an anchor", Box::new(|c: &mut toml::Table| c["evaluation"]["anchor"] = format!("usi:{engine},nodes=1").into())),
        ("a spaced anchor", Box::new(|c: &mut toml::Table| c["evaluation"]["anchor"] = format!(" usi : \"{engine}\" ,nodes=1").into())),
        ("an anchor with options", Box::new(|c: &mut toml::Table| c["evaluation"]["anchor"] = format!("usi:{engine},nodes=1,option.Log=/tmp/x").into())),
    ];
    for (what, edit) in hostile {
        let path = config_with(fleet.work, "stored-config.toml", edit);
        s.put(keys::CONFIG, pipeline::RunConfig::load(&path).unwrap().to_toml()).unwrap();
        let out =
            run.copper(&["trainer", "--settle-seconds", "0.5", "--allow-engine", "/usr/games/fairy-stockfish"], "t1", "stored-config-t1").output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains("does not allow") && err.contains("--allow-engine"), "{what}: {err}");
        assert!(!marker.exists(), "{what}: the stored config started a program");
        // With the engine allowed but not its options, still refused.
        if what.contains("options") {
            let out = run.copper(&["trainer", "--settle-seconds", "0.5", "--allow-engine", &engine], "t1", "stored-config-t1").output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(!out.status.success() && err.contains("only the command line sets how an engine starts"), "{what}: {err}");
            assert!(!marker.exists(), "{what}: the stored config started a program");
        }
    }
    // The ladder without --anchor takes the run's anchor: refused likewise.
    let mut ladder = Command::new(env!("CARGO_BIN_EXE_copper"));
    ladder.args(["ladder", "--run", &run.url, "--rounds", "1", "--threads", "1", "--quiet", "--work-dir"]).arg(fleet.work.join("stored-config-ladder"));
    let out = ladder.envs(run.env.iter().map(|(k, v)| (*k, v.as_str()))).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("evaluation anchor") && err.contains("--allow-engine"), "ladder: {err}");
    assert!(!marker.exists(), "the ladder started the run's anchor");

    // Fewer generations than the run has evaluated: nothing to train, nothing written.
    let three = config_with(fleet.work, "stored-three.toml", |c| c["generations"] = 3.into());
    let stored = pipeline::RunConfig::load(&three).unwrap().to_toml();
    s.put(keys::CONFIG, stored.clone()).unwrap();
    s.put(&keys::eval_report(1), "{}").unwrap();
    let one = config_with(fleet.work, "stored-one.toml", |c| c["generations"] = 1.into());
    let out = run.trainer("t2", &one, "stored-config-t2").wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("nothing to train"), "{err}");
    assert_eq!(String::from_utf8(s.get(keys::CONFIG).unwrap().unwrap().to_vec()).unwrap(), stored, "a trainer with nothing to train rewrote the config");
    assert!(s.list(&keys::claims(1)).unwrap().is_empty(), "a trainer with nothing to train claimed a generation");
}

/// A trainer killed after it published generation 1's model but before its evaluation,
/// restarted on an empty work directory: it evaluates and goes on from the published
/// model, never a retrained one; and a model altered in the store is refused on fetch.
///
/// A one-thread retrain reproduces a model bit for bit, so the published model here is
/// one the trainer cannot remake: the last model of the `ahead` run (played by
/// `workers_that_never_idle`, another config), with its checkpoint and report, put in
/// place of generation 1's.
fn restart_after_publishing(fleet: &Fleet) {
    let run = fleet.another_run("published");
    let s = run.store();
    let cfg = config_with(fleet.work, "published.toml", |c| c["generations"] = 2.into());
    let mut t = run.trainer("t1", &cfg, "published-a");
    let mut w = run.worker("w1");
    wait_until("generation 1's evaluation", || s.get(&keys::eval_report(1)).unwrap().is_some(), &mut [&mut t, &mut w]);
    kill(t);
    // As if killed before the evaluation: the model is out, its evaluation is not.
    s.delete(&keys::eval_report(1)).unwrap();
    let ahead = fleet.another_run("ahead").store();
    let theirs: ModelManifest = serde_json::from_slice(&ahead.get(&keys::model_manifest(GENERATIONS)).unwrap().expect("the ahead run's last model")).unwrap();
    let published = ModelManifest { generation: 1, trainer: "t1".into(), dir: keys::model_dir_of(1, &theirs.hash), ..theirs.clone() };
    for f in &theirs.files {
        s.put(&format!("{}/{}", published.dir, f.name), ahead.get(&format!("{}/{}", theirs.dir, f.name)).unwrap().unwrap()).unwrap();
    }
    s.put(&keys::checkpoint_after(1, &theirs.hash), ahead.get(&keys::checkpoint_after(GENERATIONS, &theirs.hash)).unwrap().unwrap()).unwrap();
    let report = ahead.get(&keys::train_report(GENERATIONS)).unwrap().unwrap();
    s.put(&keys::train_report_of(1, &theirs.hash), report.clone()).unwrap();
    s.put(&keys::train_report(1), report).unwrap();
    s.put(&keys::model_manifest(1), serde_json::to_vec(&published).unwrap()).unwrap();
    let out = finish(run.trainer("t1", &cfg, "published-b"), "the restarted trainer");
    assert!(out.contains("gen 2:"), "{out}");
    finish(w, "w1");
    let local = fleet.work.join("published-b/trainer-t1");
    let mut parts: Vec<Vec<u8>> = Vec::new();
    for f in &published.files {
        parts.push(f.name.as_bytes().to_vec());
        parts.push(std::fs::read(local.join("models/gen-0001").join(&f.name)).unwrap());
    }
    assert_eq!(
        records::run_dir::content_hash(parts.iter().map(|p| p.as_slice())),
        published.hash,
        "the restarted trainer evaluated another model than the published one"
    );
    assert!(s.get(&keys::eval_report(1)).unwrap().is_some() && s.get(&keys::eval_report(2)).unwrap().is_some());

    // A byte of a published model changed in the store: refused, naming the model.
    let m2: ModelManifest = serde_json::from_slice(&s.get(&keys::model_manifest(2)).unwrap().unwrap()).unwrap();
    let key = format!("{}/{}", m2.dir, "model.json");
    let mut bytes = s.get(&key).unwrap().unwrap().to_vec();
    let last = bytes.len() - 2;
    bytes[last] ^= 1;
    s.put(&key, bytes).unwrap();
    let e = pipeline::fleet::fetch_model(&s, 2, &fleet.work.join("fetch-cache")).unwrap_err();
    assert!(format!("{e:#}").contains("damaged"), "{e:#}");
}

/// Where a trainer is paused past its lease: before its step manifest, while it trains,
/// once its model's files are out (its manifest being decided), once its model is
/// published (while it evaluates).
#[derive(Clone, Copy, Debug)]
enum Pause {
    BeforeStep,
    Training,
    Publishing,
    Evaluating,
}

/// A trainer paused past its lease at `when` is replaced; resumed, it stops or finishes
/// what it began, and nothing it writes changes what the other published: every
/// generation is one trainer's work (model whole, its checkpoint and report), every game
/// consumed once, and the replacement finishes the run.
fn a_paused_trainer(fleet: &Fleet, when: Pause) {
    let run = fleet.another_run(&format!("paused-{when:?}").to_lowercase());
    let s = run.store();
    let cfg = config_with(fleet.work, "paused.toml", |c| c["generations"] = 2.into());
    let work = |t: &str| format!("paused-{when:?}-{t}");
    let mut t1 = run.trainer_leased("t1", &cfg, &work("t1"), 2.0);
    let mut w = run.worker("w1");
    let published_files = |s: &store::Store| s.list(keys::MODELS).unwrap().iter().any(|l| l.key.starts_with(&format!("{}.by/", keys::model_dir(1))));
    match when {
        // Claimed, then the config out: t1 waits for generation 1's games.
        Pause::BeforeStep => wait_until("t1's config", || s.get(keys::CONFIG).unwrap().is_some(), &mut [&mut t1]),
        Pause::Training => wait_until("t1's step manifest", || s.get(&keys::step_manifest(1)).unwrap().is_some(), &mut [&mut t1, &mut w]),
        // On a server that overwrites, once t1's candidate manifest is out: t1 is then
        // settling before it reads which candidate won.
        Pause::Publishing if run.is_local() => wait_until("t1's model files", || published_files(&s), &mut [&mut t1, &mut w]),
        Pause::Publishing => {
            wait_until("t1's candidate manifest", || !s.list(&format!("{}.cand", keys::model_manifest(1))).unwrap().is_empty(), &mut [&mut t1, &mut w])
        }
        Pause::Evaluating => wait_until("t1's model", || s.get(&keys::model_manifest(1)).unwrap().is_some(), &mut [&mut t1, &mut w]),
    }
    let signal = |sig: &str, child: &Child| assert!(Command::new("kill").args([sig, &child.id().to_string()]).status().unwrap().success());
    signal("-STOP", &t1);
    std::thread::sleep(Duration::from_secs(3));
    let mut t2 = run.trainer_leased("t2", &cfg, &work("t2"), 2.0);
    wait_until("t2's generation 1", || s.get(&keys::eval_report(1)).unwrap().is_some() && s.list(&keys::claims(2)).unwrap().len() == 1, &mut [&mut t2, &mut w]);
    signal("-CONT", &t1);
    let out = t1.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() || err.contains("lost generation 1") || err.contains("is held by trainer `t2`"), "{when:?}: {err}");
    let out = finish(t2, "t2");
    assert!(out.contains("gen 2:"), "{when:?}: {out}");
    finish(w, "w1");
    published_generations_hold_together(fleet, &s, 2);
    let mut consumed: BTreeMap<String, u32> = BTreeMap::new();
    for g in 1..=2 {
        let m: StepManifest = serde_json::from_slice(&s.get(&keys::step_manifest(g)).unwrap().unwrap()).unwrap();
        for k in m.games {
            *consumed.entry(k).or_default() += 1;
        }
    }
    assert!(consumed.values().all(|&n| n == 1), "{when:?}: a game consumed twice");
    let step2: StepManifest = serde_json::from_slice(&s.get(&keys::step_manifest(2)).unwrap().unwrap()).unwrap();
    assert_eq!(step2.trainer, "t2", "{when:?}: the replaced trainer went on");
    if matches!(when, Pause::Publishing) && !run.is_local() {
        // t1's manifest was first: t2 went on from t1's model, not its own.
        let m1: ModelManifest = serde_json::from_slice(&s.get(&keys::model_manifest(1)).unwrap().unwrap()).unwrap();
        assert_eq!(m1.trainer, "t1");
    }
}

/// A trainer killed and restarted within its lease keeps its place: its claim is not
/// rewritten with a later time (on a server that overwrites, that would put it behind a
/// contender that lost to it and has gone).
fn a_restarted_trainer_keeps_its_place(fleet: &Fleet) {
    let run = fleet.another_run("keeps-place");
    let s = run.store();
    let cfg = config_with(fleet.work, "keeps-place.toml", |c| c["generations"] = 1.into());
    let mut t1 = run.trainer("t1", &cfg, "keeps-place-t1a");
    wait_until("t1's config", || s.get(keys::CONFIG).unwrap().is_some(), &mut [&mut t1]);
    let out = run.trainer("t2", &cfg, "keeps-place-t2").wait_with_output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("held by trainer `t1`"), "{}", String::from_utf8_lossy(&out.stderr));
    let claimed = s.modified(&format!("{}/t1", keys::claims(1))).unwrap().unwrap();
    kill(t1);
    let w = run.worker("w1");
    let out = finish(run.trainer("t1", &cfg, "keeps-place-t1b"), "t1 restarted within its lease");
    assert!(out.contains("gen 1:"), "{out}");
    finish(w, "w1");
    assert_eq!(s.modified(&format!("{}/t1", keys::claims(1))).unwrap().unwrap(), claimed, "the restarted trainer rewrote its claim");
}

/// A step manifest naming a path outside the run is refused, and nothing is written there.
fn a_hostile_step_manifest(fleet: &Fleet) {
    let run = fleet.another_run("hostile");
    let s = run.store();
    let cfg = config_with(fleet.work, "hostile.toml", |_| {});
    let outside = fleet.work.join("outside.shard");
    for key in [outside.display().to_string(), "selfplay/gen-0001/w1/../../../../outside.shard".into()] {
        let m = StepManifest { generation: 1, trainer: "t0".into(), games: vec![key.clone()], deferred: 0 };
        s.put(&keys::step_manifest(1), serde_json::to_vec(&m).unwrap()).unwrap();
        let out = run.trainer("t1", &cfg, "hostile-t1").wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains("is not a game's shard key"), "{key}: {err}");
        assert!(!outside.exists());
    }
}

/// The poll intervals a worker slept waiting for the trainer, from its closing line.
fn waits_for_trainer(out: &str) -> u64 {
    out.split(" waits for the trainer").next().and_then(|r| r.rsplit(' ').next()).and_then(|x| x.parse().ok()).unwrap_or_else(|| panic!("{out}"))
}

/// With `fleet.play_ahead`, workers play on while the trainer trains and evaluates: none
/// ever waits for the trainer, the extra games consumed by the next steps exactly once.
/// (Counted in polls, not as a share of the wall time: that share is the machine's load.)
fn workers_that_never_idle(fleet: &Fleet) {
    let run = fleet.another_run("ahead");
    let s = run.store();
    let cfg = config_with(fleet.work, "ahead.toml", |c| {
        c.insert("fleet".into(), toml::from_str::<toml::Table>("play_ahead = true\nmax_game_lag = 1\n").unwrap().into());
    });
    let trainer = run.trainer("t1", &cfg, "ahead-t1");
    let workers: Vec<(String, Child)> = ["w1", "w2", "w3"].iter().map(|w| (w.to_string(), run.worker(w))).collect();
    let trainer_out = finish(trainer, "the trainer");
    let mut consumed: BTreeMap<String, u32> = BTreeMap::new();
    for g in 1..=GENERATIONS {
        let m: StepManifest = serde_json::from_slice(&s.get(&keys::step_manifest(g)).unwrap().unwrap()).unwrap();
        assert!(m.games.len() as u64 >= GAMES);
        assert!(m.games.len() as u64 <= 4 * GAMES, "step {g} took {} games: over its cap", m.games.len());
        for k in m.games {
            let (kg, _, _) = keys::parse_game_shard(&k).unwrap();
            assert!(kg + 1 >= g && kg <= g, "step {g} consumed {k}, older than fleet.max_game_lag allows");
            *consumed.entry(k).or_default() += 1;
        }
    }
    assert!(consumed.values().all(|&n| n == 1), "a game consumed twice");
    // The trainer's requests grow with the games it consumes, not with the run's history:
    // two GETs a game (its line and its shard) and a fixed few a generation (manifests,
    // the model's files, reports); its listings are the polls while it waits for games.
    let count = |what: &str| -> u64 {
        let line = trainer_out.lines().find(|l| l.contains("store:")).unwrap_or_else(|| panic!("{trainer_out}"));
        line.split(&format!(" {what}")).next().and_then(|r| r.rsplit([' ', '(']).next()).and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("{line}"))
    };
    let (gets, puts) = (count("gets"), count("puts"));
    let games = consumed.len() as u64;
    println!("trainer: {gets} GETs, {puts} PUTs for {games} games over {GENERATIONS} generations");
    assert!(gets <= 2 * games + 40 * GENERATIONS as u64, "{gets} GETs for {games} games: {trainer_out}");
    assert!(puts <= 60 * GENERATIONS as u64, "{puts} PUTs over {GENERATIONS} generations: {trainer_out}");
    let mut played_ahead = 0;
    for (w, child) in workers {
        let out = finish(child, &w);
        assert_eq!(waits_for_trainer(&out), 0, "{w} waited for the trainer: {out}");
        played_ahead += out.split(" games").next().and_then(|r| r.rsplit(' ').next()).and_then(|x| x.parse::<u64>().ok()).unwrap();
    }
    assert!(played_ahead > GAMES * GENERATIONS as u64, "the workers played no more than the quotas ({played_ahead})");
}

/// The scale test: one trainer and 16 one-thread workers playing ahead, a round-robin
/// and a balance study handed to the same workers, a worker and the trainer killed at
/// random points (the seed is printed): every finished game counted once, every model
/// whole, the tournament's and the study's games all played once, no worker waiting for the trainer.
fn sixteen_workers(fleet: &Fleet) {
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos() as u64;
    let mut rng = seed;
    let mut draw = |n: u64| {
        rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (rng >> 33) % n
    };
    println!("sixteen_workers: seed {seed}");
    let run = fleet.another_run("scale");
    let s = run.store();
    let cfg = config_with(fleet.work, "scale.toml", |c| {
        c["selfplay"]["games"] = 48.into();
        c.insert("fleet".into(), toml::from_str::<toml::Table>("play_ahead = true\nmax_game_lag = 2\n").unwrap().into());
    });
    let mut trainer = run.trainer("t1", &cfg, "scale-t1");
    let mut workers: Vec<(String, Child)> = (1..=16).map(|i| format!("w{i:02}")).map(|id| (id.clone(), run.worker(&id))).collect();
    let coordinator = |args: &str, out: &Path| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_copper"));
        c.args(args.split(' ')).arg("--out").arg(out).args(["--store", &run.url, "--poll-seconds", "0.1"]);
        c.envs(run.env.iter().map(|(k, v)| (*k, v.as_str()))).stdout(Stdio::piped()).stderr(Stdio::piped());
        c.spawn().unwrap()
    };
    let arena_out = fleet.work.join("scale-arena");
    let study_out = fleet.work.join("scale-study");
    let arena = coordinator(
        "arena --quiet -v minishogi -p random,name=rnd -p greedy,name=grd -p alphabeta,depth=1,name=ab --mode round-robin --rounds 3 --threads 1 --games-in-flight 1 --max-plies 80",
        &arena_out,
    );
    let study = coordinator(
        "balance --quiet --tier greedy,name=g --tier random,name=r --starts seed,no-copper --games 3 --opening-plies 2 --max-plies 60 --threads 1 --games-in-flight 1",
        &study_out,
    );
    // A worker killed once it has uploaded a game or a few, and started again.
    let victim = draw(16) as usize;
    let (id, _) = &workers[victim];
    let id = id.clone();
    let after = 1 + draw(4) as usize;
    let games_of = |w: &str| s.list(keys::SELFPLAY).unwrap().iter().filter(|l| keys::parse_game_shard(&l.key).is_some_and(|(_, x, _)| x == w)).count();
    wait_until(&format!("{id}'s games (seed {seed})"), || games_of(&id) >= after, &mut [&mut trainer]);
    let (_, child) = workers.remove(victim);
    kill(child);
    workers.push((id.clone(), run.worker(&id)));
    // The trainer killed at a random point of generation 2, restarted on a fresh machine.
    wait_until(&format!("model 1 (seed {seed})"), || s.get(&keys::model_manifest(1)).unwrap().is_some(), &mut [&mut trainer]);
    std::thread::sleep(Duration::from_millis(draw(4000)));
    kill(trainer);
    let out = finish(run.trainer("t1", &cfg, "scale-t1b"), &format!("the restarted trainer (seed {seed})"));
    assert!(out.contains(&format!("gen {GENERATIONS}:")), "{out}");
    finish(arena, "the round-robin");
    finish(study, "the study");
    for (w, child) in workers {
        let out = finish(child, &w);
        assert_eq!(waits_for_trainer(&out), 0, "{w} waited for the trainer (seed {seed}): {out}");
    }
    let mut consumed: BTreeMap<String, u32> = BTreeMap::new();
    let mut deferred = 0;
    for g in 1..=GENERATIONS {
        let m: StepManifest = serde_json::from_slice(&s.get(&keys::step_manifest(g)).unwrap().unwrap()).unwrap();
        // A step's games are capped (`fleet.step_games` × `selfplay.games`, 4 × 48),
        // however many the workers played ahead.
        assert!(m.games.len() <= 4 * 48, "step {g} took {} games (seed {seed})", m.games.len());
        deferred += m.deferred;
        for k in m.games {
            *consumed.entry(k).or_default() += 1;
        }
        pipeline::fleet::fetch_model(&s, g, &fleet.work.join("scale-cache")).unwrap_or_else(|e| panic!("model {g} (seed {seed}): {e:#}"));
    }
    assert!(consumed.values().all(|&n| n == 1), "a game consumed twice (seed {seed})");
    // Every finished game of a trained generation was consumed, or left over the cap of
    // a step (and counted there).
    let mut unused = 0;
    for l in s.list(keys::SELFPLAY).unwrap() {
        if let Some((g, _, _)) = keys::parse_game_shard(&l.key).filter(|(_, w, _)| !w.is_empty()) {
            if g < GENERATIONS && !consumed.contains_key(&l.key) {
                unused += 1;
            }
        }
    }
    assert!(unused <= deferred, "{unused} finished games never used, {deferred} deferred by the steps' cap (seed {seed})");
    let ids = |dir: &Path| -> std::collections::BTreeSet<u64> {
        let text = std::fs::read_to_string(dir.join("results.jsonl")).unwrap();
        let lines: Vec<u64> = text.lines().map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["job"]["id"].as_u64().unwrap()).collect();
        let set: std::collections::BTreeSet<u64> = lines.iter().copied().collect();
        assert_eq!(set.len(), lines.len(), "a game counted twice in {}", dir.display());
        set
    };
    assert_eq!(ids(&arena_out).len(), 18, "the round-robin's games");
    assert_eq!(ids(&study_out).len(), 12, "the study's games");
}

fn restart_paths(fleet: &Fleet) {
    workers_that_never_idle(fleet);
    second_trainers(fleet);
    a_stored_config_is_not_trusted(fleet);
    a_hostile_step_manifest(fleet);
    a_restarted_trainer_keeps_its_place(fleet);
    for when in [Pause::BeforeStep, Pause::Training, Pause::Publishing, Pause::Evaluating] {
        a_paused_trainer(fleet, when);
    }
    restart_after_publishing(fleet);
}

#[test]
fn restart_paths_on_a_real_s3_server() {
    let garage = Garage::start();
    let work = tempfile::tempdir().unwrap();
    restart_paths(&Fleet { url: "s3://copper/run".into(), env: garage.env(), work: work.path() });
}

#[test]
fn sixteen_workers_on_a_real_s3_server() {
    let garage = Garage::start();
    let work = tempfile::tempdir().unwrap();
    sixteen_workers(&Fleet { url: "s3://copper/run".into(), env: garage.env(), work: work.path() });
}

#[test]
fn restart_paths_on_a_local_directory() {
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join("run");
    restart_paths(&Fleet { url: format!("file://{}", root.display()), env: Vec::new(), work: work.path() });
}

#[test]
fn a_fleet_survives_its_s3_server_stopping_for_two_minutes() {
    let mut garage = Garage::start();
    let work = tempfile::tempdir().unwrap();
    let fleet = Fleet { url: "s3://copper/outage".into(), env: garage.env(), work: work.path() };
    a_fleet_survives_the_store_stopping(&mut garage, &fleet);
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
