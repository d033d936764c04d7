// What the page's tiles and the embedded board share: a board's picture (the SVG of
// its picture URL, inlined so that its caption becomes the page's own text), and
// the words for a delay.
"use strict";

// pictures keeps the SVG text of the picture URLs seen: they are immutable (one per
// revision), so a board shown again costs no request.
const pictures = new Map();

// pictureOf returns the board's SVG text: its picture URL's, fetched with the
// browser's ordinary HTTP caching; "" when it has none (an error, a result
// published by hand).
async function pictureOf(b) {
  if (!b.picture) return "";
  let svg = pictures.get(b.picture);
  if (svg !== undefined) return svg;
  try {
    const r = await fetch(b.picture);
    svg = r.ok ? await r.text() : "";
  } catch (e) {
    return ""; // the next board, or the reconnection, brings it again
  }
  if (svg) {
    if (pictures.size > 2000) pictures.clear();
    pictures.set(b.picture, svg);
  }
  return svg;
}

// boardAlone puts svg in pic, cropped to its board (the box the SVG names in
// data-board), and writes the picture's caption in caption as text of the page:
// scaled into a tile, the SVG's caption would be a few pixels high.
function boardAlone(svgText, pic, caption) {
  pic.innerHTML = svgText;
  const svg = pic.querySelector("svg");
  caption.replaceChildren();
  if (!svg) return;
  for (const cls of ["score", "detail"]) {
    const tx = svg.querySelector("text." + cls);
    if (!tx) continue;
    const s = document.createElement("span");
    s.className = cls;
    s.textContent = tx.textContent;
    caption.append(s);
    tx.remove();
  }
  const ground = svg.querySelector("rect.ground");
  if (ground) ground.remove();
  const box = svg.dataset.board;
  if (box) svg.setAttribute("viewBox", box);
  svg.removeAttribute("width");
  svg.removeAttribute("height");
}

// delayText says a delay as a viewer reads it: "delayed 15 min", "delayed 1 h 30 min".
function delayText(s) {
  s = Math.round(s);
  if (s < 60) return "delayed " + s + " s";
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), r = s % 60;
  return "delayed" + (h ? " " + h + " h" : "") + (m ? " " + m + " min" : "") + (r && !h ? " " + r + " s" : "");
}

// reopenDelay is how long the page waits before it opens a stream the server closed
// or refused: a second at first, then twice as long each time to half a minute, a
// little at random, so that a crowd turned away at the viewers' bound (429, 503) or
// by a restart does not come back all at once every second. reopened starts again
// at a second once a stream is open.
let refusals = 0;
function reopenDelay() {
  const ms = Math.min(1000 * 2 ** refusals, 30000);
  refusals++;
  return ms * (0.75 + Math.random() / 4);
}
function reopened() { refusals = 0; }

// gameBlock makes what a tile shows of its game: its round, table, handicap and
// result (line, which the tile puts beside its port's name), and Black and White
// with their ranks (root: on one line when the tile is wide, else one a line,
// as they fit). Every name is
// text (textContent), each in an isolate of its own direction (<bdi dir=auto>),
// so that no name, of any script, turns the tile's other text around; a long
// one is cut with an ellipsis by the style sheet, whole in its title.
function gameBlock() {
  const root = document.createElement("div");
  root.className = "game";
  root.hidden = true;
  const line = document.createElement("span");
  line.className = "round";
  line.hidden = true;
  const sides = {};
  for (const colour of ["black", "white"]) {
    const p = document.createElement("div");
    p.className = "player " + colour;
    const stone = document.createElement("span");
    stone.className = "stone";
    stone.setAttribute("role", "img");
    stone.setAttribute("aria-label", colour);
    const name = document.createElement("bdi");
    name.className = "name";
    name.dir = "auto";
    const rank = document.createElement("span");
    rank.className = "rank";
    p.append(stone, name, rank);
    root.append(p);
    sides[colour] = { name, rank };
  }
  return { root, line, sides, text: "" };
}

// showGame writes game g (or none: no players) in a gameBlock; true when what it
// shows changed.
function showGame(gb, g) {
  const text = g ? JSON.stringify(g) : "";
  if (text === gb.text) return false;
  gb.text = text;
  gb.root.hidden = !g;
  gb.line.hidden = !g;
  if (!g) return true;
  const parts = ["Round " + g.round, "Table " + g.table];
  if (g.handicap) parts.push("handicap " + g.handicap);
  if (g.result) parts.push(g.result);
  gb.line.textContent = parts.join(" · ");
  for (const colour of ["black", "white"]) {
    const p = g[colour] || {};
    gb.sides[colour].name.textContent = p.name || "?";
    gb.sides[colour].name.title = p.name || "";
    gb.sides[colour].rank.textContent = p.rank || "";
  }
  return true;
}
