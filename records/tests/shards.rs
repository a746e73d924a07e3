use records::{read_shard, write_shard, Record, RecordError, ShardHeader};

fn sample(n: usize) -> (ShardHeader, Vec<Record>) {
    let header = ShardHeader {
        variant: "pocket-copper".into(),
        options: vec![("start".into(), "seed".into())],
        planes_version: 1,
        action_version: 1,
        generation: 3,
        games: 2,
    };
    let records = (0..n)
        .map(|i| Record {
            sfen: format!("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b c {} C", i + 1),
            repetitions: 1,
            ply: i as u16,
            max_plies: 512,
            policy: vec![(i as u32, 0.75), (7, 0.25)],
            full_search: i % 4 == 0,
            search_value: 0.1 * i as f32,
            result: [-1, 0, 1][i % 3],
            start: "seed".into(),
            game_id: (i / 10) as u64,
        })
        .collect();
    (header, records)
}

#[test]
fn shard_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.shard");
    let (h, r) = sample(100);
    write_shard(&path, &h, &r).unwrap();
    let s = read_shard(&path).unwrap();
    assert_eq!((s.header, s.records), (h, r));
    // No temporary file is left behind.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn truncated_and_corrupt_shards_are_refused_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("b.shard");
    let (h, r) = sample(50);
    write_shard(&path, &h, &r).unwrap();
    let bytes = std::fs::read(&path).unwrap();

    std::fs::write(&path, &bytes[..bytes.len() - 10]).unwrap();
    let e = read_shard(&path).unwrap_err();
    assert!(matches!(e, RecordError::Truncated { .. }), "{e}");
    assert!(e.to_string().contains("b.shard"));

    let mut flipped = bytes.clone();
    let last = flipped.len() - 5;
    flipped[last] ^= 0x40;
    std::fs::write(&path, &flipped).unwrap();
    assert!(matches!(read_shard(&path).unwrap_err(), RecordError::Checksum { .. }));

    std::fs::write(&path, b"hello world, not a shard at all........").unwrap();
    assert!(matches!(read_shard(&path).unwrap_err(), RecordError::BadMagic { .. }));

    std::fs::write(&path, &bytes[..12]).unwrap();
    assert!(matches!(read_shard(&path).unwrap_err(), RecordError::Truncated { .. }));

    let mut newer = bytes.clone();
    newer[8] = 99;
    std::fs::write(&path, &newer).unwrap();
    assert!(matches!(read_shard(&path).unwrap_err(), RecordError::Version { found: 99, .. }));

    let missing = read_shard(&dir.path().join("missing.shard")).unwrap_err();
    assert!(missing.to_string().contains("missing.shard"));
}
