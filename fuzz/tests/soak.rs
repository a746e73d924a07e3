//! The soak harness itself: every target's seeds parse (so mutations start from valid
//! inputs and reach the code behind the format checks), a short soak of each finds no
//! failure, and a parser that panics is caught and reported with its input.

use fuzz_soak::{mutate, soak, targets, Target};
use rand::SeedableRng;

fn root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

#[test]
fn every_target_accepts_its_seeds_and_survives_a_short_soak() {
    let scratch = tempfile::tempdir().unwrap();
    let all = targets(&root(), scratch.path());
    assert_eq!(all.len(), 11);
    for t in &all {
        let seeds = t.corpus.len() as u64;
        let report = soak(t, 7, |n| n < seeds, |_| {});
        assert_eq!(report.accepted, seeds, "{}: a seed input is refused: {:?}", t.name, report.failures.first().map(|f| &f.1));
        let report = soak(t, 7, |n| n < seeds + 300, |_| {});
        assert!(report.failures.is_empty(), "{}: {:?}", t.name, report.failures.iter().map(|f| (&f.1, String::from_utf8_lossy(&f.0))).collect::<Vec<_>>());
        assert!(report.accepted < report.executions, "{}: no mutant was refused, so mutation does nothing", t.name);
    }
}

#[test]
fn a_panicking_parser_is_reported_with_its_input() {
    let t = Target {
        name: "toy",
        what: "panics on a 'Z'",
        corpus: vec![b"ABCDEFGH".to_vec()],
        run: Box::new(|b| if b.contains(&b'Z') { panic!("found Z") } else { true }),
    };
    let mut calls = 0;
    let report = soak(&t, 1, |n| n < 20_000, |_| calls += 1);
    assert_eq!((report.executions, calls), (20_000, 20_000));
    assert!(!report.failures.is_empty(), "random bytes write a 'Z' in 20000 tries");
    for (input, message) in &report.failures {
        assert!(input.contains(&b'Z') && message == "found Z");
    }
    assert_eq!(report.accepted as usize + report.failures.len(), 20_000);
}

#[test]
fn mutations_are_reproducible_and_varied() {
    let corpus = vec![b"position startpos moves 7g7f 3c3d".to_vec()];
    let run = |seed| {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        (0..200).map(|_| mutate(&mut rng, &corpus, 100)).collect::<Vec<_>>()
    };
    assert_eq!(run(3), run(3));
    let distinct: std::collections::HashSet<_> = run(3).into_iter().collect();
    assert!(distinct.len() > 150, "{} distinct mutants of 200", distinct.len());
    assert!(run(3).iter().all(|m| m.len() <= 100));
}
