//! `copper play` as a person uses it: the page in headless Chromium (Debian's
//! `chromium`, installed by `scripts/install-test-deps.sh`), driven over the DevTools
//! protocol with real mouse clicks at the squares' places on the screen.
//!
//! The test decides what to click from the page's own list of legal moves and our rules
//! engine; what it checks is what the page drew (read back from the SVG's data
//! attributes), what the server saved, and what the library computes. Nothing depends on
//! wall-clock speed: every wait is for a state, with a generous limit.
//!
//! Screenshots go to `$COPPER_SCREENSHOTS` when set (`docs/play` refreshes the README's).

mod common;

use common::Chromium;
use play::{PlayConfig, Server};
use rand::{Rng, SeedableRng};
use rules::{Game, MoveKind, Position, Variant};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const WAIT: Duration = Duration::from_secs(120);

fn server(out: &Path) -> Server {
    let config = PlayConfig::new("127.0.0.1:0".parse().unwrap(), out.to_path_buf());
    play::start(config).unwrap()
}

fn js(tab: &mut Chromium, expr: &str) -> Value {
    tab.eval(expr)
}

/// The page's state (`st`), as JSON.
fn state(tab: &mut Chromium) -> Value {
    let text = js(tab, "st ? JSON.stringify(st) : 'null'");
    serde_json::from_str(text.as_str().unwrap()).unwrap()
}

fn wait_for(tab: &mut Chromium, what: &str, cond: &str) {
    let start = Instant::now();
    while start.elapsed() < WAIT {
        // Until the page has loaded, its names are not defined yet: not ready.
        if js(tab, &format!("(() => {{ try {{ return ({cond}); }} catch (e) {{ return false; }} }})()")) == Value::Bool(true) {
            return;
        }
        std::thread::sleep(Duration::from_millis(30));
    }
    panic!(
        "waited {WAIT:?} for {what} ({cond}); the page says: {}",
        js(tab, "document.getElementById('status').textContent + ' / ' + document.getElementById('error').textContent")
    );
}

/// A mouse click at the middle of the first element `selector` matches.
fn click(tab: &mut Chromium, selector: &str) {
    let sel = serde_json::to_string(selector).unwrap();
    let at = js(
        tab,
        &format!("(() => {{ const e = document.querySelector({sel}); if (!e) return null; e.scrollIntoView({{block: 'center', inline: 'center'}}); const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; }})()"),
    );
    let xy = at.as_array().unwrap_or_else(|| panic!("nothing on the page matches {selector}"));
    tab.click_at(xy[0].as_f64().unwrap(), xy[1].as_f64().unwrap());
}

/// Clicks the place a move starts from, then where it goes; answers the promotion
/// question when the page asks it.
fn click_move(tab: &mut Chromium, st: &Value, usi: &str) {
    let legal = st["legal"].as_array().unwrap();
    let m = legal.iter().find(|m| m["u"] == usi).unwrap_or_else(|| panic!("{usi} is not in the page's legal moves"));
    let (from, to) = (m["from"].as_str().unwrap(), m["to"].as_str().unwrap());
    click(tab, &format!("[data-at=\"{from}\"]"));
    click(tab, &format!("#targets [data-at=\"{to}\"], g.target[data-at=\"{to}\"]"));
    let choice = legal.iter().filter(|m| m["from"] == from && m["to"] == to).count();
    if choice > 1 {
        wait_for(tab, "the promotion question", "!document.getElementById('promo').hidden");
        click(tab, if m["promo"] == Value::Bool(true) { "#promo-yes" } else { "#promo-no" });
    }
}

/// A click whose press and release straddle a redraw of the whole page (as when a fetch
/// lands mid-click): it must still act on what was pressed.
fn click_across_a_redraw(tab: &mut Chromium, selector: &str) {
    let sel = serde_json::to_string(selector).unwrap();
    let at =
        js(tab, &format!("(() => {{ const r = document.querySelector({sel}).getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; }})()"));
    let (x, y) = (at[0].as_f64().unwrap(), at[1].as_f64().unwrap());
    tab.call("Input.dispatchMouseEvent", serde_json::json!({ "type": "mousePressed", "x": x, "y": y, "button": "left", "clickCount": 1 }));
    js(tab, "(draw(), true)");
    tab.call("Input.dispatchMouseEvent", serde_json::json!({ "type": "mouseReleased", "x": x, "y": y, "button": "left", "clickCount": 1 }));
}

fn set_value(tab: &mut Chromium, id: &str, value: &str) {
    js(
        tab,
        &format!(
            "(() => {{ const e = document.getElementById('{id}'); e.value = {}; e.dispatchEvent(new Event('change')); return true; }})()",
            serde_json::to_string(value).unwrap()
        ),
    );
}

fn open(server: &Server) -> Chromium {
    let mut tab = Chromium::start(1400, 1000);
    tab.navigate(&server.url());
    wait_for(&mut tab, "the page to load its setup", "!!document.body && document.body.dataset.ready === '1'");
    tab
}

fn new_game(tab: &mut Chromium, variant: &str, side: &str, spec: &str) -> Value {
    set_value(tab, "variant", variant);
    set_value(tab, "side", side);
    set_value(tab, "spec", spec);
    let before = js(tab, "st ? st.id : 0");
    click(tab, "#new");
    wait_for(tab, "a new game", &format!("!!st && st.id !== {before}"));
    state(tab)
}

fn wait_my_turn(tab: &mut Chromium) -> Value {
    wait_for(tab, "the opponent's move", "!!st && !st.thinking");
    state(tab)
}

fn screenshot(tab: &mut Chromium, name: &str, fallback: &Path) {
    let dir = std::env::var_os("COPPER_SCREENSHOTS").map(PathBuf::from).unwrap_or_else(|| fallback.to_path_buf());
    std::fs::create_dir_all(&dir).unwrap();
    let png = tab.screenshot_png();
    std::fs::write(dir.join(name), png).unwrap();
}

/// What the rules engine says the page should show at each ply of the saved record.
fn replayed(record: &gamerecords::GameRecord) -> Vec<String> {
    let v = record.load_variant().unwrap();
    let mut g = Game::new(Position::from_sfen(v, &record.start_sfen).unwrap(), record.max_plies);
    let mut out = vec![viewer::game::canonical(g.position())];
    for m in &record.moves {
        g.play_usi(m).unwrap();
        out.push(viewer::game::canonical(g.position()));
    }
    out
}

/// Steps through the game with the page's buttons (first, then next at every ply) and
/// compares the board drawn at each ply with the rules engine's replay of the record.
fn check_record_against_page(tab: &mut Chromium, st: &Value) -> gamerecords::GameRecord {
    let path = st["record"].as_str().unwrap();
    let records = gamerecords::read_jsonl(Path::new(path)).unwrap();
    assert_eq!(records.len(), 1, "{path}");
    let record = records.into_iter().next().unwrap();
    let expected = replayed(&record);
    assert_eq!(expected.len(), st["plies"].as_array().unwrap().len(), "the record and the page have the same plies");
    click(tab, "#first");
    for (ply, want) in expected.iter().enumerate() {
        if ply > 0 {
            click(tab, "#next");
        }
        wait_for(tab, "the ply shown", &format!("document.getElementById('plyno').textContent.startsWith('ply {ply} ')"));
        let shown = js(tab, "readBack()");
        assert_eq!(shown.as_str().unwrap(), want, "ply {ply} of {path}");
    }
    record
}

/// The moves the board's arrows of class `cls` (`pol`: the policy, `srch`: the search)
/// stand for, in the order drawn.
fn drawn_arrows(tab: &mut Chromium, cls: &str) -> Vec<String> {
    let list = js(tab, &format!("[...document.querySelectorAll('#arrows polygon.{cls}')].map(p => p.dataset.usi)"));
    list.as_array().unwrap().iter().map(|u| u.as_str().unwrap().to_string()).collect()
}

/// The moves of the side to move in `sfen` that take something.
fn is_capture(pos: &Position, usi: &str) -> bool {
    let m = pos.parse_usi(usi).unwrap();
    matches!(m.kind(), MoveKind::Board { to, .. } if pos.piece_at(to).is_some())
}

#[test]
fn a_whole_pocket_shogi_copper_game_by_clicking() {
    let out = tempfile::tempdir().unwrap();
    let server = server(out.path());
    let mut tab = open(&server);
    let v = Variant::builtin("pocket-copper").unwrap();
    let mut st = new_game(&mut tab, "pocket-copper", "black", "checkpoint,sims=8,name=model-8");
    assert_eq!(st["human"], "b");
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let (mut pocket_in, mut pocket_drop, mut hand_drop, mut promotion_choice) = (0, 0, 0, 0);
    let mut refused_once = false;
    while st["over"] == Value::Bool(false) {
        let sfen = st["plies"].as_array().unwrap().last().unwrap()["s"].as_str().unwrap().to_string();
        let pos = Position::from_sfen(v, &sfen).unwrap();
        let legal: Vec<&Value> = st["legal"].as_array().unwrap().iter().collect();
        let usi = |m: &&Value| m["u"].as_str().unwrap().to_string();
        let kind = |m: &&Value| pos.parse_usi(m["u"].as_str().unwrap()).unwrap().kind();
        let has_choice = |m: &&Value| legal.iter().filter(|o| o["from"] == m["from"] && o["to"] == m["to"]).count() > 1;
        // Each kind of move the test must make, until made; then captures; then anything.
        let pick: Option<String> = if promotion_choice < 2 && legal.iter().any(has_choice) {
            // Promote once, decline once.
            let want = promotion_choice == 0;
            legal.iter().filter(|m| has_choice(m) && (m["promo"] == Value::Bool(true)) == want).map(usi).next()
        } else if pocket_drop == 0 && legal.iter().any(|m| matches!(kind(m), MoveKind::PocketDrop { .. })) {
            legal.iter().filter(|m| matches!(kind(m), MoveKind::PocketDrop { .. })).map(usi).nth(rng.random_range(0..3))
        } else if pocket_in == 0 && legal.iter().any(|m| matches!(kind(m), MoveKind::PocketIn { .. })) {
            legal.iter().filter(|m| matches!(kind(m), MoveKind::PocketIn { .. })).map(usi).next()
        } else if hand_drop == 0 && legal.iter().any(|m| matches!(kind(m), MoveKind::Drop { .. })) {
            legal.iter().filter(|m| matches!(kind(m), MoveKind::Drop { .. })).map(usi).next()
        } else {
            None
        };
        let pick = pick.unwrap_or_else(|| {
            let captures: Vec<String> = legal.iter().map(usi).filter(|u| is_capture(&pos, u)).collect();
            if !captures.is_empty() && rng.random_bool(0.7) {
                captures[rng.random_range(0..captures.len())].clone()
            } else {
                usi(&legal[rng.random_range(0..legal.len())])
            }
        });
        if !refused_once {
            // A move that is not legal: a piece clicked, then a square it cannot reach.
            let from = legal.iter().find(|m| m["from"].as_str().unwrap().starts_with("sq:")).unwrap()["from"].as_str().unwrap().to_string();
            let targets: Vec<&str> = legal.iter().filter(|m| m["from"] == from.as_str()).map(|m| m["to"].as_str().unwrap()).collect();
            let wrong = (0..81).map(|i| format!("sq:{i}")).find(|s| *s != from && !targets.contains(&s.as_str())).unwrap();
            click(&mut tab, &format!("[data-at=\"{from}\"]"));
            click(&mut tab, &format!("rect[data-at=\"{wrong}\"]"));
            wait_for(&mut tab, "the refusal", "document.getElementById('error').textContent.includes('not a legal move')");
            assert_eq!(state(&mut tab)["plies"].as_array().unwrap().len(), st["plies"].as_array().unwrap().len(), "nothing was played");
            refused_once = true;
        }
        let plies = st["plies"].as_array().unwrap().len();
        let m = pos.parse_usi(&pick).unwrap();
        match m.kind() {
            MoveKind::PocketIn { .. } => pocket_in += 1,
            MoveKind::PocketDrop { .. } => pocket_drop += 1,
            MoveKind::Drop { .. } => hand_drop += 1,
            MoveKind::Board { .. } => {}
        }
        if legal.iter().filter(|o| legal.iter().any(|m| m["u"] == pick.as_str() && o["from"] == m["from"] && o["to"] == m["to"])).count() > 1 {
            promotion_choice += 1;
        }
        click_move(&mut tab, &st, &pick);
        wait_for(&mut tab, "the move to be played", &format!("!!st && (st.plies.length > {plies} || st.over)"));
        st = wait_my_turn(&mut tab);
        let shown = js(&mut tab, "readBack()");
        let now = st["plies"].as_array().unwrap().last().unwrap()["s"].as_str().unwrap().to_string();
        assert_eq!(shown.as_str().unwrap(), viewer::game::canonical(&Position::from_sfen(v, &now).unwrap()), "the board drawn after {pick}");
        if st["plies"].as_array().unwrap().len() > 300 && st["over"] == Value::Bool(false) {
            click(&mut tab, "#resign");
            wait_for(&mut tab, "the resignation", "!!st && st.over");
            st = state(&mut tab);
        }
        if st["plies"].as_array().unwrap().len() == 9 {
            // In kanji, as a shogi player reads the board (the letters come back after).
            click(&mut tab, "#labels");
            wait_for(&mut tab, "kanji on the board", "document.getElementById('labels').textContent === 'letters'");
            screenshot(&mut tab, "play.png", out.path());
            click(&mut tab, "#labels");
            wait_for(&mut tab, "letters on the board", "document.getElementById('labels').textContent === 'kanji'");
        }
    }
    eprintln!(
        "{} plies, {} ({}); pocket moves {pocket_in}, pocket drops {pocket_drop}, hand drops {hand_drop}, promotion choices {promotion_choice}",
        st["plies"].as_array().unwrap().len() - 1,
        st["result"],
        st["reason_text"]
    );
    assert!(
        pocket_in >= 1 && pocket_drop >= 1 && hand_drop >= 1 && promotion_choice >= 1,
        "in {pocket_in}, pocket drops {pocket_drop}, hand drops {hand_drop}, choices {promotion_choice}"
    );
    let status = js(&mut tab, "document.getElementById('status').textContent");
    assert!(status.as_str().unwrap().contains(st["reason_text"].as_str().unwrap()) && !st["reason"].as_str().unwrap().is_empty(), "{status}");
    let record = check_record_against_page(&mut tab, &st);
    assert!(record.end.is_some(), "the saved record has the game's end");
    assert_eq!(record.black, "you");
    assert_eq!(record.white, "model-8");
}

#[test]
fn standard_and_hand_shogi_moves_by_clicking_with_kif_and_csa_saved() {
    let out = tempfile::tempdir().unwrap();
    let server = server(out.path());
    let mut tab = open(&server);
    for (variant, side) in [("shogi", "black"), ("hand-shogi", "white")] {
        let v = Variant::builtin(variant).unwrap();
        new_game(&mut tab, variant, side, "alphabeta,depth=1");
        let mut st = wait_my_turn(&mut tab);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        for _ in 0..4 {
            if st["over"] == Value::Bool(true) {
                break;
            }
            let legal = st["legal"].as_array().unwrap();
            let pick = legal[rng.random_range(0..legal.len())]["u"].as_str().unwrap().to_string();
            let plies = st["plies"].as_array().unwrap().len();
            click_move(&mut tab, &st, &pick);
            wait_for(&mut tab, "the move", &format!("!!st && (st.plies.length > {plies} || st.over)"));
            st = wait_my_turn(&mut tab);
            let now = st["plies"].as_array().unwrap().last().unwrap()["s"].as_str().unwrap().to_string();
            assert_eq!(js(&mut tab, "readBack()").as_str().unwrap(), viewer::game::canonical(&Position::from_sfen(v, &now).unwrap()));
        }
        // Take back: to the person's previous turn (their move and the reply).
        let plies = st["plies"].as_array().unwrap().len();
        click(&mut tab, "#takeback");
        wait_for(&mut tab, "the take back", &format!("!!st && st.plies.length === {}", plies - 2));
        st = state(&mut tab);
        let record = check_record_against_page(&mut tab, &st);
        assert_eq!(record.variant, variant);
        let path = PathBuf::from(st["record"].as_str().unwrap());
        if variant == "shogi" {
            let kif = gamerecords::kif::from_kif(&std::fs::read_to_string(path.with_extension("kif")).unwrap()).unwrap();
            assert_eq!(kif.moves, record.moves);
            let csa = gamerecords::csa::from_csa(&std::fs::read_to_string(path.with_extension("csa")).unwrap()).unwrap();
            assert_eq!(csa.moves, record.moves);
        }
        // Kanji labels: the Black king reads 玉 in shogi.
        click(&mut tab, "#labels");
        if variant == "shogi" {
            assert_eq!(js(&mut tab, "[...document.querySelectorAll('#pieces g[data-tok=\"K\"] text')].map(t => t.textContent).join()"), "玉");
        }
        click(&mut tab, "#labels");
    }
}

/// The network's value and top moves, and the search's, on the page and in the library.
#[test]
fn analysis_shows_what_the_library_computes() {
    let out = tempfile::tempdir().unwrap();
    let server = server(out.path());
    let mut tab = open(&server);
    let v = Variant::builtin("pocket-copper").unwrap();
    let net = neteval::load(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../models/pocket-copper")), v).unwrap();
    let mut positions = vec![v.start_sfen.clone()];
    let mut g = Game::new(Position::start(v), None);
    for m in ["C&5e", "3c3d", "7g7f", "C*4e", "5e&"] {
        g.play_usi(m).unwrap();
        positions.push(g.position().to_sfen());
    }
    set_value(&mut tab, "side", "both");
    for (i, sfen) in positions.iter().enumerate() {
        set_value(&mut tab, "variant", "pocket-copper");
        set_value(&mut tab, "sfen", sfen);
        let before = js(&mut tab, "st ? st.id : 0");
        click(&mut tab, "#sfen-go");
        wait_for(&mut tab, "the study board", &format!("!!st && st.id !== {before}"));
        click(&mut tab, "#net-go");
        wait_for(&mut tab, "the network's view", "!!document.getElementById('net-moves')");
        let game = Game::new(Position::from_sfen(v, sfen).unwrap(), None);
        let want = play::analysis::network_view(&net, &game, 8).unwrap();
        let shown_value = js(&mut tab, "document.getElementById('net-value').textContent");
        assert!(shown_value.as_str().unwrap().contains(&format!("value {:.3}", want.value)), "position {i}: {shown_value} vs {}", want.value);
        let shown_moves =
            js(&mut tab, "[...document.querySelectorAll('#net-moves tr[data-usi]')].map(r => r.dataset.usi + ' ' + r.cells[0].textContent).join(',')");
        let want_moves: Vec<String> = want.policy.iter().map(|m| format!("{} {:.1}%", m.mv.usi, m.prior * 100.0)).collect();
        assert_eq!(shown_moves.as_str().unwrap(), want_moves.join(","), "position {i}");
        // The policy on the board: an arrow for each of its four likeliest moves.
        let want_arrows: Vec<&str> = want.policy.iter().take(4).map(|m| m.mv.usi.as_str()).collect();
        assert_eq!(drawn_arrows(&mut tab, "pol"), want_arrows, "position {i}");
        // The search at a budget of 64 simulations.
        set_value(&mut tab, "sims", "64");
        click(&mut tab, "#search-go");
        wait_for(&mut tab, "the search", "!!st && !!st.search && !st.search.running && !!document.getElementById('search-moves')");
        let mut search = search::Search::with_seed(game.clone(), play::analysis::analysis_config(64), play::analysis::ANALYSIS_SEED);
        search.run(&net);
        let want = play::analysis::search_view(&search, 8);
        let shown =
            js(&mut tab, "[...document.querySelectorAll('#search-moves tr[data-usi]')].map(r => r.dataset.usi + ' ' + r.cells[1].textContent).join(',')");
        let want_lines: Vec<String> = want.lines.iter().map(|l| format!("{} {}", l.mv.usi, l.visits)).collect();
        assert_eq!(shown.as_str().unwrap(), want_lines.join(","), "position {i}");
        let status = js(&mut tab, "document.getElementById('search-status').textContent");
        assert!(status.as_str().unwrap().contains(&format!("value {:.3}", want.value)), "{status}");
        let want_arrows: Vec<&str> = want.lines.iter().filter(|l| l.visits > 0).take(4).map(|l| l.mv.usi.as_str()).collect();
        assert_eq!(drawn_arrows(&mut tab, "srch"), want_arrows, "position {i}: the search's arrows");
        if i == positions.len() - 1 {
            click(&mut tab, "#ab-go");
            wait_for(&mut tab, "the alpha-beta", "document.getElementById('ab').textContent.includes('depth')");
            screenshot(&mut tab, "analysis.png", out.path());
        }
    }
}

/// Requests the page would never make: each gets a 4xx with a message, and the server
/// keeps serving.
#[test]
fn malformed_requests_get_clear_refusals() {
    let out = tempfile::tempdir().unwrap();
    let server = server(out.path());
    let base = format!("http://{}", server.addr());
    let token = server.url().split("token=").nth(1).unwrap().to_string();
    let agent = ureq::AgentBuilder::new().timeout(Duration::from_secs(60)).build();
    let post = |path: &str, body: &str| -> (u16, String) {
        match agent.post(&format!("{base}{path}?token={token}")).set("content-type", "application/json").send_string(body) {
            Ok(r) => (r.status(), r.into_string().unwrap()),
            Err(ureq::Error::Status(code, r)) => (code, r.into_string().unwrap()),
            Err(e) => panic!("{path}: {e}"),
        }
    };
    let alive = || agent.get(&format!("{base}/api/setup?token={token}")).call().unwrap().status() == 200;
    let refused = |(code, body): (u16, String), status: u16, says: &str| {
        assert_eq!(code, status, "{body}");
        let msg: Value = serde_json::from_str(&body).unwrap_or_else(|_| panic!("not JSON: {body}"));
        assert!(msg["error"].as_str().unwrap().contains(says), "{body} does not say '{says}'");
        assert!(alive(), "the server stopped serving after: {body}");
    };
    // No token, a wrong one.
    match agent.get(&format!("{base}/api/setup")).call() {
        Err(ureq::Error::Status(403, _)) => {}
        other => panic!("no token: {other:?}"),
    }
    let wrong = format!("{}{}", if token.starts_with('0') { '1' } else { '0' }, &token[1..]);
    match agent.get(&format!("{base}/?token={wrong}")).call() {
        Err(ureq::Error::Status(403, _)) => {}
        other => panic!("a wrong token: {other:?}"),
    }
    refused(post("/api/games", "{not json"), 400, "malformed request");
    refused(post("/api/games", r#"{"variant":"pocket-copper","side":"black","opponent":"alphabeta","colour":1}"#), 400, "unknown field");
    refused(post("/api/games", r#"{"variant":"chess","side":"black","opponent":"random"}"#), 400, "variant 'chess'");
    refused(post("/api/games", r#"{"variant":"shogi","side":"black","opponent":"minimax,depth=2"}"#), 400, "minimax");
    refused(post("/api/games", r#"{"variant":"shogi","side":"black","opponent":"usi:/bin/sh"}"#), 403, "--allow-engine");
    refused(post("/api/games", r#"{"variant":"shogi","side":"both","sfen":"lnsgkgsnl/9/9 b - 1"}"#), 400, "SFEN");
    let long = format!(r#"{{"variant":"shogi","side":"both","sfen":"{}"}}"#, "9/".repeat(400));
    refused(post("/api/games", &long), 400, "at most 512");
    refused(post("/api/games", r#"{"variant":"shogi","side":"both","moves":["7g7f","7g7f"]}"#), 400, "move 2");
    // A body over the limit: refused from its declared length, before it is read.
    let huge = format!(r#"{{"variant":"shogi","side":"both","sfen":"{}"}}"#, "x".repeat(70_000));
    let mut raw = std::net::TcpStream::connect(server.addr()).unwrap();
    let head = format!(
        "POST /api/games?token={token} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        huge.len()
    );
    std::io::Write::write_all(&mut raw, (head + &huge).as_bytes()).unwrap();
    let mut answer = String::new();
    let _ = std::io::Read::read_to_string(&mut raw, &mut answer);
    assert!(answer.starts_with("HTTP/1.1 413"), "an oversized body: {answer}");
    assert!(alive());
    // A study board, then moves on it.
    let (code, body) = post("/api/games", r#"{"variant":"pocket-copper","side":"both"}"#);
    assert_eq!(code, 200, "{body}");
    let id = serde_json::from_str::<Value>(&body).unwrap()["id"].as_u64().unwrap();
    refused(post(&format!("/api/games/{id}/move"), r#"{"usi":"5i5a"}"#), 422, "not legal");
    refused(post(&format!("/api/games/{id}/move"), r#"{"usi":"zz"}"#), 422, "malformed");
    refused(post(&format!("/api/games/{id}/move"), r#"{"move":"7g7f"}"#), 400, "malformed request");
    refused(post(&format!("/api/games/{id}/search"), r#"{"simulations":0}"#), 400, "simulations 0");
    // Variations, KIF and the board editor's check.
    refused(post(&format!("/api/games/{id}/line"), r#"{"ply":0,"moves":["7g7f","5i5a"]}"#), 422, "variation move 2 (5i5a)");
    refused(post(&format!("/api/games/{id}/line"), r#"{"ply":9,"moves":[]}"#), 400, "ply 9: the game has 0 plies");
    refused(post(&format!("/api/games/{id}/line"), r#"{"ply":0}"#), 400, "malformed request");
    let get = |path: &str| -> (u16, String) {
        match agent.get(&format!("{base}{path}{}token={token}", if path.contains('?') { "&" } else { "?" })).call() {
            Ok(r) => (r.status(), r.into_string().unwrap()),
            Err(ureq::Error::Status(code, r)) => (code, r.into_string().unwrap()),
            Err(e) => panic!("{path}: {e}"),
        }
    };
    refused(get(&format!("/api/games/{id}/kif")), 400, "KIF is written for standard shogi");
    refused(get(&format!("/api/games/{id}/network?ply=0&line=zz")), 422, "variation move 1 (zz)");
    refused(post("/api/position", r#"{"variant":"pocket-copper","sfen":"not a position"}"#), 400, "SFEN");
    refused(post("/api/position", r#"{"variant":"chess","sfen":"8/8 w - 1"}"#), 400, "variant 'chess'");
    refused(post("/api/games", r#"{"variant":"shogi","side":"black","opponent":"random","clock_main_ms":99999999999}"#), 400, "cap of");
    refused(post("/api/games/999/move", r#"{"usi":"7g7f"}"#), 404, "no game 999");
    refused(post("/api/games/abc/move", r#"{"usi":"7g7f"}"#), 400, "malformed address");
    let (code, body) = post(&format!("/api/games/{id}/move"), r#"{"usi":"C&5e"}"#);
    assert_eq!(code, 200, "{body}");
    // Closing the game frees it.
    assert_eq!(post(&format!("/api/games/{id}/close"), "").0, 204);
    refused(post(&format!("/api/games/{id}/move"), r#"{"usi":"3c3d"}"#), 404, "no game");
    // Everything written is under the output folder.
    for entry in std::fs::read_dir(out.path()).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().to_string();
        assert!(name.ends_with(".jsonl") || name.ends_with(".kif") || name.ends_with(".csa"), "{name}");
    }
}

/// `copper play --game FILE`: the game on a study board; its review marks the moves the
/// library marks.
#[test]
fn a_game_file_opens_on_a_study_board_and_its_review_marks_what_the_library_marks() {
    let out = tempfile::tempdir().unwrap();
    let v = Variant::builtin("pocket-copper").unwrap();
    let mut g = Game::new(Position::start(v), None);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    while g.ply() < 30 && !g.is_over() {
        let legal = g.legal_moves();
        g.play(legal.as_slice()[rng.random_range(0..legal.len())]).unwrap();
    }
    let file = out.path().join("games.jsonl");
    gamerecords::append_jsonl(&file, &gamerecords::GameRecord::from_game(&g, None, "a", "b")).unwrap();
    let (variant, line) = play::game_from_file(&file, 0).unwrap();
    let server = server(&out.path().join("play"));
    let mut tab = Chromium::start(1400, 1000);
    tab.navigate(&server.url_analysing(&variant, &line));
    wait_for(&mut tab, "the study board", "!!st");
    let st = state(&mut tab);
    assert_eq!(st["human"], "both");
    assert_eq!(st["plies"].as_array().unwrap().len(), g.ply() + 1);
    assert_eq!(js(&mut tab, "readBack()").as_str().unwrap(), viewer::game::canonical(g.position()));
    click(&mut tab, "#review-go");
    wait_for(&mut tab, "the review", "document.getElementById('mistakes').textContent.length > 0");
    let net = neteval::load(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../models/pocket-copper")), v).unwrap();
    let review = play::analysis::review(&net, &g, 2).unwrap();
    assert!(!review.mistakes.is_empty(), "random moves lose value somewhere");
    let text = js(&mut tab, "document.getElementById('mistakes').textContent");
    let plies = st["plies"].as_array().unwrap();
    for (ply, lost) in &review.mistakes {
        let want = format!("{ply}. {} (−{lost:.2})", plies[*ply]["m"].as_str().unwrap());
        assert!(text.as_str().unwrap().contains(&want), "{text} lacks {want}");
    }
    assert_eq!(js(&mut tab, "document.querySelectorAll('#graph circle.graph-bad').length").as_u64().unwrap() as usize, review.mistakes.len());
    assert_eq!(js(&mut tab, "document.querySelectorAll('#moves div.bad').length").as_u64().unwrap() as usize, review.mistakes.len());
    // Every move with what it lost for its mover (or gained: +), the worst one outlined.
    let shown: Vec<Value> = js(
        &mut tab,
        "[...document.querySelectorAll('#moves div[data-ply]')].map(d => { const l = d.querySelector('.loss'); return l ? l.textContent : null; })",
    )
    .as_array()
    .unwrap()
    .clone();
    assert_eq!(shown.len(), review.losses.len());
    for (ply, (lost, text)) in review.losses.iter().zip(&shown).enumerate() {
        let want = lost.filter(|_| ply > 0).map(|l| format!("{}{:.2}", if l >= 0.0 { "−" } else { "+" }, l.abs()));
        assert_eq!(text.as_str().map(str::to_string), want, "ply {ply}");
    }
    let worst = review.losses.iter().enumerate().filter_map(|(i, l)| l.map(|l| (i, l))).max_by(|a, b| a.1.total_cmp(&b.1)).unwrap().0;
    assert_eq!(js(&mut tab, "[...document.querySelectorAll('#moves div.worst')].map(d => +d.dataset.ply)"), serde_json::json!([worst]));
    assert_eq!(worst, review.mistakes[0].0, "the worst move is the first of the mistakes");
}

/// "Move now": a network told to think for ten minutes moves when asked.
#[test]
fn a_long_think_stops_when_asked() {
    let out = tempfile::tempdir().unwrap();
    let server = server(out.path());
    let mut tab = open(&server);
    new_game(&mut tab, "pocket-copper", "white", "checkpoint,movetime=600000,name=slow");
    wait_for(&mut tab, "the opponent to think", "!!st && st.thinking");
    let asked = Instant::now();
    click(&mut tab, "#stop");
    wait_for(&mut tab, "its move", "!!st && !st.thinking && st.plies.length === 2");
    assert!(asked.elapsed() < Duration::from_secs(300), "it moved when asked, not at its limit");
    let st = state(&mut tab);
    assert!(st["last_thought"]["nodes"].as_u64().unwrap() > 0);
}

/// Two tabs, two games at once; a tab that goes away frees its game (and engine) at once.
#[test]
fn two_tabs_play_at_once_and_a_tab_that_leaves_can_come_back() {
    let out = tempfile::tempdir().unwrap();
    let server = server(out.path());
    let mut tabs = [open(&server), open(&server)];
    let mut ids = Vec::new();
    for (i, tab) in tabs.iter_mut().enumerate() {
        let variant = ["pocket-copper", "shogi"][i];
        new_game(tab, variant, "black", "alphabeta,depth=1");
        let st = wait_my_turn(tab);
        ids.push(st["id"].as_u64().unwrap());
    }
    assert_ne!(ids[0], ids[1]);
    for tab in tabs.iter_mut() {
        let st = state(tab);
        let first = st["legal"][0]["u"].as_str().unwrap().to_string();
        click_move(tab, &st, &first);
        wait_for(tab, "the reply", "!!st && st.plies.length === 3 && !st.thinking");
    }
    let files = std::fs::read_dir(out.path()).unwrap().filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "jsonl")).count();
    assert_eq!(files, 2, "one record per game");
    // The first tab leaves (a reload, a step back, a laptop closing): its game stays
    // open, and the address it had finds it again; the other tab plays on.
    let address = js(&mut tabs[0], "location.href").as_str().unwrap().to_string();
    assert!(address.ends_with(&format!("#game={}", ids[0])), "{address}");
    tabs[0].navigate("about:blank");
    let token = server.url().split("token=").nth(1).unwrap().to_string();
    let status = |id: u64| match ureq::get(&format!("http://{}/api/games/{id}?token={token}", server.addr())).call() {
        Ok(r) => r.status(),
        Err(ureq::Error::Status(code, _)) => code,
        Err(e) => panic!("{e}"),
    };
    assert_eq!((status(ids[0]), status(ids[1])), (200, 200));
    tabs[0].navigate(&address);
    wait_for(&mut tabs[0], "the page to load again", "!!document.body && document.body.dataset.ready === '1'");
    assert_eq!(state(&mut tabs[0])["id"].as_u64(), Some(ids[0]), "the tab came back to its game");
}

/// What a page may name as an opponent: an allowed engine only as the command line starts
/// it, checkpoints only the shipped ones and those the command line named, and no limit
/// or table over its cap. Each refusal names why; nothing refused is started.
#[test]
fn a_page_names_only_what_the_command_line_allows() {
    let out = tempfile::tempdir().unwrap();
    let marker = out.path().join("ran");
    let script = out.path().join("engine.sh");
    std::fs::write(&script, format!("#!/bin/sh\necho \"$@\" >> {}\n", marker.display())).unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/pocket-copper");
    // A copy of the shipped model elsewhere: a model directory the command line did not name.
    let copy = out.path().join("copy");
    std::fs::create_dir(&copy).unwrap();
    for f in ["model.json", "weights.bpk"] {
        std::fs::copy(shipped.join(f), copy.join(f)).unwrap();
    }
    let mut config = PlayConfig::new("127.0.0.1:0".parse().unwrap(), out.path().join("games"));
    config.allowed_engines = players::EngineAllowList::parse(&[script.display().to_string()]).unwrap();
    config.models = vec![shipped.clone()];
    let server = play::start(config).unwrap();
    let base = format!("http://{}", server.addr());
    let token = server.url().split("token=").nth(1).unwrap().to_string();
    let agent = ureq::AgentBuilder::new().timeout(Duration::from_secs(60)).build();
    let new_game = |opponent: &str| -> (u16, String) {
        let body = serde_json::json!({"variant": "pocket-copper", "side": "black", "opponent": opponent}).to_string();
        match agent.post(&format!("{base}/api/games?token={token}")).set("content-type", "application/json").send_string(&body) {
            Ok(r) => (r.status(), r.into_string().unwrap()),
            Err(ureq::Error::Status(code, r)) => (code, r.into_string().unwrap()),
            Err(e) => panic!("{opponent}: {e}"),
        }
    };
    let engine = script.display().to_string();
    for (opponent, status, says) in [
        (format!("usi:{engine},option.Debug Log File={}/log", out.path().display()), 403, "only the command line sets how an engine starts"),
        (format!("usi:{engine},arg=-c"), 403, "only the command line sets how an engine starts"),
        (format!("usi:{engine},dir=/"), 403, "only the command line sets how an engine starts"),
        (format!(" usi : \"{}/other\" ", out.path().display()), 403, "does not allow"),
        ("checkpoint:/etc".to_string(), 403, "copper play --model /etc"),
        (format!("checkpoint:{},sims=8", copy.display()), 403, "--model"),
        ("alphabeta,depth=30".to_string(), 400, "depth 30 is over this server's cap of 6"),
        ("alphabeta,nodes=1000000000000000".to_string(), 400, "cap of 20000000"),
        ("alphabeta,depth=2,tt=268435456".to_string(), 400, "tt (entries) 268435456 is over this server's cap of 4194304"),
        ("checkpoint,sims=100000000".to_string(), 400, "simulations 100000000 is over this server's cap of 200000"),
        ("checkpoint,movetime=3600000".to_string(), 400, "movetime (ms) 3600000"),
        ("alphabeta,time=99999999999,byoyomi=1000".to_string(), 400, "main time (ms)"),
    ] {
        let (code, body) = new_game(&opponent);
        assert_eq!(code, status, "{opponent}: {body}");
        assert!(body.contains(says), "{opponent}: {body} does not say '{says}'");
    }
    assert!(!marker.exists(), "a refused engine was started");
    // What the command line allows is played: the named model (by another spelling of its
    // path too), the shipped one, limits at their caps.
    let spelled = format!("{}/../pocket-copper", shipped.display());
    for opponent in [
        format!("checkpoint:{},sims=8", shipped.display()),
        format!("checkpoint:{spelled},sims=8"),
        "checkpoint,sims=8".into(),
        "alphabeta,depth=6,tt=4194304".into(),
    ] {
        let (code, body) = new_game(&opponent);
        assert_eq!(code, 200, "{opponent}: {body}");
    }
    // The page lists the named model and the allowed engine among the opponents.
    let setup: Value = serde_json::from_str(&agent.get(&format!("{base}/api/setup?token={token}")).call().unwrap().into_string().unwrap()).unwrap();
    let copper = setup["variants"].as_array().unwrap().iter().find(|v| v["name"] == "pocket-copper").unwrap();
    let specs: Vec<&str> = copper["opponents"].as_array().unwrap().iter().map(|o| o["spec"].as_str().unwrap()).collect();
    assert!(specs.iter().any(|s| s.starts_with(&format!("checkpoint:{}", shipped.display()))), "{specs:?}");
    assert!(specs.iter().any(|s| s.starts_with(&format!("usi:{engine}"))), "{specs:?}");
}

/// The page opens on a board ready to play; a reload comes back to the same game, at
/// the same ply; a new game closes the one it replaces (its engine freed).
#[test]
fn a_reload_keeps_the_game_and_a_new_game_closes_the_old_one() {
    let out = tempfile::tempdir().unwrap();
    let server = server(out.path());
    let mut tab = open(&server);
    let first = state(&mut tab);
    assert!(first["id"].as_u64().is_some() && first["over"] == Value::Bool(false), "a game is ready on opening: {first}");
    assert!(js(&mut tab, "document.querySelectorAll('#pieces > *').length").as_u64().unwrap() > 0, "its board is drawn");
    let st = new_game(&mut tab, "minishogi", "black", "random,name=rnd");
    let id = st["id"].as_u64().unwrap();
    let base = format!("http://{}", server.addr());
    let token = server.url().split("token=").nth(1).unwrap().to_string();
    let get = |id: u64| {
        ureq::get(&format!("{base}/api/games/{id}?token={token}")).call().map(|r| r.status()).unwrap_or_else(|e| match e {
            ureq::Error::Status(code, _) => code,
            e => panic!("{e}"),
        })
    };
    assert_eq!(get(first["id"].as_u64().unwrap()), 404, "the game the new one replaced is closed");
    let usi = st["legal"][0]["u"].as_str().unwrap().to_string();
    click_move(&mut tab, &st, &usi);
    wait_for(&mut tab, "the opponent's reply", "!!st && st.plies.length === 3 && !st.thinking");
    let before = state(&mut tab);
    js(&mut tab, "location.reload(), true");
    std::thread::sleep(Duration::from_millis(200));
    wait_for(&mut tab, "the page to load again", "!!document.body && document.body.dataset.ready === '1'");
    let after = state(&mut tab);
    assert_eq!(after["id"].as_u64(), Some(id), "the reloaded page shows its game");
    assert_eq!(after["plies"], before["plies"], "at the same ply");
    assert_eq!(get(id), 200, "the game is still open on the server");
}

/// A save that fails is shown on the page (not only logged), and the game goes on.
#[test]
fn a_failed_save_shows_on_the_page() {
    let root = tempfile::tempdir().unwrap();
    let out = root.path().join("games");
    let server = server(&out);
    let mut tab = open(&server);
    let st = new_game(&mut tab, "minishogi", "black", "random,name=rnd");
    // The folder the games go to becomes a file: every save now fails.
    std::fs::remove_dir_all(&out).unwrap();
    std::fs::write(&out, "not a folder").unwrap();
    let usi = st["legal"][0]["u"].as_str().unwrap().to_string();
    click_move(&mut tab, &st, &usi);
    wait_for(&mut tab, "the opponent's reply", "!!st && st.plies.length === 3 && !st.thinking");
    let shown = js(&mut tab, "document.getElementById('record').textContent");
    assert!(shown.as_str().unwrap().starts_with("NOT SAVED"), "{shown}");
    assert_eq!(js(&mut tab, "getComputedStyle(document.getElementById('record')).backgroundColor").as_str().unwrap(), "rgb(192, 28, 40)");
}

/// An illegal move sent through the page with the page's own check bypassed (its request
/// function called directly) is refused by the server: the page shows the refusal and
/// the game is unchanged.
#[test]
fn the_server_refuses_an_illegal_move_the_page_did_not_check() {
    let out = tempfile::tempdir().unwrap();
    let server = server(out.path());
    let mut tab = open(&server);
    let st = new_game(&mut tab, "pocket-copper", "black", "random,name=rnd");
    let legal: Vec<String> = st["legal"].as_array().unwrap().iter().map(|m| m["u"].as_str().unwrap().to_string()).collect();
    assert!(!legal.contains(&"5i5a".to_string()));
    js(&mut tab, "act(async () => setState(await api('POST', `/api/games/${st.id}/move`, { usi: '5i5a' }))), true");
    wait_for(&mut tab, "the refusal on the page", "document.getElementById('error').textContent.includes('not legal')");
    let after = state(&mut tab);
    assert_eq!(after["plies"].as_array().unwrap().len(), 1, "the game is unchanged");
    let record = out.path().read_dir().unwrap().count();
    assert_eq!(record, 0, "nothing was saved: no move was played");
}

/// The legal moves of the shown position as the page would let them be clicked (the
/// game's at its end, a variation's elsewhere), once the page has them.
fn legal_here(tab: &mut Chromium) -> Value {
    wait_for(tab, "the legal moves of the shown position", "legalHere().length > 0");
    serde_json::from_str(js(tab, "JSON.stringify({ legal: legalHere() })").as_str().unwrap()).unwrap()
}

/// A study board of `line` (`sfen … moves …`) in `variant`, set up through the page.
fn study(tab: &mut Chromium, variant: &str, line: &str) -> Value {
    set_value(tab, "variant", variant);
    set_value(tab, "side", "both");
    set_value(tab, "sfen", line);
    let before = js(tab, "st ? st.id : 0");
    click(tab, "#sfen-go");
    wait_for(tab, "the study board", &format!("!!st && st.id !== {before}"));
    state(tab)
}

/// The rules engine's position after `moves` from `start`.
fn position_after(v: &'static Variant, start: &str, moves: &[&str]) -> Position {
    let mut g = Game::new(Position::from_sfen(v, start).unwrap(), None);
    for m in moves {
        g.play_usi(m).unwrap();
    }
    g.position().clone()
}

fn read_back(tab: &mut Chromium) -> String {
    js(tab, "readBack()").as_str().unwrap().to_string()
}

/// A variation: moves played by clicking from an earlier ply of a game against an
/// opponent; the game (its main line, its record) is kept; stepping back from the
/// variation's first move returns to the main line; a click on the variation in the list
/// shows it again. What is drawn is checked against the rules engine at each place.
#[test]
fn a_variation_is_played_from_an_earlier_ply_and_the_main_line_is_kept() {
    let out = tempfile::tempdir().unwrap();
    let server = server(out.path());
    let mut tab = open(&server);
    let v = Variant::builtin("pocket-copper").unwrap();
    let mut st = new_game(&mut tab, "pocket-copper", "black", "alphabeta,depth=1,name=ab1");
    for usi in ["7g7f", "2g2f"] {
        let plies = st["plies"].as_array().unwrap().len();
        click_move(&mut tab, &st, usi);
        wait_for(&mut tab, "the reply", &format!("!!st && st.plies.length === {} && !st.thinking", plies + 2));
        st = state(&mut tab);
    }
    let main: Vec<String> = st["usi"].as_array().unwrap().iter().map(|m| m.as_str().unwrap().to_string()).collect();
    assert_eq!(main.len(), 4);
    let start = st["plies"][0]["s"].as_str().unwrap().to_string();
    // Back to ply 2 (Black to move), and a move the game did not play there.
    click(&mut tab, "#prev");
    click(&mut tab, "#prev");
    wait_for(&mut tab, "ply 2", "document.getElementById('plyno').textContent.startsWith('ply 2 ')");
    let here = legal_here(&mut tab);
    let first = ["C&5e", "1g1f", "9g9f"].into_iter().find(|u| *u != main[2] && here["legal"].as_array().unwrap().iter().any(|m| m["u"] == *u)).unwrap();
    // The piece is picked up across a redraw too (a fetch landing mid-click).
    let m = here["legal"].as_array().unwrap().iter().find(|m| m["u"] == first).unwrap().clone();
    click_across_a_redraw(&mut tab, &format!("[data-at=\"{}\"]", m["from"].as_str().unwrap()));
    wait_for(&mut tab, "the piece picked up", &format!("sel === {}", m["from"]));
    click(&mut tab, &format!("#targets [data-at=\"{0}\"], g.target[data-at=\"{0}\"]", m["to"].as_str().unwrap()));
    wait_for(&mut tab, "the variation's first move", "!!cur && cur.i === 1");
    // White's answer in the variation, clicked too.
    let here = legal_here(&mut tab);
    let reply = here["legal"][0]["u"].as_str().unwrap().to_string();
    click_move(&mut tab, &here, &reply);
    wait_for(&mut tab, "the variation's second move", "!!cur && cur.i === 2");
    let variation = [main[0].as_str(), main[1].as_str(), first, reply.as_str()];
    assert_eq!(read_back(&mut tab), viewer::game::canonical(&position_after(v, &start, &variation)), "the variation's position is drawn");
    let page: Value = serde_json::from_str(
        js(&mut tab, "JSON.stringify({ vars: vars.map(v => ({ ply: v.ply, moves: v.moves })), plies: st.plies.length, usi: st.usi })").as_str().unwrap(),
    )
    .unwrap();
    assert_eq!(page["vars"], serde_json::json!([{ "ply": 2, "moves": [first, reply] }]));
    assert_eq!(page["plies"], 5, "the main line is kept");
    assert_eq!(page["usi"], serde_json::json!(main));
    assert_eq!(js(&mut tab, "document.querySelectorAll('#moves div.var span.vm').length"), 2, "the variation is listed");
    // The README's picture of a study: a variation, in kanji, with the policy's arrows.
    click(&mut tab, "#labels");
    click(&mut tab, "#net-go");
    wait_for(&mut tab, "the policy's arrows", "document.querySelectorAll('#arrows polygon.pol').length > 0");
    screenshot(&mut tab, "variation.png", out.path());
    click(&mut tab, "#labels");
    // Step back twice: the variation's first move, then the main line where it left.
    click(&mut tab, "#prev");
    wait_for(&mut tab, "the variation's first move", "!!cur && cur.i === 1");
    assert_eq!(read_back(&mut tab), viewer::game::canonical(&position_after(v, &start, &variation[..3])));
    click(&mut tab, "#prev");
    wait_for(&mut tab, "the main line at ply 2", "!cur && document.getElementById('plyno').textContent === 'ply 2 / 4'");
    assert_eq!(read_back(&mut tab), viewer::game::canonical(&position_after(v, &start, &variation[..2])));
    // Forward follows the main line, not the variation.
    click(&mut tab, "#next");
    wait_for(&mut tab, "the main line at ply 3", "!cur && document.getElementById('plyno').textContent === 'ply 3 / 4'");
    let main_refs: Vec<&str> = main.iter().map(String::as_str).collect();
    assert_eq!(read_back(&mut tab), viewer::game::canonical(&position_after(v, &start, &main_refs[..3])));
    // The variation from the list, then the game's end: the person's move is the game's.
    // The page redraws between the press and the release, as when a fetch lands mid-click:
    // the click must still reach the move it was pressed on.
    click_across_a_redraw(&mut tab, "#moves span.vm[data-i=\"2\"]");
    wait_for(&mut tab, "the variation's end", "!!cur && cur.i === 2");
    assert_eq!(read_back(&mut tab), viewer::game::canonical(&position_after(v, &start, &variation)));
    click(&mut tab, "#last");
    wait_for(&mut tab, "the game's end", "!cur && document.getElementById('plyno').textContent === 'ply 4 / 4'");
    assert_eq!(read_back(&mut tab), viewer::game::canonical(&position_after(v, &start, &main_refs)));
    let record = &gamerecords::read_jsonl(Path::new(st["record"].as_str().unwrap())).unwrap()[0];
    assert_eq!(record.moves, main, "the record holds the game, not the variation");
}

/// Arrows for the policy's likeliest moves, a move out of the pocket among them: the
/// arrow starts on the pocket slot drawn and ends on the square the piece goes to.
#[test]
fn the_policy_is_drawn_as_arrows_a_pocket_move_from_the_pocket() {
    let out = tempfile::tempdir().unwrap();
    let server = server(out.path());
    let mut tab = open(&server);
    let v = Variant::builtin("pocket-copper").unwrap();
    let net = neteval::load(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../models/pocket-copper")), v).unwrap();
    // A position whose four likeliest moves by the network hold a pocket move.
    let mut candidates = vec![v.start_sfen.clone()];
    candidates.extend(v.start_family().into_iter().map(|(_, s)| s));
    let mut g = Game::new(Position::start(v), None);
    for m in ["7g7f", "3c3d", "2g2f", "8c8d", "2f2e"] {
        g.play_usi(m).unwrap();
        candidates.push(g.position().to_sfen());
    }
    let (sfen, pocket_move) = candidates
        .iter()
        .find_map(|sfen| {
            let game = Game::new(Position::from_sfen(v, sfen).unwrap(), None);
            let view = play::analysis::network_view(&net, &game, 8).unwrap();
            let m = view.policy.iter().take(4).find(|m| m.mv.from.starts_with("pocket:") || m.mv.to.starts_with("pocket:"))?;
            Some((sfen.clone(), m.mv.clone()))
        })
        .expect("the network's top moves hold a pocket move in one of these positions");
    study(&mut tab, "pocket-copper", &sfen);
    click(&mut tab, "#net-go");
    wait_for(&mut tab, "the policy's arrows", "document.querySelectorAll('#arrows polygon.pol').length === 4");
    let usi = serde_json::to_string(&pocket_move.usi).unwrap();
    let drawn = js(
        &mut tab,
        &format!(
            "(() => {{
                const a = [...document.querySelectorAll('#arrows polygon.pol')].find(p => p.dataset.usi === {usi});
                if (!a) return null;
                const pts = a.getAttribute('points').split(' ').map(p => p.split(',').map(Number));
                const box = place => {{
                    const r = document.querySelector(place.startsWith('sq:') ? `rect.sq[data-at=\"${{place}}\"]` : `g[data-at=\"${{place}}\"] > rect`);
                    return ['x', 'y', 'width', 'height'].map(k => +r.getAttribute(k));
                }};
                const inside = (p, b) => p[0] >= b[0] && p[0] <= b[0] + b[2] && p[1] >= b[1] && p[1] <= b[1] + b[3];
                const tail = [(pts[0][0] + pts[6][0]) / 2, (pts[0][1] + pts[6][1]) / 2];
                return {{ from: a.dataset.from, to: a.dataset.to, tail: inside(tail, box(a.dataset.from)), tip: inside(pts[3], box(a.dataset.to)) }};
            }})()"
        ),
    );
    assert!(!drawn.is_null(), "no arrow drawn for {}", pocket_move.usi);
    assert_eq!(drawn["from"], pocket_move.from.as_str());
    assert_eq!(drawn["to"], pocket_move.to.as_str());
    assert_eq!(drawn["tail"], true, "the arrow of {} starts on {}", pocket_move.usi, pocket_move.from);
    assert_eq!(drawn["tip"], true, "the arrow of {} ends on {}", pocket_move.usi, pocket_move.to);
    // Unticking "arrows on the board" takes them away.
    click(&mut tab, "#policy-on-board");
    wait_for(&mut tab, "no arrows", "document.querySelectorAll('#arrows polygon').length === 0");
}

/// Stepping through a game, the analysis panels follow the shown ply: the old ply's numbers
/// go at once, and the new ply's (the library's) come, the search's too; a stopped search
/// stays with its ply and says so.
#[test]
fn a_step_refreshes_the_analysis() {
    let out = tempfile::tempdir().unwrap();
    let server = server(out.path());
    let mut tab = open(&server);
    let v = Variant::builtin("pocket-copper").unwrap();
    let net = neteval::load(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../models/pocket-copper")), v).unwrap();
    let moves = ["C&5e", "3c3d", "7g7f"];
    study(&mut tab, "pocket-copper", &format!("sfen {} moves {}", v.start_sfen, moves.join(" ")));
    let value_at = |ply: usize| {
        let mut g = Game::new(Position::start(v), None);
        for m in &moves[..ply] {
            g.play_usi(m).unwrap();
        }
        format!("value {:.3}", play::analysis::network_view(&net, &g, 8).unwrap().value)
    };
    click(&mut tab, "#net-go");
    // The network's table pushes the buttons below it down: clicked once it is there.
    wait_for(&mut tab, "the network's view of ply 3", "document.getElementById('net').dataset.key === '3:'");
    click(&mut tab, "#ab-go");
    wait_for(&mut tab, "the analysis of ply 3", "document.getElementById('net').dataset.key === '3:' && document.getElementById('ab').dataset.key === '3:'");
    let shown = js(&mut tab, "document.getElementById('net-value').textContent");
    assert!(shown.as_str().unwrap().contains(&value_at(3)), "{shown}");
    let ab3 = js(&mut tab, "document.getElementById('ab').textContent");
    set_value(&mut tab, "sims", "32");
    click(&mut tab, "#search-go");
    wait_for(&mut tab, "the search of ply 3", "!!st.search && !st.search.running && !!document.getElementById('search-moves')");
    for ply in [2usize, 1] {
        if ply == 1 {
            // Stopped: the search stays with its position, and says so elsewhere.
            click(&mut tab, "#search-stop");
            wait_for(&mut tab, "the stop", "!A.wantSearch && !st.search.running");
        }
        click(&mut tab, "#prev");
        // At once: no number of the ply left under the new heading.
        let stale = js(
            &mut tab,
            &format!(
                "document.getElementById('an-ply').textContent === '(ply {ply})' && (!document.getElementById('net-value') || document.getElementById('net').dataset.key === '{ply}:') && (!document.getElementById('search-moves') || searchHere())"
            ),
        );
        assert_eq!(stale, Value::Bool(true), "ply {ply}: the old analysis stayed under the new heading");
        wait_for(
            &mut tab,
            "the analysis of the new ply",
            &format!("document.getElementById('net').dataset.key === '{ply}:' && document.getElementById('ab').dataset.key === '{ply}:'"),
        );
        let shown = js(&mut tab, "document.getElementById('net-value').textContent");
        assert!(shown.as_str().unwrap().contains(&value_at(ply)), "ply {ply}: {shown} vs {}", value_at(ply));
        if ply == 2 {
            // The search follows too: the library's search of this position, with its arrows.
            wait_for(&mut tab, "the search of ply 2", "st.search_ply === 2 && !st.search.running && !!document.getElementById('search-moves')");
            let mut g = Game::new(Position::start(v), None);
            for m in &moves[..2] {
                g.play_usi(m).unwrap();
            }
            let mut search = search::Search::with_seed(g, play::analysis::analysis_config(32), play::analysis::ANALYSIS_SEED);
            search.run(&net);
            let want: Vec<String> = play::analysis::search_view(&search, 8).lines.iter().map(|l| format!("{} {}", l.mv.usi, l.visits)).collect();
            let shown =
                js(&mut tab, "[...document.querySelectorAll('#search-moves tr[data-usi]')].map(r => r.dataset.usi + ' ' + r.cells[1].textContent).join(',')");
            assert_eq!(shown.as_str().unwrap(), want.join(","));
            assert!(!drawn_arrows(&mut tab, "srch").is_empty());
        } else {
            assert!(
                js(
                    &mut tab,
                    "!!document.getElementById('search-elsewhere') && !document.getElementById('search-moves') && !document.querySelector('#arrows polygon.srch')"
                ) == Value::Bool(true),
                "ply {ply}: the search of ply 2 is not shown as this ply's"
            );
        }
    }
    let ab1 = js(&mut tab, "document.getElementById('ab').textContent");
    let mut g = Game::new(Position::start(v), None);
    g.play_usi(moves[0]).unwrap();
    let want = play::analysis::alphabeta_view(&g, 3).unwrap().unwrap();
    assert!(ab1.as_str().unwrap().starts_with(&format!("{} (depth {})", want.score, want.depth)), "{ab1} vs {want:?} (ply 3 said {ab3})");
}

/// Copy SFEN, USI line and KIF: what is copied, read by the rules engine, is the position
/// shown (a variation's too) and the game that led to it.
#[test]
fn copied_sfen_usi_line_and_kif_read_back_to_the_shown_position() {
    let out = tempfile::tempdir().unwrap();
    let server = server(out.path());
    let mut tab = open(&server);
    let v = Variant::builtin("pocket-copper").unwrap();
    let moves = ["C&5e", "3c3d", "7g7f", "C*4e", "5e&"];
    study(&mut tab, "pocket-copper", &format!("sfen {} moves {}", v.start_sfen, moves.join(" ")));
    click(&mut tab, "#first");
    for ply in 1..=3 {
        click(&mut tab, "#next");
        wait_for(&mut tab, "the ply", &format!("document.getElementById('plyno').textContent.startsWith('ply {ply} ')"));
    }
    // A variation at ply 3: White drops the Copper elsewhere.
    let here = legal_here(&mut tab);
    let other = here["legal"].as_array().unwrap().iter().map(|m| m["u"].as_str().unwrap()).find(|u| u.starts_with("C*") && *u != moves[3]).unwrap().to_string();
    click_move(&mut tab, &here, &other);
    wait_for(&mut tab, "the variation", "!!cur && cur.i === 1");
    let line: Vec<&str> = moves[..3].iter().copied().chain([other.as_str()]).collect();
    let want = position_after(v, &v.start_sfen, &line);
    // The page may use the clipboard (as a person's browser lets it when asked); what is
    // read back is the clipboard's text.
    let origin = format!("http://{}", server.addr());
    tab.call("Browser.grantPermissions", serde_json::json!({ "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"], "origin": origin }));
    let copied = |tab: &mut Chromium, button: &str, kind: &str| -> String {
        js(tab, "document.getElementById('copy-note').textContent = '', true");
        click(tab, button);
        let name = [("sfen", "SFEN"), ("usi", "USI line"), ("kif", "KIF")].iter().find(|(k, _)| *k == kind).unwrap().1;
        wait_for(tab, "the copy", &format!("document.getElementById('copy-note').textContent === 'copied the {name}'"));
        let text = js(tab, "navigator.clipboard.readText()").as_str().unwrap().to_string();
        assert_eq!(js(tab, "document.getElementById('copied').value").as_str(), Some(text.as_str()), "the page shows what it copied");
        text
    };
    let sfen = copied(&mut tab, "#copy-sfen", "sfen");
    assert_eq!(Position::from_sfen(v, &sfen).unwrap().to_sfen(), want.to_sfen(), "the copied SFEN is the position shown");
    let usi = copied(&mut tab, "#copy-usi", "usi");
    let (start, usi_moves) = gamerecords::parse_sfen_line(&usi, v).unwrap();
    assert_eq!(usi_moves, line, "{usi}");
    let usi_refs: Vec<&str> = usi_moves.iter().map(String::as_str).collect();
    assert_eq!(position_after(v, &start, &usi_refs).to_sfen(), want.to_sfen());
    assert_eq!(js(&mut tab, "document.getElementById('copy-kif').disabled"), Value::Bool(true), "KIF is for standard shogi");
    // Standard shogi: the KIF of the game to the shown ply.
    let s = Variant::builtin("shogi").unwrap();
    let shogi_moves = ["7g7f", "3c3d", "8h2b+", "3a2b"];
    study(&mut tab, "shogi", &format!("startpos moves {}", shogi_moves.join(" ")));
    click(&mut tab, "#prev");
    wait_for(&mut tab, "ply 3", "document.getElementById('plyno').textContent.startsWith('ply 3 ')");
    let kif = copied(&mut tab, "#copy-kif", "kif");
    let record = gamerecords::kif::from_kif(&kif).unwrap();
    assert_eq!(record.moves, shogi_moves[..3].to_vec(), "{kif}");
    let sfen = copied(&mut tab, "#copy-sfen", "sfen");
    assert_eq!(Position::from_sfen(s, &sfen).unwrap().to_sfen(), position_after(s, &s.start_sfen, &shogi_moves[..3]).to_sfen());
}

/// The board editor: a position set up by clicks (pieces, a hand, a pocket), checked by the
/// rules engine (a dead pawn refused with its reason), then played from.
#[test]
fn an_edited_position_is_checked_by_the_rules_engine_and_played_from() {
    let out = tempfile::tempdir().unwrap();
    let server = server(out.path());
    let mut tab = open(&server);
    let v = Variant::builtin("pocket-copper").unwrap();
    study(&mut tab, "pocket-copper", &v.start_sfen);
    click(&mut tab, "#edit");
    wait_for(&mut tab, "the editor", "!document.getElementById('editor').hidden");
    click(&mut tab, "#ed-clear");
    let square = |file: usize, rank: char| (rank as usize - 'a' as usize) * 9 + file - 1;
    let put = |tab: &mut Chromium, tok: &str, sq: usize| {
        click(tab, &format!("#palette button[data-tok=\"{tok}\"]"));
        click(tab, &format!("rect.sq[data-at=\"sq:{sq}\"]"));
    };
    put(&mut tab, "K", square(5, 'i'));
    put(&mut tab, "k", square(5, 'a'));
    put(&mut tab, "P", square(7, 'g'));
    put(&mut tab, "s", square(3, 'c'));
    click(&mut tab, "#ed-hand-b-G-plus");
    click(&mut tab, "#palette button[data-tok=\"C\"]");
    click(&mut tab, "#pocket-b > rect");
    wait_for(&mut tab, "the rules engine's check", "document.getElementById('ed-check').textContent.startsWith('a legal position')");
    // A Black pawn on the last rank could never move: the rules engine says so.
    put(&mut tab, "P", square(1, 'a'));
    wait_for(&mut tab, "the refusal", "document.getElementById('ed-check').textContent.includes('could never move again')");
    assert_eq!(js(&mut tab, "document.getElementById('ed-play').disabled"), Value::Bool(true));
    put(&mut tab, "P", square(1, 'a')); // the same piece again empties the square
    wait_for(&mut tab, "the rules engine's check", "document.getElementById('ed-check').textContent.startsWith('a legal position')");
    let want = Position::from_sfen(v, "4k4/9/6s2/9/9/9/2P6/9/4K4 b G 1 C").unwrap();
    assert_eq!(read_back(&mut tab), viewer::game::canonical(&want), "the editor draws what was set up");
    let before = js(&mut tab, "st.id");
    click(&mut tab, "#ed-play");
    wait_for(&mut tab, "the game from the edited position", &format!("!!st && st.id !== {before}"));
    let st = state(&mut tab);
    assert_eq!(st["plies"][0]["s"].as_str().unwrap(), want.to_sfen());
    // Played from: the Copper out of the pocket.
    let usi = "C&5e";
    assert!(st["legal"].as_array().unwrap().iter().any(|m| m["u"] == usi));
    click_move(&mut tab, &st, usi);
    wait_for(&mut tab, "the move", "!!st && st.plies.length === 2");
    let mut g = Game::new(want.clone(), None);
    g.play_usi(usi).unwrap();
    assert_eq!(read_back(&mut tab), viewer::game::canonical(g.position()));
    let st = state(&mut tab);
    let record = &gamerecords::read_jsonl(Path::new(st["record"].as_str().unwrap())).unwrap()[0];
    assert_eq!(record.start_sfen, want.to_sfen());
    assert_eq!(record.moves, vec![usi.to_string()]);
    // The server's own check, asked directly: a clear 400 for a position it refuses.
    let token = server.url().split("token=").nth(1).unwrap().to_string();
    let body = serde_json::json!({"variant": "pocket-copper", "sfen": "P3k4/9/9/9/9/9/9/9/4K4 b - 1 -"}).to_string();
    match ureq::post(&format!("http://{}/api/position?token={token}", server.addr())).set("content-type", "application/json").send_string(&body) {
        Err(ureq::Error::Status(400, r)) => assert!(r.into_string().unwrap().contains("could never move again")),
        other => panic!("a dead pawn: {other:?}"),
    }
}

/// The person's clock: with a generous clock a move spends main time (and the game goes
/// on); with a tiny one (1 s main time, 1 s byoyomi) the person who does not move loses
/// on time, the page says so, the record keeps it, and a late move is refused.
#[test]
fn the_persons_clock_flags_them_at_time_out() {
    let out = tempfile::tempdir().unwrap();
    let server = server(out.path());
    let mut tab = open(&server);
    set_value(&mut tab, "clock-main", "600");
    set_value(&mut tab, "clock-byoyomi", "30");
    let st = new_game(&mut tab, "minishogi", "black", "random,name=rnd");
    assert_eq!(st["clock"]["main_ms"], 600_000);
    assert_eq!(st["clock"]["running"], true);
    wait_for(&mut tab, "the clock shown", "document.getElementById('clock').textContent.startsWith('your clock')");
    let usi = st["legal"][0]["u"].as_str().unwrap().to_string();
    click_move(&mut tab, &st, &usi);
    wait_for(&mut tab, "the reply", "!!st && st.plies.length === 3 && !st.thinking");
    let st = state(&mut tab);
    assert!(st["clock"]["remaining_ms"].as_u64().unwrap() < 600_000, "the move spent main time: {}", st["clock"]);
    assert_eq!((st["over"].clone(), st["clock"]["running"].clone()), (Value::Bool(false), Value::Bool(true)));
    // The tiny clock.
    set_value(&mut tab, "clock-main", "1");
    set_value(&mut tab, "clock-byoyomi", "1");
    let st = new_game(&mut tab, "minishogi", "black", "random,name=rnd");
    assert_eq!((st["clock"]["main_ms"].clone(), st["clock"]["byoyomi_ms"].clone()), (Value::from(1000), Value::from(1000)));
    wait_for(&mut tab, "the flag", "!!st && st.over");
    let st = state(&mut tab);
    assert_eq!(st["reason"], "time-forfeit");
    assert_eq!(st["result"], "0-1");
    assert!(js(&mut tab, "document.getElementById('status').textContent").as_str().unwrap().contains("the clock ran out"));
    let record = &gamerecords::read_jsonl(Path::new(st["record"].as_str().unwrap())).unwrap()[0];
    assert_eq!(record.end.map(|e| e.ending), Some(gamerecords::Ending::TimeForfeit));
    let token = server.url().split("token=").nth(1).unwrap().to_string();
    let late = serde_json::json!({ "usi": "4e4d" }).to_string();
    match ureq::post(&format!("http://{}/api/games/{}/move?token={token}", server.addr(), st["id"])).set("content-type", "application/json").send_string(&late)
    {
        Err(ureq::Error::Status(422, r)) => assert!(r.into_string().unwrap().contains("time ran out")),
        other => panic!("a move after the flag: {other:?}"),
    }
    // A clock on a study board is refused with a reason.
    let study = serde_json::json!({"variant": "minishogi", "side": "both", "clock_main_ms": 1000}).to_string();
    match ureq::post(&format!("http://{}/api/games?token={token}", server.addr())).set("content-type", "application/json").send_string(&study) {
        Err(ureq::Error::Status(400, r)) => assert!(r.into_string().unwrap().contains("study board")),
        other => panic!("a clock on a study board: {other:?}"),
    }
}

/// Playing White, the board is turned (White's pieces at the bottom); Flip turns it back.
#[test]
fn the_board_is_turned_for_white_and_flip_turns_it() {
    let out = tempfile::tempdir().unwrap();
    let server = server(out.path());
    let mut tab = open(&server);
    let king_y = |tab: &mut Chromium, tok: &str| {
        js(tab, &format!("document.querySelector('#pieces g[data-tok=\"{tok}\"]').getBoundingClientRect().y")).as_f64().unwrap()
    };
    new_game(&mut tab, "pocket-copper", "black", "random,name=rnd");
    assert!(king_y(&mut tab, "K") > king_y(&mut tab, "k"), "playing Black, Black's king is at the bottom");
    new_game(&mut tab, "pocket-copper", "white", "random,name=rnd");
    wait_my_turn(&mut tab);
    assert!(king_y(&mut tab, "k") > king_y(&mut tab, "K"), "playing White, White's king is at the bottom");
    let hand_y = |tab: &mut Chromium, side: &str| js(tab, &format!("document.getElementById('side-{side}').getBoundingClientRect().y")).as_f64().unwrap();
    assert!(hand_y(&mut tab, "w") > hand_y(&mut tab, "b"), "and White's hand below the board");
    click(&mut tab, "#flip");
    wait_for(&mut tab, "the board turned", "document.querySelector('#pieces g[data-tok=\"K\"]').getBoundingClientRect().y > document.querySelector('#pieces g[data-tok=\"k\"]').getBoundingClientRect().y");
    // A move still goes where it is clicked on the turned board.
    let st = state(&mut tab);
    let usi = st["legal"][0]["u"].as_str().unwrap().to_string();
    click_move(&mut tab, &st, &usi);
    wait_for(&mut tab, "the reply", "!!st && st.plies.length === 4 && !st.thinking");
    assert_eq!(state(&mut tab)["usi"][1], usi.as_str());
}

/// "Continue from here" takes the moves that led to the shown position along: a study
/// board continued from a game that repeated its start three times ends by repetition at
/// the fourth, as the game would have.
#[test]
fn continuing_from_a_position_keeps_the_history_for_repetitions() {
    let out = tempfile::tempdir().unwrap();
    let server = server(out.path());
    let mut tab = open(&server);
    let shuffle = ["5i5h", "5a5b", "5h5i", "5b5a"];
    let moves: Vec<&str> = shuffle.iter().cycle().take(11).copied().collect();
    let st = study(&mut tab, "shogi", &format!("startpos moves {}", moves.join(" ")));
    assert_eq!(st["over"], false);
    let first = st["id"].as_u64().unwrap();
    click(&mut tab, "#study");
    wait_for(&mut tab, "the study board", &format!("!!st && st.id !== {first}"));
    let st = state(&mut tab);
    assert_eq!(st["plies"].as_array().unwrap().len(), 12, "the moves came along");
    assert_eq!(st["usi"], serde_json::json!(moves));
    click_move(&mut tab, &st, "5b5a");
    wait_for(&mut tab, "the move", "!!st && st.plies.length === 13");
    let st = state(&mut tab);
    assert_eq!(st["over"], true, "the start came a fourth time: {}", st["reason_text"]);
    assert!(st["reason_text"].as_str().unwrap().contains("repetition"), "{}", st["reason_text"]);
}
