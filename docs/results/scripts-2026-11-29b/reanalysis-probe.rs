// The noise floor of a policy target (docs/ABLATIONS.md, "Reanalysis"): generation 1's games
// of run `fmre` searched again by the very network that played them (its model 0), 5% of
// their positions. Run as a throwaway integration test of the `cli` crate, with
// /tmp/rx/selfplay/gen-0001 a copy of data/exp/fmre/selfplay/gen-0001 and /tmp/rx/config.toml
// fmre's config with run_dir = "/tmp/rx" and reanalyse_fraction = 0.05:
//   cp THIS cli/tests/zz_probe.rs
//   PROBE_MODEL=data/exp/fmre/models/gen-0000 PROBE_G=2 cargo test --release -p cli --test zz_probe -- --ignored --nocapture
#[test]
#[ignore]
fn probe() {
    let d = std::path::Path::new("/tmp/rx");
    let cfg = pipeline::RunConfig::load(&d.join("config.toml")).unwrap();
    let mut shards: Vec<std::path::PathBuf> = std::fs::read_dir(d.join("selfplay/gen-0001/local"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "shard"))
        .collect();
    shards.sort();
    let model = std::env::var("PROBE_MODEL").unwrap();
    let g: u32 = std::env::var("PROBE_G").unwrap().parse().unwrap();
    pipeline::reanalyse::reanalyse_window(&pipeline::RunDir(d.to_path_buf()), &cfg, g, shards, std::path::Path::new(&model), false).unwrap();
    println!("{}", std::fs::read_to_string(d.join(format!("reanalysed/gen-{g:04}.json"))).unwrap());
}
