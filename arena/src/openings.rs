//! Openings: where the games of a tournament start. Each opening is played twice, colours
//! swapped, so a pair of games cancels the opening's bias.
//!
//! Sources: a file of positions (one per line: `startpos` or an SFEN, optionally followed
//! by `moves` and USI moves; `#` starts a comment), the variant's start family (every
//! named start of its `start` option), or a number of random plies from the start (the
//! training loop's evaluation).

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rules::{Game, Position, Variant};

#[derive(Debug, thiserror::Error)]
pub enum OpeningError {
    #[error("openings file {path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("openings file {path}, line {line}: {problem}")]
    Line { path: String, line: usize, problem: String },
    #[error("openings file {path} holds no position")]
    Empty { path: String },
    #[error("start '{name}' is not in the variant's start family ({known})")]
    UnknownStart { name: String, known: String },
    #[error("random opening {index}: every one of {tries} tries of {plies} random plies ended the game (limit {max_plies} plies)")]
    NoRandomOpening { index: usize, plies: u32, max_plies: u32, tries: u32 },
}

/// Random lines tried for one opening before giving up: a line that ends the game is
/// rare, so running out means that they all do (too many plies for the game's length).
const RANDOM_OPENING_TRIES: u32 = 1000;

/// One opening: a start position and moves played from it.
#[derive(Clone, Debug, PartialEq)]
pub struct Opening {
    pub name: String,
    pub position: Position,
    pub moves: Vec<rules::Move>,
}

#[derive(Clone, Debug)]
pub enum Openings {
    List(Vec<Opening>),
    /// `plies` random legal moves from the variant's start, seeded by opening index.
    RandomPlies {
        start: Box<Position>,
        plies: u32,
        seed: u64,
    },
}

impl Openings {
    /// Reads an openings file for `variant`; every move is checked by the rules engine.
    pub(crate) fn from_file(path: &std::path::Path, variant: &'static Variant) -> Result<Openings, OpeningError> {
        let p = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| OpeningError::Io { path: p.clone(), source })?;
        let mut list = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let bad = |problem: String| OpeningError::Line { path: p.clone(), line: i + 1, problem };
            let line = line.strip_prefix("position ").unwrap_or(line).trim();
            let (pos_text, moves_text) = match line.split_once(" moves") {
                Some((a, b)) => (a.trim(), b.trim()),
                None => (line, ""),
            };
            let pos_text = pos_text.strip_prefix("sfen ").unwrap_or(pos_text).trim();
            let position =
                if pos_text == "startpos" { Position::start(variant) } else { Position::from_sfen(variant, pos_text).map_err(|e| bad(e.to_string()))? };
            let mut game = Game::new(position.clone(), None);
            let mut moves = Vec::new();
            for m in moves_text.split_whitespace() {
                let mv = game.play_usi(m).map_err(|e| bad(format!("move {} ({m}): {e}", moves.len() + 1)))?;
                moves.push(mv);
            }
            if game.is_over() {
                return Err(bad("the game is already over after these moves".into()));
            }
            list.push(Opening { name: format!("line {}", i + 1), position, moves });
        }
        if list.is_empty() {
            return Err(OpeningError::Empty { path: p });
        }
        Ok(Openings::List(list))
    }

    /// The variant's start family (or the named members of it).
    pub fn start_family(variant: &'static Variant, names: &[String]) -> Result<Openings, OpeningError> {
        let family = variant.start_family();
        let known = family.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>().join(", ");
        let chosen: Vec<(String, String)> = if names.is_empty() {
            family
        } else {
            names
                .iter()
                .map(|n| family.iter().find(|(f, _)| f == n).cloned().ok_or_else(|| OpeningError::UnknownStart { name: n.clone(), known: known.clone() }))
                .collect::<Result<_, _>>()?
        };
        let list = chosen
            .into_iter()
            .map(|(name, sfen)| {
                let position = Position::from_sfen(variant, &sfen).expect("shipped start positions are valid");
                Opening { name, position, moves: Vec::new() }
            })
            .collect();
        Ok(Openings::List(list))
    }

    pub fn random(variant: &'static Variant, plies: u32, seed: u64) -> Openings {
        Openings::RandomPlies { start: Box::new(Position::start(variant)), plies, seed }
    }

    /// Distinct openings before they repeat (`None`: unbounded).
    pub fn len(&self) -> Option<usize> {
        match self {
            Openings::List(l) => Some(l.len()),
            Openings::RandomPlies { .. } => None,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == Some(0)
    }

    /// The name of opening `index` (cycling through a list).
    pub fn name(&self, index: usize) -> String {
        match self {
            Openings::List(l) => l[index % l.len()].name.clone(),
            Openings::RandomPlies { plies, .. } => format!("random-{plies}-{index}"),
        }
    }

    /// The game of opening `index` with a length limit of `max_plies`. Random plies that
    /// end the game are drawn again, a bounded number of times.
    pub fn game(&self, index: usize, max_plies: Option<u32>) -> Result<Game, OpeningError> {
        match self {
            Openings::List(l) => {
                let o = &l[index % l.len()];
                let mut g = Game::new(o.position.clone(), max_plies);
                for &m in &o.moves {
                    g.play_unchecked(m);
                }
                Ok(g)
            }
            Openings::RandomPlies { start, plies, seed } => {
                let mut rng = ChaCha8Rng::seed_from_u64(seed ^ (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
                if let Some(g) = Game::random_opening(start, max_plies, *plies, RANDOM_OPENING_TRIES, &mut rng) {
                    return Ok(g);
                }
                let max_plies = max_plies.unwrap_or(start.variant().max_plies);
                Err(OpeningError::NoRandomOpening { index, plies: *plies, max_plies, tries: RANDOM_OPENING_TRIES })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openings_file_reads_positions_and_moves() {
        let v = Variant::builtin("shogi").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("o.txt");
        std::fs::write(&path, "# two openings\nstartpos moves 7g7f 3c3d\n\nlnsgkgsnl/1r5b1/ppppppppp/9/9/2P6/PP1PPPPPP/1B5R1/LNSGKGSNL w - 2\n").unwrap();
        let o = Openings::from_file(&path, v).unwrap();
        assert_eq!(o.len(), Some(2));
        assert_eq!(o.game(0, None).unwrap().ply(), 2);
        assert_eq!(o.game(1, None).unwrap().position().to_sfen(), "lnsgkgsnl/1r5b1/ppppppppp/9/9/2P6/PP1PPPPPP/1B5R1/LNSGKGSNL w - 2");
        assert_eq!(o.game(2, None).unwrap().ply(), 2, "cycles");
    }

    #[test]
    fn bad_openings_name_the_line() {
        let v = Variant::builtin("shogi").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("o.txt");
        std::fs::write(&path, "startpos moves 7g7f\nstartpos moves 7g7f 7g7f\n").unwrap();
        let e = Openings::from_file(&path, v).unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("move 2 (7g7f)"), "{e}");
        std::fs::write(&path, "# nothing\n").unwrap();
        assert!(Openings::from_file(&path, v).unwrap_err().to_string().contains("holds no position"));
    }

    /// Random plies that always end the game (as many as its length) give up with an
    /// error instead of drawing new lines forever; fewer plies give a game in progress.
    #[test]
    fn random_openings_that_end_the_game_give_up() {
        let v = Variant::builtin("minishogi").unwrap();
        let e = Openings::random(v, 6, 1).game(3, Some(4)).unwrap_err().to_string();
        assert!(e.contains("random opening 3") && e.contains("6 random plies") && e.contains("limit 4 plies"), "{e}");
        let g = Openings::random(v, 3, 1).game(3, Some(4)).unwrap();
        assert_eq!(g.ply(), 3);
        assert!(!g.is_over());
    }

    #[test]
    fn start_family_by_name() {
        let v = Variant::builtin("pocket-copper").unwrap();
        let all = Openings::start_family(v, &[]).unwrap();
        assert!(all.len().unwrap() >= 5);
        let e = Openings::start_family(v, &["nonsense".into()]).unwrap_err().to_string();
        assert!(e.contains("nonsense") && e.contains("seed"), "{e}");
    }
}
