//! The README's "Your first hour" as a newcomer follows it, on the quick preset: train
//! two generations, write the run's page, then `copper play --model` with the run's last
//! model, choose it in the page's list of opponents in headless Chromium, and play a move
//! against it by clicking. Nothing here depends on wall-clock speed: every wait is for a
//! state, with a generous limit.

#[path = "../../play/tests/common/mod.rs"]
mod common;

use serde_json::Value;
use std::io::BufRead;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const WAIT: Duration = Duration::from_secs(180);

fn wait_for(tab: &mut common::Chromium, what: &str, cond: &str) {
    let t = Instant::now();
    while t.elapsed() < WAIT {
        if tab.eval(&format!("(() => {{ try {{ return ({cond}); }} catch (e) {{ return false; }} }})()")) == Value::Bool(true) {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!(
        "waited {WAIT:?} for {what}; the page says: {}",
        tab.eval("document.getElementById('status').textContent + ' / ' + document.getElementById('error').textContent")
    );
}

fn click(tab: &mut common::Chromium, selector: &str) {
    let sel = serde_json::to_string(selector).unwrap();
    let at = tab.eval(&format!(
        "(() => {{ const e = document.querySelector({sel}); if (!e) return null; e.scrollIntoView({{block: 'center'}}); const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; }})()"
    ));
    let xy = at.as_array().unwrap_or_else(|| panic!("nothing on the page matches {selector}"));
    tab.click_at(xy[0].as_f64().unwrap(), xy[1].as_f64().unwrap());
}

fn select(tab: &mut common::Chromium, id: &str, value: &str) {
    let v = serde_json::to_string(value).unwrap();
    let ok = tab.eval(&format!(
        "(() => {{ const e = document.getElementById('{id}'); if (![...e.options].some(o => o.value === {v})) return false; e.value = {v}; e.dispatchEvent(new Event('change')); return true; }})()"
    ));
    assert_eq!(ok, Value::Bool(true), "#{id} has no option {value}");
}

#[test]
fn the_first_hour_on_the_quick_preset() {
    let root = tempfile::tempdir().unwrap();
    let run = root.path().join("runs/quick");
    // The quick preset, two generations of 48 games without its teacher stage: the same
    // loop a newcomer's first run is, small enough for the suite.
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/quick.toml")).unwrap();
    let mut cfg: toml::Table = toml::from_str(&text).unwrap();
    cfg["selfplay"]["games"] = 48.into();
    cfg["selfplay"]["qmix"] = 0.0.into();
    cfg.remove("teacher");
    let config = root.path().join("quick.toml");
    std::fs::write(&config, toml::to_string(&cfg).unwrap()).unwrap();
    let copper = || Command::new(env!("CARGO_BIN_EXE_copper"));

    // 1. Train.
    let out = copper().args(["train", "--quiet", "--threads", "1", "--generations", "2", "--config"]).arg(&config).arg("--run-dir").arg(&run).output().unwrap();
    assert!(out.status.success(), "copper train: {}", String::from_utf8_lossy(&out.stderr));
    let model = run.join("models/gen-0002");
    assert!(model.join("model.json").exists(), "the run's last model");

    // 2. Watch it: the run's page.
    let out = copper().arg("view").arg(&run).output().unwrap();
    assert!(out.status.success(), "copper view: {}", String::from_utf8_lossy(&out.stderr));
    let page = std::fs::read_to_string(run.join("index.html")).unwrap();
    assert!(page.contains("gen-0002") || page.contains("generation 2"), "the page shows the run's generations");

    // 3. Play the model made: `copper play --model`, the model chosen from the page's list.
    let mut server = copper()
        .args(["play", "--port", "0", "--out"])
        .arg(root.path().join("games"))
        .arg("--model")
        .arg(&model)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(server.stdout.take().unwrap()).lines();
    let url =
        lines.by_ref().map(|l| l.unwrap()).find_map(|l| l.strip_prefix("copper play: open ").map(str::to_string)).expect("copper play prints the URL to open");
    let mut tab = common::Chromium::start(1280, 800);
    tab.navigate(&url);
    wait_for(&mut tab, "the page to load", "!!document.body && document.body.dataset.ready === '1'");
    select(&mut tab, "variant", "minishogi");
    let mine = tab.eval(&format!(
        "[...document.getElementById('opponent').options].map(o => o.value).find(v => v.startsWith('checkpoint:' + {})) || ''",
        serde_json::to_string(&model.display().to_string()).unwrap()
    ));
    let mine = mine.as_str().unwrap().to_string();
    assert!(!mine.is_empty(), "the page lists the model named by --model among the opponents");
    select(&mut tab, "opponent", &mine);
    select(&mut tab, "side", "black");
    // The page opened on a game ready to play; "New game" replaces it with this one.
    let before = tab.eval("st ? st.id : 0");
    click(&mut tab, "#new");
    wait_for(&mut tab, "a new game", &format!("!!st && st.id !== {before} && st.plies.length === 1"));
    assert_eq!(tab.eval("st.white").as_str().unwrap(), "gen-0002", "the opponent is the model made");
    let legal = tab.eval("st.legal[0]");
    let (from, to) = (legal["from"].as_str().unwrap().to_string(), legal["to"].as_str().unwrap().to_string());
    click(&mut tab, &format!("[data-at=\"{from}\"]"));
    click(&mut tab, &format!("#targets [data-at=\"{to}\"], g.target[data-at=\"{to}\"]"));
    wait_for(&mut tab, "the model's answer", "!!st && st.plies.length === 3 && !st.thinking");
    // The board as the newcomer sees it (`$COPPER_SCREENSHOTS` keeps it: docs/play/).
    let shots = std::env::var_os("COPPER_SCREENSHOTS").map(std::path::PathBuf::from).unwrap_or_else(|| root.path().to_path_buf());
    std::fs::create_dir_all(&shots).unwrap();
    std::fs::write(shots.join("first-hour.png"), tab.screenshot_png()).unwrap();
    let _ = server.kill();
    let _ = server.wait();
}
