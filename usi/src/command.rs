//! The commands a GUI sends to an engine, read into checked values: `setoption name N
//! value V`, the variant options of `USI_VariantOptions`, `position startpos|sfen …
//! [moves …]` (every move checked by the rules engine) and the arguments of `go`.
//!
//! Positions and moves of the variants use the project's SFEN/USI extension
//! (docs/NOTATION.md): the pocket as a fifth SFEN field, `7g&` for a pocket move and
//! `C&5e` for a pocket drop.

use rules::{Game, Position, Variant};

/// `name N [value V]` (the words after `setoption`) into the option's name and value
/// (empty when none is given).
pub fn parse_setoption(rest: &str) -> Option<(String, String)> {
    let rest = rest.strip_prefix("name ")?;
    Some(match rest.split_once(" value ") {
        Some((n, v)) => (n.trim().to_string(), v.trim().to_string()),
        None => (rest.trim().to_string(), String::new()),
    })
}

/// `name=choice` pairs separated by spaces or commas; `<empty>` or nothing for none.
pub fn parse_variant_options(text: &str) -> Result<Vec<(String, String)>, String> {
    let text = text.trim();
    if text.is_empty() || text == "<empty>" {
        return Ok(Vec::new());
    }
    text.split([' ', ',', ';'])
        .filter(|p| !p.is_empty())
        .map(|p| p.split_once('=').map(|(a, b)| (a.to_string(), b.to_string())).ok_or_else(|| format!("USI_VariantOptions: '{p}' is not name=choice")))
        .collect()
}

/// `startpos|sfen SFEN [moves …]` into a game; every move checked.
pub fn parse_position(variant: &'static Variant, rest: &str) -> Result<Game, String> {
    let (head, moves) = match rest.split_once("moves") {
        Some((h, m)) => (h.trim(), m.trim()),
        None => (rest.trim(), ""),
    };
    let pos = if head == "startpos" {
        Position::start(variant)
    } else if let Some(sfen) = head.strip_prefix("sfen") {
        Position::from_sfen(variant, sfen.trim()).map_err(|e| format!("position sfen {}: {e}", sfen.trim()))?
    } else {
        return Err(format!("position: expected startpos or sfen, got '{head}'"));
    };
    let mut game = Game::new(pos, None);
    for (i, m) in moves.split_whitespace().enumerate() {
        game.play_usi(m).map_err(|e| format!("position: move {} ({m}): {e}", i + 1))?;
    }
    Ok(game)
}

/// The arguments of one `go` command, as sent (times in milliseconds; negative numbers
/// read as 0). A key whose value is missing or not a number reads as absent.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GoCommand {
    pub btime: Option<u64>,
    pub wtime: Option<u64>,
    pub binc: Option<u64>,
    pub winc: Option<u64>,
    pub byoyomi: Option<u64>,
    pub movetime: Option<u64>,
    pub nodes: Option<u64>,
    pub depth: Option<u64>,
    /// `btime` or `wtime` was named (even without a readable value): the game has a clock.
    pub clock: bool,
    pub infinite: bool,
    pub ponder: bool,
}

impl GoCommand {
    /// Reads the words after `go`; unknown words are ignored.
    pub fn parse(rest: &str) -> GoCommand {
        let words: Vec<&str> = rest.split_whitespace().collect();
        let num = |key: &str| words.iter().position(|w| *w == key).and_then(|i| words.get(i + 1)).and_then(|v| v.parse::<i64>().ok()).map(|v| v.max(0) as u64);
        let has = |key: &str| words.contains(&key);
        GoCommand {
            btime: num("btime"),
            wtime: num("wtime"),
            binc: num("binc"),
            winc: num("winc"),
            byoyomi: num("byoyomi"),
            movetime: num("movetime"),
            nodes: num("nodes"),
            depth: num("depth"),
            clock: has("btime") || has("wtime"),
            infinite: has("infinite"),
            ponder: has("ponder"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_arguments_are_read() {
        let g = GoCommand::parse("btime 5000 wtime 4000 binc 100 winc 100");
        assert_eq!((g.btime, g.wtime, g.binc, g.winc, g.clock), (Some(5000), Some(4000), Some(100), Some(100), true));
        assert_eq!(GoCommand::parse("nodes 300").nodes, Some(300));
        assert_eq!(GoCommand::parse("movetime -5").movetime, Some(0));
        assert_eq!(GoCommand::parse(""), GoCommand::default());
        let b = GoCommand::parse("btime x");
        assert_eq!((b.btime, b.clock), (None, true));
        assert!(GoCommand::parse("infinite").infinite);
        assert!(GoCommand::parse("ponder btime 0 wtime 0 byoyomi 100").ponder);
    }

    #[test]
    fn options_are_read() {
        assert_eq!(parse_setoption("name USI_Variant value minishogi"), Some(("USI_Variant".into(), "minishogi".into())));
        assert_eq!(parse_setoption("name USI_Ponder"), Some(("USI_Ponder".into(), String::new())));
        assert_eq!(parse_setoption("USI_Ponder"), None);
        assert_eq!(parse_variant_options("start=seed, promoted-knight=gold").unwrap().len(), 2);
        assert_eq!(parse_variant_options("<empty>").unwrap(), Vec::new());
        assert!(parse_variant_options("start").is_err());
    }

    #[test]
    fn positions_are_checked() {
        let v = Variant::builtin("shogi").unwrap();
        assert_eq!(parse_position(v, "startpos moves 7g7f 3c3d").unwrap().ply(), 2);
        let e = parse_position(v, "startpos moves 7g7f 7g7f").unwrap_err();
        assert!(e.contains("move 2 (7g7f)"), "{e}");
        assert!(parse_position(v, "sfen nonsense").is_err());
        let g = parse_position(v, "sfen lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1 moves 2g2f").unwrap();
        assert_eq!(g.ply(), 1);
    }
}
