//! The pages in a real headless browser: Debian's `chromium` (installed by
//! `scripts/install-test-deps.sh`). A page opened with `#selftest` steps through every
//! ply of every game with the arrow keys, reads back from its SVG what it drew (squares,
//! hands, pockets, the side to move, the marked last move) and writes one line per ply
//! into `<pre id="selftest">`; stepping back with the keys and by the slider must give
//! the same lines. Each line is compared here with what our rules engine says of that
//! ply (`viewer::game::canonical` of the replayed position, the marks from the move's
//! USI text). Nothing depends on wall-clock speed: chromium runs the page's script to the
//! end before it dumps the DOM.

use arena::runner::JobResult;
use arena::tournament::{Mode, OpeningsConfig, TournamentConfig};
use rules::{Game, Position, Variant};
use std::path::{Path, PathBuf};
use std::process::Command;

const CHROMIUM: &str = "/usr/bin/chromium";

/// The DOM of `page` after its script ran, opened at `#hash`.
fn dump_dom(page: &Path, hash: &str) -> String {
    let profile = tempfile::tempdir().unwrap();
    let out = Command::new(CHROMIUM)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions"])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("--dump-dom")
        .arg(format!("file://{}#{hash}", page.display()))
        .output()
        .unwrap_or_else(|e| panic!("cannot start {CHROMIUM} ({e}); run scripts/install-test-deps.sh"));
    assert!(out.status.success(), "chromium failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&amp;", "&")
}

/// The lines the page wrote into `<pre id="selftest">`.
fn selftest_lines(dom: &str) -> Vec<String> {
    let start = dom.find("<pre id=\"selftest\">").expect("the page has its self-test element") + "<pre id=\"selftest\">".len();
    let end = start + dom[start..].find("</pre>").unwrap();
    unescape(&dom[start..end]).lines().map(str::to_string).collect()
}

/// The squares a USI move marks, sorted: `7g7f` → `7f,7g`; `P*5e`, `C&5e` → `5e`; `7g&` → `7g`.
fn marks_of_usi(usi: &str) -> String {
    let t = usi.trim_end_matches('+');
    let mut squares: Vec<&str> = if t.contains('*') || (t.contains('&') && !t.ends_with('&')) {
        vec![&t[t.len() - 2..]]
    } else if t.ends_with('&') {
        vec![&t[..2]]
    } else {
        vec![&t[..2], &t[2..4]]
    };
    squares.sort();
    squares.join(",")
}

/// What the engine says of every ply of a record: `g<G> p<P> <canonical> last:<marks>`.
fn expected_lines(records: &[&gamerecords::GameRecord]) -> Vec<String> {
    let mut out = Vec::new();
    for (g, r) in records.iter().enumerate() {
        let v = r.load_variant().unwrap();
        let mut game = Game::new(Position::from_sfen(v, &r.start_sfen).unwrap(), r.max_plies);
        out.push(format!("g{g} p0 {} last:-", viewer::game::canonical(game.position())));
        for (i, m) in r.moves.iter().enumerate() {
            game.play_usi(m).unwrap();
            out.push(format!("g{g} p{} {} last:{}", i + 1, viewer::game::canonical(game.position()), marks_of_usi(m)));
        }
    }
    out
}

/// A round robin of cheap players (random, greedy, alpha-beta depth 1) in `variant`.
fn tournament(variant: &str, rounds: u32, dir: &Path) -> Vec<JobResult> {
    let mut c = TournamentConfig::new(["random", "greedy", "alphabeta,depth=1"].map(String::from).to_vec());
    c.variant = variant.into();
    c.mode = Mode::RoundRobin;
    c.rounds = rounds;
    c.threads = 2;
    c.games_in_flight = 4;
    c.max_plies = 160;
    c.max_hands = 3;
    c.openings = OpeningsConfig { file: None, starts: Vec::new(), random_plies: 2 };
    c.out_dir = dir.to_path_buf();
    arena::tournament::run(&c, false).unwrap();
    arena::tournament::read_results(&dir.join("results.jsonl")).unwrap()
}

fn write(dir: &Path, name: &str, html: &str) -> PathBuf {
    let path = dir.join(name);
    viewer::write_page(&path, html).unwrap();
    path
}

/// The page's lines against the engine's, every ply, naming the first difference.
fn check_selftest(page: &Path, expected: &[String]) {
    let lines = selftest_lines(&dump_dom(page, "selftest"));
    let (summary, plies) = lines.split_last().expect("self-test output");
    assert_eq!(plies.len(), expected.len(), "one line per ply; last: {summary}");
    for (got, want) in plies.iter().zip(expected) {
        assert_eq!(got, want, "the page draws something else than the engine's position");
    }
    assert!(summary.ends_with("back-mismatches=0 slider-mismatches=0 end-mismatches=0"), "{summary}");
}

#[test]
fn every_ply_of_every_variant_is_drawn_as_the_engine_says_and_the_url_opens_a_ply() {
    let tmp = tempfile::tempdir().unwrap();
    // A few hundred games of every variant: 34 rounds of 3 pairings, 204 games (Hand
    // shogi: 204 matches of one or more hands).
    for variant in ["pocket-copper", "shogi", "minishogi", "hand-shogi"] {
        let dir = tmp.path().join(variant);
        let results = tournament(variant, 34, &dir);
        let records: Vec<&gamerecords::GameRecord> = results.iter().flat_map(|r| r.hands.iter().map(|h| &h.record)).collect();
        assert!(records.len() >= 200, "{variant}: {} games", records.len());
        let page = write(&dir, "index.html", &viewer::tournament_page(&dir).unwrap());
        let expected = expected_lines(&records);
        check_selftest(&page, &expected);

        // `#game=G&ply=N` opens that game at that ply.
        let g = records.len() / 2;
        let p = records[g].moves.len() / 2;
        let line = selftest_lines(&dump_dom(&page, &format!("game={g}&ply={p}&dump")));
        let want = expected.iter().find(|l| l.starts_with(&format!("g{g} p{p} "))).unwrap();
        assert_eq!(line, std::slice::from_ref(want), "{variant}");
    }
}

/// A ply's "analyse from here" prints the `copper play` command with the game up to that
/// ply; kanji labels draw the traditional pieces and leave the read-back alone.
#[test]
fn a_ply_opens_in_copper_play_and_pieces_read_in_kanji() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("games.sfen");
    let v = Variant::builtin("shogi").unwrap();
    std::fs::write(&file, format!("sfen {} moves 7g7f 3c3d 8h2b+ 3a2b\n", v.start_sfen)).unwrap();
    let page = write(tmp.path(), "games.html", &viewer::games_page(&file, v).unwrap());
    let dom = dump_dom(&page, "game=0&ply=3&analyse&labels=kanji&dump");
    let start = dom.find("<pre id=\"analyse-cmd\" class=\"note\">").expect("the command is shown");
    let cmd = unescape(&dom[start..start + dom[start..].find("</pre>").unwrap()]);
    assert!(cmd.ends_with(&format!("copper play -v shogi --analyse 'sfen {} moves 7g7f 3c3d 8h2b+'", v.start_sfen)), "{cmd}");
    // Kanji on the board: Black's and White's kings, the promoted bishop on 2b.
    assert_eq!(dom.matches(">玉</text>").count(), 2, "two kings");
    assert!(dom.contains(">馬</text>"), "the horse");
    // The read-back (from the pieces' tokens) is the engine's line still.
    let mut g = Game::new(Position::start(v), None);
    for m in ["7g7f", "3c3d", "8h2b+"] {
        g.play_usi(m).unwrap();
    }
    let line = selftest_lines(&dom);
    assert_eq!(line, vec![format!("g0 p3 {} last:2b,8h", viewer::game::canonical(g.position()))]);
}

#[test]
fn hands_and_pockets_are_drawn_at_given_plies() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("games.sfen");
    let v = Variant::builtin("pocket-copper").unwrap();
    // Black's copper out of the pocket, White's dropped from hand and taken, a pawn, the
    // rook into the pocket.
    std::fs::write(&file, format!("# a comment\nsfen {} moves C&5e C*5d 5e5d 4c4d 2h&\n", v.start_sfen)).unwrap();
    let page = write(tmp.path(), "games.html", &viewer::games_page(&file, v).unwrap());
    let lines = selftest_lines(&dump_dom(&page, "selftest"));
    assert_eq!(lines[0], "g0 p0 lnsgkgsnl/.r.....b./ppppppppp/........./........./........./PPPPPPPPP/.B.....R./LNSGKGSNL hb:- hw:c1 pb:C pw:- side:b last:-");
    assert_eq!(lines[2], "g0 p2 lnsgkgsnl/.r.....b./ppppppppp/....c..../....C..../........./PPPPPPPPP/.B.....R./LNSGKGSNL hb:- hw:- pb:- pw:- side:b last:5d");
    assert_eq!(
        lines[3],
        "g0 p3 lnsgkgsnl/.r.....b./ppppppppp/....C..../........./........./PPPPPPPPP/.B.....R./LNSGKGSNL hb:C1 hw:- pb:- pw:- side:w last:5d,5e"
    );
    assert_eq!(lines[5], "g0 p5 lnsgkgsnl/.r.....b./ppppp.ppp/....Cp.../........./........./PPPPPPPPP/.B......./LNSGKGSNL hb:C1 hw:- pb:R pw:- side:w last:2h");
    assert_eq!(lines[6], "selftest-done games=1 back-mismatches=0 slider-mismatches=0 end-mismatches=0");

    // A move that is not legal is an error naming the file and line, not a page.
    std::fs::write(&file, format!("\nsfen {} moves 7g7f 7g7f\n", v.start_sfen)).unwrap();
    let e = viewer::games_page(&file, v).unwrap_err().to_string();
    assert!(e.contains("games.sfen") && e.contains("line 2") && e.contains("ply 2"), "{e}");
}

/// The standings table, as the browser rendered it: (player, Elo) per row in order.
fn rendered_standings(dom: &str) -> Vec<(String, String)> {
    let start = dom.find("<h2>Standings</h2>").expect("a standings table");
    let table = &dom[start..start + dom[start..].find("</table>").unwrap()];
    table
        .split("<tr>")
        .skip(2)
        .map(|row| {
            let cells: Vec<String> = row
                .split("<td>")
                .skip(1)
                .map(|c| {
                    let c = c.split("</td>").next().unwrap();
                    // A linked cell: <a title="...">name</a>
                    let c = c.rsplit_once("\">").map_or(c, |(_, t)| t).trim_end_matches("</a>");
                    unescape(c)
                })
                .collect();
            (cells[1].clone(), cells[2].clone())
        })
        .collect()
}

#[test]
fn the_tournament_page_shows_the_arenas_standings_and_the_study_page_its_cells() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    tournament("minishogi", 3, &dir);
    let page = write(&dir, "index.html", &viewer::tournament_page(&dir).unwrap());
    let dom = dump_dom(&page, "");
    // What `copper arena` reports for the same directory (its summary.json).
    let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    let want: Vec<(String, String)> = summary["ratings"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let elo = e["elo"].as_f64().unwrap();
            (e["name"].as_str().unwrap().to_string(), format!("{:+.0}", if elo.abs() < 0.5 { 0.0 } else { elo }))
        })
        .collect();
    assert_eq!(rendered_standings(&dom), want);
    assert!(dom.contains("<h2>Crosstable</h2>") && dom.contains("<h2>Ratings</h2>") && dom.contains("<svg"), "crosstable and plot");

    // A balance study: random play from two starts; every cell's games are on the page.
    let study_dir = tmp.path().join("study");
    let overrides = balance::Overrides {
        tiers: vec!["random".into()],
        starts: vec!["seed".into(), "no-copper".into()],
        games_per_cell: Some(4),
        threads: Some(2),
        max_plies: Some(120),
        out_dir: Some(study_dir.clone()),
        ..Default::default()
    };
    let cfg = balance::StudyConfig::resolve(None, overrides).unwrap();
    // The study's page rewritten every 3 games as it plays (the hook `copper balance` uses).
    let hook: fn(&Path) = |d| {
        viewer::refresh_page(d, 4).unwrap();
    };
    balance::run_study(&cfg, &balance::RunOptions { show_progress: false, stop_after: None, after_games: Some((3, hook)), remote: None, report_only: false })
        .unwrap();
    assert!(study_dir.join("index.html").exists(), "written while the study played");
    let html = viewer::study_page(&study_dir).unwrap();
    let page = write(&study_dir, "index.html", &html);
    let results = arena::tournament::read_results(&study_dir.join("results.jsonl")).unwrap();
    let records: Vec<&gamerecords::GameRecord> = results.iter().map(|r| &r.hands[0].record).collect();
    check_selftest(&page, &expected_lines(&records));
    let dom = dump_dom(&page, "");
    assert!(dom.contains("<h2>Cells</h2>") && dom.contains("no-copper"), "the cells table");
    assert!(dom.contains("<h2>Comparisons</h2>") && dom.contains("random:no-copper − random:seed"), "the start comparison, named by its cells");
    assert!(dom.contains("<h2>Every start at once</h2>") && dom.contains("1 df"), "the tier's joint test");
}

#[test]
fn bad_sources_are_typed_errors_naming_the_place() {
    let tmp = tempfile::tempdir().unwrap();
    let e = viewer::source_kind(tmp.path()).unwrap_err();
    assert!(matches!(e, viewer::ViewError::UnknownSource { .. }), "{e}");
    let missing = tmp.path().join("nothing-here");
    assert!(matches!(viewer::source_kind(&missing), Err(viewer::ViewError::Io { .. })));
    let t = tmp.path().join("t");
    std::fs::create_dir(&t).unwrap();
    std::fs::write(t.join("tournament.toml"), "players = [\"random\"\nrounds = 1").unwrap();
    let e = viewer::tournament_page(&t).unwrap_err().to_string();
    assert!(e.contains("tournament.toml"), "{e}");
    let jsonl = tmp.path().join("g.jsonl");
    std::fs::write(&jsonl, "{\"variant\": 3}\n{}\n").unwrap();
    let e = viewer::games_page(&jsonl, Variant::builtin("shogi").unwrap()).unwrap_err().to_string();
    assert!(e.contains("g.jsonl") && e.contains("line 1"), "{e}");
}

#[test]
fn the_run_page_shows_self_play_games_from_their_shards_and_evaluation_games() {
    use rand::prelude::*;
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let quick = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/quick.toml")).unwrap();
    // The layout `copper train` and the fleet write: each worker's folder holds its games'
    // shards, each with its log line beside it.
    let worker = run.join("selfplay/gen-0001/w-1");
    std::fs::create_dir_all(&worker).unwrap();
    std::fs::write(run.join("config.toml"), quick).unwrap();
    let v = Variant::builtin("minishogi").unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let mut games = Vec::new();
    for id in 0..3u64 {
        // A random game, its positions recorded as self-play records them.
        let mut game = Game::new(Position::start(v), Some(60));
        let mut recs = Vec::new();
        while !game.is_over() {
            let moves = game.legal_moves();
            let m = *moves.iter().collect::<Vec<_>>().choose(&mut rng).unwrap();
            recs.push(records::Record {
                sfen: game.position().to_sfen(),
                repetitions: 1,
                ply: game.ply() as u16,
                max_plies: 60,
                policy: Vec::new(),
                full_search: false,
                search_value: 0.5,
                result: 0,
                start: "sfen".into(),
                game_id: id,
            });
            game.play(*m).unwrap();
        }
        let header = records::ShardHeader { variant: v.name.clone(), options: Vec::new(), planes_version: 1, action_version: 1, generation: 1, games: 1 };
        let shard = selfplay::shard_path(&worker, id);
        records::write_shard(&shard, &header, &recs).unwrap();
        let line = format!("{{\"game_id\":{id},\"start\":\"sfen\",\"plies\":{},\"black_result\":0,\"ending\":\"max-plies\",\"resign_disabled\":false,\"would_resign\":false,\"false_resignation\":false,\"full_searches\":0,\"prior_entropy_sum\":0.0,\"improvement_kl_sum\":0.0,\"simulations\":0}}", recs.len());
        std::fs::write(shard.with_extension("json"), line).unwrap();
        // The page shows the recorded positions: the last move (after the last record) is not there.
        let mut r = gamerecords::GameRecord::from_game(&game, None, "", "");
        r.moves.truncate(recs.len() - 1);
        r.max_plies = None;
        games.push(r);
    }
    std::fs::write(run.join("summary.tsv"), "generation\tgames\n1\t3\n").unwrap();
    std::fs::create_dir_all(run.join("plots")).unwrap();
    std::fs::write(
        run.join("plots/losses.svg"),
        "<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\" height=\"10\"><text>loss-plot</text></svg>",
    )
    .unwrap();
    let results = tournament("minishogi", 1, &run.join("eval/gen-0001/anchor"));

    let page = write(&run, "index.html", &viewer::run_page(&run, 2).unwrap());
    let mut records: Vec<&gamerecords::GameRecord> = games.iter().take(2).collect();
    records.extend(results.iter().take(2).map(|r| &r.hands[0].record));
    let expected = expected_lines(&records);
    check_selftest(&page, &expected);
    let dom = dump_dom(&page, "");
    assert!(dom.contains("loss-plot") && dom.contains("gen 1 self-play game 0") && dom.contains("max-plies"), "plots inline, games titled");
    // The hook of the loop and the study: the directory's page rewritten in place.
    assert_eq!(viewer::refresh_page(&run, 2).unwrap(), run.join("index.html"));
}

#[test]
fn kif_and_csa_records_are_read_by_the_arenas_readers_and_shown() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("shogi");
    let results = tournament("shogi", 1, &dir);
    let first = results.iter().find(|r| r.job.id == 0).unwrap();
    let expected = expected_lines(&[&first.hands[0].record]);
    for ext in ["kifu", "csa"] {
        let file = dir.join("games").join(format!("000000-1.{ext}"));
        let page = write(tmp.path(), &format!("{ext}.html"), &viewer::games_page(&file, Variant::builtin("shogi").unwrap()).unwrap());
        check_selftest(&page, &expected);
    }
    std::fs::write(tmp.path().join("bad.csa"), "PI\n+\n+7776FU\n-7776FU\n").unwrap();
    let e = viewer::games_page(&tmp.path().join("bad.csa"), Variant::builtin("shogi").unwrap()).unwrap_err().to_string();
    assert!(e.contains("bad.csa") && e.contains("ply 2"), "{e}");
}
