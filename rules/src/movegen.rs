//! Legal move generation.
//!
//! Fully legal, not pseudo-legal: checkers and pins are found once per position with
//! ray scans from the king, so only king moves need an attack test per move. The
//! variant's data decides everything piece-specific: promotion zones and forced
//! promotion, drop restrictions (dead squares, one-per-file, drops that must check,
//! drop mate), pockets.

use crate::moves::{Move, MoveKind, MoveList};
use crate::piece::{DropMate, Piece, PieceKind};
use crate::position::{Pins, Position};
use crate::{Bitboard, Color, Square};

impl Position {
    /// All legal moves. A position whose game is already over (flag reached) still
    /// lists its moves; [`crate::Game`] and [`crate::perft`] stop there.
    pub fn legal_moves(&self) -> MoveList {
        let mut list = MoveList::new();
        self.generate_legal(&mut list);
        list
    }

    /// Number of legal moves (the last ply of perft).
    pub fn count_legal(&self) -> usize {
        let mut list = MoveList::new();
        self.generate_legal(&mut list);
        list.len()
    }

    pub fn has_legal_move(&self) -> bool {
        self.count_legal() > 0
    }

    /// Whether `m` is a legal move here.
    pub fn is_legal(&self, m: Move) -> bool {
        self.legal_moves().contains(&m)
    }

    /// Appends every legal move to `list`.
    pub fn generate_legal(&self, list: &mut MoveList) {
        self.generate(false, self.variant.geometry.all, false, list);
    }

    /// Appends the legal captures to `list` (board moves onto an enemy piece, promoting or
    /// not): the moves of [`Position::generate_legal`] that capture, in the same order,
    /// without generating drops and pocket moves (a quiescence search's moves).
    pub fn generate_captures(&self, list: &mut MoveList) {
        self.generate(true, self.variant.geometry.all, false, list);
    }

    /// The moves of [`Position::generate_captures`] whose victim stands on `victims`, in
    /// the same order, for a side to move that is not in check, which the caller knows (a
    /// quiescence search searches every evasion instead; debug builds check it). A search
    /// that would prune the captures of lesser pieces does not generate them, and a piece's
    /// pin is looked for only when it has a capture, not along all eight of the king's
    /// lines first.
    pub fn generate_captures_out_of_check(&self, victims: Bitboard, list: &mut MoveList) {
        debug_assert!(!self.in_check(), "generate_captures_out_of_check in check: {}", self.to_sfen());
        if (victims & self.by_color[(!self.side).index()]).any() {
            self.generate(true, victims, true, list);
        }
    }

    /// `victims`: with `captures_only`, the squares whose pieces may be captured.
    /// `out_of_check`: the caller knows the side to move is not in check, so that no
    /// checker is looked for and a piece's pin only when it has a move.
    fn generate(&self, captures_only: bool, victims: Bitboard, out_of_check: bool, list: &mut MoveList) {
        let v = self.variant;
        let us = self.side;
        let own = self.by_color[us.index()];
        let occ = self.occupied();
        let empty = v.geometry.all & !occ;
        let ksq = self.kings[us.index()];
        let mut pins = Pins::default();
        let (checkers, block) = match ksq {
            Some(k) if !out_of_check => self.checkers_and_pins(k, &mut pins),
            _ => (Bitboard::EMPTY, Bitboard::EMPTY),
        };
        let enemy = self.by_color[(!us).index()];
        if let Some(k) = ksq {
            self.generate_king_moves(k, if captures_only { enemy & victims } else { v.geometry.all }, list);
        }
        if checkers.more_than_one() {
            return;
        }
        let in_check = checkers.any();
        // Where a non-king move must land, and where a drop must go, to meet a check.
        let (mut move_mask, drop_mask) = if in_check { (block | checkers, block) } else { (v.geometry.all & !own, empty) };
        if captures_only {
            move_mask &= enemy & victims;
        }
        let may_pocket = v.pockets && !in_check && !captures_only && self.pockets[us.index()].is_none();

        // A piece that could not reach a target square even on an empty board is skipped
        // before its attacks are computed: captures and a check's evasions land on few
        // squares.
        let narrow = captures_only || in_check;
        // The kinds in index order, as `v.kinds()` lists them, those on the board alone.
        let mut present = self.kinds_on_board[us.index()];
        while present != 0 {
            let k = PieceKind::from_index(present.trailing_zeros() as usize);
            present &= present - 1;
            let info = v.kind(k);
            if info.royal {
                continue;
            }
            let bb = self.by_kind[k.index()] & own;
            // One-per-file pieces (pawns, soldiers) may not move onto a file that already
            // holds another of theirs (only a kind that can change file needs the test).
            let file_rule = info.one_per_file && v.tables(us, k).leaves_file;
            let own_files = if file_rule { v.geometry.files_of(bb) } else { Bitboard::EMPTY };
            let reach = &v.tables(us, k).reach;
            for from in bb {
                if narrow && (reach[from.index()] & move_mask).is_empty() {
                    continue;
                }
                let mut targets = self.attacks_from(us, k, from, occ) & move_mask;
                let pin = if out_of_check {
                    ksq.filter(|_| targets.any()).and_then(|k| self.pin_line(k, from, occ))
                } else {
                    (pins.pinned.any() && pins.pinned.has(from)).then(|| pins.line(from))
                };
                let pinned = pin.is_some();
                if let Some(line) = pin {
                    targets &= line;
                }
                if file_rule {
                    targets &= !(own_files & !v.geometry.file_of(from));
                }
                if targets.is_empty() {
                    continue;
                }
                if may_pocket && !pinned {
                    list.push(Move::pocket_in(from));
                }
                self.push_board_moves(us, k, from, targets, list);
            }
        }
        if captures_only {
            return;
        }

        for &k in &v.hand_kinds {
            if self.hands[us.index()][k.index()] > 0 {
                self.generate_drops(k, drop_mask, false, list);
            }
        }
        if let Some(k) = self.pockets[us.index()] {
            self.generate_drops(k, drop_mask, true, list);
        }
    }

    #[inline(always)]
    fn push_board_moves(&self, us: Color, k: PieceKind, from: Square, targets: Bitboard, list: &mut MoveList) {
        let v = self.variant;
        match v.kind(k).promotes_to {
            None => {
                for to in targets {
                    list.push(Move::board(from, to, false));
                }
            }
            Some(_) => {
                let zone = v.promotion_zone[us.index()];
                let promotable = if zone.has(from) { targets } else { targets & zone };
                for to in targets & !v.tables(us, k).forced_promotion {
                    list.push(Move::board(from, to, false));
                }
                for to in promotable {
                    list.push(Move::board(from, to, true));
                }
            }
        }
    }

    /// The king's legal moves onto `mask`.
    fn generate_king_moves(&self, ksq: Square, mask: Bitboard, list: &mut MoveList) {
        let v = self.variant;
        let us = self.side;
        let occ = self.occupied();
        let targets = self.attacks_from(us, v.royal_kind, ksq, occ) & !self.by_color[us.index()] & mask;
        if targets.is_empty() {
            return;
        }
        // The squares enemy leapers attack, from the few enemy pieces near enough to matter
        // (usually none), once rather than per king move and leaper kind.
        let mut leaper_attacks = Bitboard::EMPTY;
        for from in v.king_leaper_zone[ksq.index()] & self.by_color[(!us).index()] {
            let p = Piece::from_code(self.board[from.index()]).expect("an enemy piece");
            leaper_attacks |= v.tables(!us, p.kind).steps[from.index()];
        }
        let occ_without_king = occ ^ Bitboard::from_square(ksq);
        let sliders = self.sliders_of(!us) & occ_without_king;
        for to in targets & !leaper_attacks {
            if !self.slider_attacks(to, occ_without_king, sliders) {
                list.push(Move::board(ksq, to, false));
            }
        }
    }

    /// Drops of kind `k` from hand (or from the pocket) onto `mask`, with the variant's
    /// drop restrictions.
    fn generate_drops(&self, k: PieceKind, mask: Bitboard, from_pocket: bool, list: &mut MoveList) {
        let v = self.variant;
        let us = self.side;
        let info = v.kind(k);
        let t = v.tables(us, k);
        let mut targets = mask & !t.no_drop;
        if info.one_per_file {
            targets &= !v.geometry.files_of(self.by_kind[k.index()] & self.by_color[us.index()]);
        }
        let enemy_king = self.kings[(!us).index()];
        // Squares from which a piece of this kind would attack the enemy king.
        let checking = match enemy_king {
            Some(ek) if info.drop_only_with_check || info.drop_mate == DropMate::Illegal => self.attacks_from(!us, k, ek, self.occupied()),
            _ => Bitboard::EMPTY,
        };
        if info.drop_only_with_check {
            targets &= checking;
        }
        let make = |to| if from_pocket { Move::pocket_drop(k, to) } else { Move::drop(k, to) };
        if info.drop_mate == DropMate::Illegal {
            for to in targets {
                let m = make(to);
                if checking.has(to) && self.drop_mates(m) {
                    continue;
                }
                list.push(m);
            }
        } else {
            for to in targets {
                list.push(make(to));
            }
        }
    }

    /// A legal move that wins at once, if there is one: the king onto its flag square,
    /// or checkmate (not by a drop whose mate loses, as a pawn's in Pocket Shogi Copper).
    /// Wins by leaving the opponent without a move while not in check are not looked
    /// for: the answer is sound (every move returned wins) but may miss those.
    /// The search's one-ply mate check (`search::SearchConfig::mate_in_one`) calls this
    /// at every new leaf, so drops are tested only on squares that give check (a drop
    /// never uncovers an attack).
    pub fn winning_move(&self) -> Option<Move> {
        let mut list = MoveList::new();
        self.generate_legal(&mut list);
        self.winning_move_in(&list)
    }

    /// [`Position::winning_move`] among `list`, this position's legal moves.
    pub(crate) fn winning_move_in(&self, list: &[Move]) -> Option<Move> {
        let v = self.variant;
        let us = self.side;
        let enemy_king = self.kings[(!us).index()];
        let checking = |k: PieceKind| match enemy_king {
            Some(ek) => self.attacks_from(!us, k, ek, self.occupied()),
            None => Bitboard::EMPTY,
        };
        let mut drop_checks: [Option<Bitboard>; crate::piece::MAX_KINDS] = [None; crate::piece::MAX_KINDS];
        for &m in list.iter() {
            let dropped = match m.kind() {
                MoveKind::Drop { kind, to } | MoveKind::PocketDrop { kind, to } => {
                    if v.kind(kind).drop_mate == DropMate::Loses {
                        continue;
                    }
                    if !drop_checks[kind.index()].get_or_insert_with(|| checking(kind)).has(to) {
                        continue;
                    }
                    true
                }
                _ => false,
            };
            let mut child = self.clone();
            child.play_unchecked(m);
            if !dropped && child.flag_reached() {
                return Some(m);
            }
            if enemy_king.is_some() && child.in_check_after(m) && !child.has_legal_move() {
                return Some(m);
            }
        }
        None
    }

    /// Whether playing `m` leaves the opponent with no legal move.
    pub(crate) fn drop_mates(&self, m: Move) -> bool {
        let mut child = self.clone();
        child.play_unchecked(m);
        !child.has_legal_move()
    }
}
