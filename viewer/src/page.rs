//! The page: one template (`page.html`: markup, style and the drawing script) with the
//! data embedded as JSON. The data holds everything the script shows — the variants'
//! pieces, every game's positions as the rules engine wrote them, the tables and the SVG
//! plots — so the file opens from disk with no network.

use crate::game::GameView;
use rules::Variant;
use serde::Serialize;
use std::collections::BTreeMap;

const TEMPLATE: &str = include_str!("page.html");

/// The board drawing (parse an SFEN, draw board, hands and pockets as SVG) that every
/// page showing positions includes: `copper view`'s and `copper play`'s.
pub const BOARD_JS: &str = include_str!("board.js");

/// A variant as the script needs it to draw: board size, pieces, hand order, pockets.
#[derive(Clone, Debug, Serialize)]
pub struct VariantView {
    pub title: String,
    pub files: u8,
    pub ranks: u8,
    pub pockets: bool,
    /// Every piece kind: Black's token, its name (the piece's tooltip) and its
    /// traditional kanji label ([`kanji`]; empty where it has none).
    pub kinds: Vec<(String, String, String)>,
    /// Black's tokens of the kinds a hand holds, in the order the hands are drawn.
    pub hand: Vec<String>,
}

impl VariantView {
    pub fn of(v: &Variant) -> VariantView {
        VariantView {
            title: v.title.clone(),
            files: v.geometry.files,
            ranks: v.geometry.ranks,
            pockets: v.pockets,
            kinds: v.kinds().map(|k| (v.kind(k).token.clone(), v.kind(k).name.clone(), kanji(v, k))).collect(),
            hand: v.hand_kinds.iter().map(|&k| v.kind(k).token.clone()).collect(),
        }
    }
}

/// The label a shogi player reads on `k`: the traditional kanji of the standard pieces
/// (and 銅 for the Copper, as chu shogi writes it); a promoted kind with none of its own is
/// 成 and its unpromoted kind's kanji (Pocket Shogi Copper's Platinum General 成金);
/// empty for a kind no tradition names (Hand shogi's Shogun, Tycoon, …: the page then
/// shows the letter).
pub fn kanji(v: &Variant, k: rules::PieceKind) -> String {
    fn own(name: &str) -> Option<&'static str> {
        Some(match name {
            "King" => "玉",
            "Rook" => "飛",
            "Dragon" | "Dragon King" => "龍",
            "Bishop" => "角",
            "Horse" | "Dragon Horse" => "馬",
            "Gold" => "金",
            "Silver" => "銀",
            "Promoted Silver" => "全",
            "Copper" => "銅",
            "Knight" => "桂",
            "Promoted Knight" => "圭",
            "Lance" => "香",
            "Promoted Lance" => "杏",
            "Side Mover" => "横",
            "Pawn" => "歩",
            "Tokin" => "と",
            _ => return None,
        })
    }
    let info = v.kind(k);
    match own(&info.name) {
        Some(s) => s.to_string(),
        None if info.promoted => own(&v.kind(info.unpromoted).name).map(|base| format!("成{base}")).unwrap_or_default(),
        None => String::new(),
    }
}

/// A table cell: its text and, where it stands for games, their indices in the page's
/// game list (a click shows them).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Cell {
    pub t: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub g: Vec<usize>,
}

impl Cell {
    pub fn text(t: impl Into<String>) -> Cell {
        Cell { t: t.into(), g: Vec::new() }
    }
    pub fn games(t: impl Into<String>, g: Vec<usize>) -> Cell {
        Cell { t: t.into(), g }
    }
}

impl From<String> for Cell {
    fn from(t: String) -> Cell {
        Cell::text(t)
    }
}

impl From<&str> for Cell {
    fn from(t: &str) -> Cell {
        Cell::text(t)
    }
}

/// A part of the overview above the games.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Section {
    Table {
        title: String,
        note: String,
        columns: Vec<String>,
        rows: Vec<Vec<Cell>>,
    },
    /// An SVG plot, inline (a file the pipeline, arena or study wrote).
    Svg {
        title: String,
        svg: String,
    },
    Text {
        title: String,
        text: String,
    },
}

/// Everything a page shows.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PageData {
    /// `tournament`, `study`, `run` or `games`.
    pub kind: String,
    pub title: String,
    /// Where the page was made from.
    pub source: String,
    pub variants: BTreeMap<String, VariantView>,
    pub sections: Vec<Section>,
    pub games: Vec<GameView>,
}

impl PageData {
    pub fn new(kind: &str, title: String, source: &std::path::Path) -> PageData {
        PageData { kind: kind.into(), title, source: source.display().to_string(), ..PageData::default() }
    }

    /// Adds a game, and its variant if new; returns its index.
    pub fn push_game(&mut self, variant: &Variant, game: GameView) -> usize {
        self.variants.entry(variant.name.clone()).or_insert_with(|| VariantView::of(variant));
        self.games.push(game);
        self.games.len() - 1
    }
}

/// An SVG file's text for inline use: without its XML declaration and doctype.
pub fn inline_svg(text: &str) -> String {
    match text.find("<svg") {
        Some(i) => text[i..].to_string(),
        None => String::new(),
    }
}

/// HTML-escapes text for the page's title.
fn escape_html(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The page: the template with the title and the data. In the JSON every `<` is written
/// `\u003c`, so no text in it (a player's name, an SVG) can end the script element.
pub fn render(data: &PageData) -> String {
    let json = serde_json::to_string(data).expect("page data serialises").replace('<', "\\u003c");
    let (head, tail) = TEMPLATE.split_once("{{DATA}}").expect("the template has a data slot");
    let mut page = head.replacen("{{TITLE}}", &escape_html(&data.title), 1);
    page.push_str(&json);
    page.push_str(&tail.replacen("{{BOARD_JS}}", BOARD_JS, 1));
    page
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_data_cannot_close_its_script_element() {
        let mut d = PageData::new("games", "a <b> & c".into(), std::path::Path::new("x"));
        d.sections.push(Section::Text { title: "</script><script>alert(1)</script>".into(), text: String::new() });
        let html = render(&d);
        assert_eq!(html.matches("</script>").count(), TEMPLATE.matches("</script>").count());
        assert!(html.contains("<title>a &lt;b&gt; &amp; c"));
        assert_eq!(inline_svg("<?xml version=\"1.0\"?>\n<svg a='1'></svg>"), "<svg a='1'></svg>");
    }

    #[test]
    fn kanji_labels_follow_tradition_and_fall_back_to_the_letter() {
        let label = |variant: &str, token: &str| {
            let v = Variant::builtin(variant).unwrap();
            let k = v.kinds().find(|&k| v.kind(k).token == token).unwrap();
            kanji(v, k)
        };
        assert_eq!(label("shogi", "K"), "玉");
        assert_eq!(label("shogi", "+R"), "龍");
        assert_eq!(label("shogi", "+L"), "杏");
        assert_eq!(label("shogi", "+P"), "と");
        assert_eq!(label("pocket-copper", "C"), "銅");
        // The Platinum General (a promoted Gold) has no kanji of its own.
        assert_eq!(label("pocket-copper", "+G"), "成金");
        assert_eq!(label("pocket-copper", "+C"), "成銅");
        assert_eq!(label("pocket-copper", "+L"), "横");
        // Hand shogi's Shogun: no tradition, the letter is shown.
        let v = Variant::builtin("hand-shogi").unwrap();
        let shogun = v.kinds().find(|&k| v.kind(k).name == "Shogun").unwrap();
        assert_eq!(kanji(v, shogun), "");
    }
}
