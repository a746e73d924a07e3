//! Malformed input gets a typed error that says what and where, and no input makes a
//! parser panic (property tests over random and mutated text).

mod common;
use common::*;
use proptest::prelude::*;
use rules::{builtin_source, Position, SfenError, Variant, BUILTIN};

#[test]
fn sfen_errors_say_what_and_where() {
    let v = variant("shogi");
    let e = |s: &str| Position::from_sfen(v, s).unwrap_err();
    assert!(matches!(e("lnsgkgsnl/1r5b1 b - 1"), SfenError::RankCount { found: 2, expected: 9 }));
    assert!(matches!(e("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSN b - 1"), SfenError::RankWidth { rank: 'i', found: 8, .. }));
    match e("lnsgkgsnl/1r5b1/ppppxpppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1") {
        SfenError::UnknownPiece { column, token } => assert_eq!((column, token.as_str()), (21, "x")),
        other => panic!("{other:?}"),
    }
    assert!(matches!(e("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL x - 1"), SfenError::BadSide { .. }));
    assert!(matches!(e("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 0"), SfenError::BadMoveNumber { .. }));
    assert!(matches!(e("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b K 1"), SfenError::NotHandPiece { .. }));
    assert!(matches!(e("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1 C"), SfenError::NoPockets { .. }));
    assert!(matches!(e("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSG+KGSNL b - 1"), SfenError::NotPromotable { .. }));
    assert!(matches!(e("4k4/9/9/9/9/9/P8/P8/4K4 b - 1"), SfenError::TwoOnFile { file: 9, .. }));
    assert!(matches!(e("P3k4/9/9/9/9/9/9/9/4K4 b - 1"), SfenError::DeadPiece { .. }));
    assert!(matches!(e("4k4/9/9/9/4R4/9/9/9/K8 b - 1"), SfenError::OpponentInCheck { .. }));
    assert!(matches!(e("4k4/9/9/9/9/9/9/9/3KK4 b - 1"), SfenError::TooManyKings { .. }));
    let pc = variant("pocket-copper");
    assert!(matches!(Position::from_sfen(pc, "4k4/9/9/9/9/9/9/9/4K4 b - 1 CG"), Err(SfenError::BadPocket { .. })));
    // Messages name the place.
    let msg = e("lnsgkgsnl/1r5b1/ppppxpppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1").to_string();
    assert!(msg.contains("column 21") && msg.contains("'x'"), "{msg}");
}

#[test]
fn variant_definition_errors_list_every_problem() {
    let text = builtin_source("shogi")
        .unwrap()
        .replace("betza = \"FfW\"", "betza = \"FfX\"")
        .replace("letter = \"N\"", "letter = \"L\"")
        .replace("promotion_ranks = 3", "promotion_ranks = 12");
    let err = Variant::from_toml(&text, &[]).unwrap_err();
    let all = err.problems.join("\n");
    assert!(err.problems.len() >= 3, "{all}");
    assert!(all.contains("pieces.Silver.betza") && all.contains("unknown atom 'X'"), "{all}");
    assert!(all.contains("share the letter L"), "{all}");
    assert!(all.contains("promotion_ranks 12"), "{all}");
}

#[test]
fn unknown_keys_options_and_choices_are_rejected() {
    let text = builtin_source("shogi").unwrap().replace("max_plies = 512", "max_plies = 512\nmax_plys = 3");
    let err = Variant::from_toml(&text, &[]).unwrap_err().to_string();
    assert!(err.contains("max_plys"), "{err}");
    let err = Variant::load("pocket-copper", &[("flag".into(), "on".into())]).unwrap_err().to_string();
    assert!(err.contains("unknown option 'flag'"), "{err}");
    let err = Variant::load("pocket-copper", &[("start".into(), "nowhere".into())]).unwrap_err().to_string();
    assert!(err.contains("unknown choice 'nowhere'") && err.contains("both-in-hand"), "{err}");
    let err = Variant::load("/nonexistent/variant.toml", &[]).unwrap_err().to_string();
    assert!(err.contains("/nonexistent/variant.toml"), "{err}");
}

#[test]
fn a_bad_start_position_in_a_definition_is_reported() {
    let text = builtin_source("shogi").unwrap().replace("PPPPPPPPP/1B5R1", "PPPPPPPPP/1B5Q1");
    let err = Variant::from_toml(&text, &[]).unwrap_err().to_string();
    assert!(err.contains("start position") && err.contains("'Q'"), "{err}");
}

fn mutate(base: &str, edits: &[(usize, char)]) -> String {
    let mut chars: Vec<char> = base.chars().collect();
    for &(i, c) in edits {
        if chars.is_empty() {
            break;
        }
        let i = i % chars.len();
        match c as u32 % 3 {
            0 => chars[i] = c,
            1 => chars.insert(i, c),
            _ => {
                chars.remove(i);
            }
        }
    }
    chars.into_iter().collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn sfen_parser_never_panics_on_random_text(s in "\\PC{0,120}") {
        for name in BUILTIN {
            let _ = Position::from_sfen(variant(name), &s);
        }
    }

    #[test]
    fn sfen_parser_never_panics_on_mutated_positions(edits in prop::collection::vec((0usize..200, prop::char::range(' ', '~')), 1..6)) {
        for name in BUILTIN {
            let v = variant(name);
            let s = mutate(&v.start_sfen, &edits);
            if let Ok(p) = Position::from_sfen(v, &s) {
                // Whatever parses must round-trip and generate moves without panicking.
                prop_assert_eq!(Position::from_sfen(v, &p.to_sfen()).unwrap(), p.clone());
                let _ = p.legal_moves();
            }
        }
    }

    #[test]
    fn move_parser_never_panics(s in "[0-9a-z*&+A-Z]{0,8}") {
        for name in BUILTIN {
            let p = Position::start(variant(name));
            if let Ok(m) = p.parse_usi(&s) {
                prop_assert!(p.legal_moves().contains(&m));
            }
        }
    }

    #[test]
    fn variant_loader_never_panics_on_mutated_definitions(edits in prop::collection::vec((0usize..4000, prop::char::range(' ', '~')), 1..4)) {
        for name in BUILTIN {
            let text = mutate(builtin_source(name).unwrap(), &edits);
            if let Ok(v) = Variant::from_toml(&text, &[]) {
                let v = v.leak();
                let _ = rules::perft::perft(&Position::start(v), 2);
            }
        }
    }
}

/// Loading a variant with options twice gives one variant, not a new leaked copy each
/// time; a shipped variant loaded with its default options is the builtin itself; and so
/// positions of equal variants compare equal (positions compare variants by reference).
#[test]
fn loading_the_same_variant_twice_gives_the_same_variant() {
    let opts = vec![("start".to_string(), "no-copper".to_string())];
    let a = Variant::load("pocket-copper", &opts).unwrap();
    let b = Variant::load("pocket-copper", &opts).unwrap();
    assert!(std::ptr::eq(a, b), "a second load leaked a second variant");
    let default_choice = Variant::builtin("pocket-copper").unwrap().options.clone();
    let c = Variant::load("pocket-copper", &default_choice).unwrap();
    assert!(std::ptr::eq(c, Variant::builtin("pocket-copper").unwrap()));
    assert_eq!(Position::start(c), Position::start(Variant::builtin("pocket-copper").unwrap()));
    // Different options are different variants.
    assert!(!std::ptr::eq(a, c));
}
