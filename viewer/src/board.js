// The board drawing shared by `copper view` and `copper play`: a position as the rules
// engine wrote it (SFEN with the pocket field) drawn as SVG. It knows no rules; every
// piece group carries `data-tok` (Black's token, lower case for White) and every
// clickable place a `data-at` (`sq:<index>`, `hand:<b|w>:<token>`, `pocket:<b|w>`), so
// pages and their tests read back what was drawn without parsing the picture.
const S = 44, GAP = 8, LBL = 16, NS = "http://www.w3.org/2000/svg";

function el(tag, attrs, parent, text) {
  const e = document.createElementNS(NS, tag);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}

// SFEN as the rules engine wrote it -> board rows of tokens, hands, pockets, side.
function parseSfen(sfen) {
  const f = sfen.split(" ");
  const board = f[0].split("/").map(row => {
    const out = []; let num = "", plus = "";
    for (const c of row) {
      if (c >= "0" && c <= "9") { num += c; continue; }
      if (num) { for (let i = 0; i < +num; i++) out.push(null); num = ""; }
      if (c === "+") { plus = "+"; continue; }
      out.push(plus + c); plus = "";
    }
    if (num) for (let i = 0; i < +num; i++) out.push(null);
    return out;
  });
  const hands = { b: {}, w: {} };
  if (f[2] && f[2] !== "-") {
    let num = "";
    for (const c of f[2]) {
      if (c >= "0" && c <= "9") { num += c; continue; }
      const side = c === c.toUpperCase() ? "b" : "w";
      hands[side][c.toUpperCase()] = (hands[side][c.toUpperCase()] || 0) + (num ? +num : 1);
      num = "";
    }
  }
  const pockets = { b: null, w: null };
  if (f[4] && f[4] !== "-") {
    let plus = "";
    for (const c of f[4]) {
      if (c === "+") { plus = "+"; continue; }
      pockets[c === c.toUpperCase() ? "b" : "w"] = plus + c.toUpperCase(); plus = "";
    }
  }
  return { board, hands, pockets, side: f[1] };
}

function kindOf(V, tok) {
  return V.kinds.find(k => k[0] === tok);
}
function pieceName(V, tok) {
  const k = kindOf(V, tok);
  return k ? k[1] : tok;
}
// What a piece shows: its token, or its traditional kanji where it has one.
function pieceLabel(V, tok, labels) {
  const k = kindOf(V, tok);
  return labels === "kanji" && k && k[2] ? k[2] : tok;
}

// A piece: a pentagon pointing at the opponent, its label (promoted ones red). `up`: it
// points up the screen (Black's pieces, unless the board is flipped).
function drawPiece(parent, V, tok, cx, cy, white, up, labels) {
  const g = el("g", { class: "pc", transform: `translate(${cx},${cy})` + (up ? "" : " rotate(180)"), "data-tok": white ? tok.toLowerCase() : tok }, parent);
  const r = S * 0.42;
  el("polygon", { points: `0,${-r} ${r * 0.78},${-r * 0.62} ${r * 0.92},${r} ${-r * 0.92},${r} ${-r * 0.78},${-r * 0.62}` }, g);
  const text = pieceLabel(V, tok, labels);
  const cls = (tok[0] === "+" ? "pro" : "") + (text.length > 1 && labels === "kanji" ? " two" : "");
  el("text", cls.trim() ? { class: cls.trim(), y: 2 } : { y: 2 }, g, text);
  el("title", {}, g, pieceName(V, tok) + (white ? " (White)" : " (Black)"));
  return g;
}

function layout(V) {
  const bw = V.files * S, bh = V.ranks * S;
  const handW = (V.pockets ? S + GAP * 2 : 0) + V.hand.length * (S + 12);
  const width = Math.max(bw + LBL, handW) + 2;
  const top = LBL + S + GAP + LBL;
  return { bw, bh, width, top, height: top + bh + GAP + LBL + S + 4 };
}

// One hand row: the pocket slot (variants with pockets), then the hand's pieces in the
// variant's order, a count beside pieces held more than once.
function drawSide(svg, V, pos, side, y, opt) {
  const white = side === "w", up = white === !!opt.flip;
  const row = el("g", { id: "side-" + side }, svg);
  let x = 0;
  if (V.pockets) {
    const pg = el("g", { id: "pocket-" + side, "data-at": "pocket:" + side }, row);
    el("rect", { class: "slot", x: 1, y: y + 1, width: S - 2, height: S - 2, rx: 5 }, pg);
    el("text", { class: "lbl", x: S / 2, y: y - 2 }, pg, "pocket");
    if (pos.pockets[side]) drawPiece(pg, V, pos.pockets[side], S / 2, y + S / 2, white, up, opt.labels);
    x = S + GAP * 2;
  }
  el("text", { class: "lbl", x: x, y: y - 3, "text-anchor": "start" }, row, (white ? "△ White" : "▲ Black") + "'s hand");
  const hg = el("g", { id: "hand-" + side }, row);
  for (const tok of V.hand) {
    const n = pos.hands[side][tok] || 0;
    if (!n) continue;
    const item = el("g", { class: "hp", "data-at": `hand:${side}:${tok}` }, hg);
    el("rect", { class: "hit", x: x, y: y, width: S, height: S }, item);
    drawPiece(item, V, tok, x + S / 2, y + S / 2, white, up, opt.labels);
    if (n > 1) el("text", { class: "cnt", x: x + S - 2, y: y + S - 2 }, item, String(n));
    x += S + 12;
  }
}

// The screen cell (column, row from the top left) of square index `i` (rank · files +
// file − 1, as the server numbers squares), and back.
function cellOf(V, i, flip) {
  const f = i % V.files, r = Math.floor(i / V.files);
  return flip ? { c: f, r: V.ranks - 1 - r } : { c: V.files - 1 - f, r };
}

// Draws `sfen` into `svg`. `opt`: `marks` (square indices of the last move), `flip`
// (White at the bottom), `labels` (`letters` or `kanji`), `hl` (indices lit as targets),
// `sel` (the `data-at` of the selected place), `arrows` ([{from, to, cls, weight, usi}]:
// moves drawn as arrows between places).
function drawPosition(svg, V, sfen, opt) {
  const pos = parseSfen(sfen), L = layout(V), flip = !!opt.flip;
  svg.textContent = "";
  svg.setAttribute("width", L.width); svg.setAttribute("height", L.height);
  svg.setAttribute("viewBox", `0 0 ${L.width} ${L.height}`);
  drawSide(svg, V, pos, flip ? "b" : "w", LBL, opt);
  const labels = el("g", {}, svg);
  for (let c = 0; c < V.files; c++) el("text", { class: "lbl", x: c * S + S / 2, y: L.top - 4 }, labels, String(flip ? c + 1 : V.files - c));
  for (let r = 0; r < V.ranks; r++) el("text", { class: "lbl", x: L.bw + LBL / 2, y: L.top + r * S + S / 2 + 4 }, labels, String.fromCharCode(97 + (flip ? V.ranks - 1 - r : r)));
  const squares = el("g", { id: "squares" }, svg), marked = el("g", { id: "marks" }, svg);
  const pieces = el("g", { id: "pieces" }, svg), lit = el("g", { id: "targets" }, svg);
  const marks = new Set(opt.marks || []), hl = new Set(opt.hl || []);
  for (let i = 0; i < V.files * V.ranks; i++) {
    const { c, r } = cellOf(V, i, flip);
    const at = { x: c * S, y: L.top + r * S, width: S, height: S };
    el("rect", Object.assign({ class: "sq" + (opt.sel === "sq:" + i ? " sel" : ""), "data-at": "sq:" + i }, at), squares);
    if (marks.has(i)) el("rect", Object.assign({ class: "last" }, at), marked);
    const tok = (pos.board[Math.floor(i / V.files)] || [])[V.files - 1 - (i % V.files)];
    if (tok) {
      const white = tok !== tok.toUpperCase();
      const g = drawPiece(pieces, V, tok.toUpperCase(), c * S + S / 2, L.top + r * S + S / 2, white, white === flip, opt.labels);
      g.setAttribute("data-sq", i);
      g.setAttribute("data-at", "sq:" + i);
    }
    if (hl.has(i)) el("circle", { class: "target", "data-at": "sq:" + i, cx: c * S + S / 2, cy: L.top + r * S + S / 2, r: S * 0.16 }, lit);
  }
  drawSide(svg, V, pos, flip ? "w" : "b", L.top + L.bh + GAP + LBL, opt);
  if (opt.sel) { const s = svg.querySelector(`g[data-at="${opt.sel}"]`); if (s) s.classList.add("sel"); }
  for (const t of opt.hlPlaces || []) { const g = svg.querySelector(`g[data-at="${t}"]`); if (g) g.classList.add("target"); }
  // Arrows last, over the pieces (they take no clicks: `pointer-events: none` in the page).
  const arrows = el("g", { id: "arrows" }, svg);
  for (const a of opt.arrows || []) drawArrow(arrows, svg, V, L, flip, a);
  return pos;
}

// The centre of a place as drawn: a square, a hand piece or a pocket slot (null when it is
// not drawn, a hand piece not held).
function placeCentre(svg, V, L, flip, place) {
  if (place.startsWith("sq:")) {
    const { c, r } = cellOf(V, +place.slice(3), flip);
    return { x: c * S + S / 2, y: L.top + r * S + S / 2 };
  }
  const rect = svg.querySelector(`g[data-at="${place}"] > rect`);
  if (!rect) return null;
  const n = k => +rect.getAttribute(k);
  return { x: n("x") + n("width") / 2, y: n("y") + n("height") / 2 };
}

// An arrow `a` = {from, to, cls, weight 0..1, usi} from one place to another (a drop from
// the hand or the pocket, a move into the pocket): a shaft and a head as one polygon,
// thicker for a heavier weight.
function drawArrow(parent, svg, V, L, flip, a) {
  const p = placeCentre(svg, V, L, flip, a.from), q = placeCentre(svg, V, L, flip, a.to);
  if (!p || !q) return null;
  const len = Math.hypot(q.x - p.x, q.y - p.y);
  if (len < 1) return null;
  const ux = (q.x - p.x) / len, uy = (q.y - p.y) / len, nx = -uy, ny = ux;
  const w = 3 + 6 * Math.max(0, Math.min(1, a.weight || 0)), head = Math.min(2.6 * w + 4, len * 0.6);
  const bx = q.x - ux * head, by = q.y - uy * head;
  const pt = (x, y, side) => `${(x + nx * side).toFixed(1)},${(y + ny * side).toFixed(1)}`;
  const points = [pt(p.x, p.y, w / 2), pt(bx, by, w / 2), pt(bx, by, w * 1.3), pt(q.x, q.y, 0), pt(bx, by, -w * 1.3), pt(bx, by, -w / 2), pt(p.x, p.y, -w / 2)];
  return el("polygon", { class: "arrow " + (a.cls || ""), points: points.join(" "), "data-from": a.from, "data-to": a.to, "data-usi": a.usi || "" }, parent);
}
