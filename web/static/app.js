// The scoreboard page: /api/boards when it loads, then the live events. The event
// stream reconnects by itself (and the server sends every board again), so the page
// recovers from a daemon restart without a reload.
"use strict";

const large = location.pathname.startsWith("/boards/")
  ? decodeURIComponent(location.pathname.slice("/boards/".length)) : null;
const tilesEl = document.getElementById("tiles");
const tiles = new Map();
// On a league hub's page a port is <club>.<port>: each club's tiles follow a heading
// with its name, its link's state and the age of its latest board.
const clubs = new Map();

function clubOf(port) {
  const i = port.indexOf(".");
  return i < 0 ? null : port.slice(0, i);
}

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function hhmm(t) {
  const d = new Date(t);
  if (isNaN(d)) return "";
  return d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", hour12: false });
}

function hhmmss(t) {
  const d = new Date(t);
  if (isNaN(d)) return "";
  return d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false });
}

function stateText(st) {
  if (!st) return ["", ""];
  if (st.state === "open") return ["open", "open"];
  return [st.state + " since " + hhmm(st.since), st.state];
}

function tileFor(port) {
  let t = tiles.get(port);
  if (t) return t;
  const root = el("article", "tile");
  root.dataset.port = port;
  const h = el("h2");
  const club = clubOf(port);
  const name = el("a", "port", club ? port.slice(club.length + 1) : port);
  name.href = "/boards/" + encodeURIComponent(port);
  const problem = el("span", "problem");
  h.append(name, problem);
  const meta = el("div", "meta");
  const seq = el("span", "seq");
  const time = el("span", "time");
  const state = el("span", "state");
  meta.append(seq, time, state);
  const pic = el("div", "pic");
  const caption = el("div", "caption");
  const answer = el("pre", "answer");
  const links = el("div", "links");
  root.append(h, meta, pic, caption, answer, links);
  t = { root, problem, seq, time, state, pic, caption, answer, links, key: "", club, at: 0, stateText: "", stateCls: "" };
  if (club && !large && !clubs.has(club)) {
    const head = el("h2", "club");
    head.dataset.club = club;
    const cname = el("span", "club-name", club);
    const link = el("span", "link");
    const age = el("span", "age");
    head.append(cname, link, age);
    clubs.set(club, { head, link, age });
  }
  tiles.set(port, t);
  const after = [...tiles.keys()].sort().indexOf(port);
  const next = [...tiles.keys()].sort()[after + 1];
  let before = next ? tiles.get(next).root : null;
  if (club && !large) {
    // The club's heading goes before its first tile; a club's last tile goes before
    // the next club's heading.
    if (next && clubOf(next) !== club && clubs.has(clubOf(next))) before = clubs.get(clubOf(next)).head;
    const c = clubs.get(club);
    if (!c.head.isConnected) tilesEl.insertBefore(c.head, before);
  }
  tilesEl.insertBefore(root, before);
  document.getElementById("empty").hidden = true;
  layout();
  return t;
}

function update(b) {
  if (large && b.port !== large) return;
  const t = tileFor(b.port);
  const [stext, scls] = stateText(b.state);
  t.state.textContent = stext;
  t.state.className = "state " + scls;
  t.stateText = stext; t.stateCls = scls;
  if (b.time) t.at = Math.max(t.at, Date.parse(b.time) || 0);
  showClub(t.club);
  const key = b.revision + "/" + b.seq;
  if (!b.revision || key === t.key) return;
  t.key = key;
  t.problem.textContent = b.problem || "";
  t.seq.textContent = "unit #" + b.seq;
  t.time.textContent = hhmmss(b.time);
  showPicture(t, b);
  const text = b.error ? b.error : b.answer;
  t.answer.textContent = text;
  // A long answer (othello's board: 9 lines) takes a smaller type, never under 16 px,
  // and is never cut: the picture gives way.
  const lines = text.replace(/\n$/, "").split("\n").length;
  t.answer.className = "answer" + (b.error ? " error" : "") + (lines > 2 ? " long" : "");
  t.links.replaceChildren();
  // Only the links that answer: a result published by hand has no unit, so no
  // picture and no game record.
  if (b.picture) {
    const svg = el("a", "", "picture");
    svg.href = b.picture;
    t.links.append(svg);
  }
  if (b.sgf) {
    const sgf = el("a", "", "SGF");
    sgf.href = b.sgf;
    t.links.append(sgf);
  }
  t.root.classList.add("fresh");
  clearTimeout(t.fade);
  t.fade = setTimeout(() => t.root.classList.remove("fresh"), 3000);
  if (large) loadHistory();
}

// showPicture fetches a board's picture by its address, which never changes (the
// browser's cache keeps it), and shows it, unless a newer board came meanwhile. The
// tile says which unit it shows once its picture is in.
function showPicture(t, b) {
  t.picURL = b.picture;
  const done = svg => {
    if (t.picURL !== b.picture) return;
    t.pic.innerHTML = svg;
    showBoardAlone(t);
    t.root.dataset.seq = b.seq;
    t.root.dataset.revision = b.revision;
    t.root.dataset.applied = Date.now(); // when the page showed it: the tests measure the delay
  };
  if (!b.picture) { done(""); return; }
  fetch(b.picture).then(r => r.ok ? r.text() : "").catch(() => "").then(done);
}

// showBoardAlone crops the tile's picture to its board (the box the SVG names in
// data-board) and writes the picture's caption as the tile's own text: scaled into a
// tile, the SVG's caption would be a few pixels high.
function showBoardAlone(t) {
  const svg = t.pic.querySelector("svg");
  t.caption.replaceChildren();
  if (!svg) return;
  for (const cls of ["score", "detail"]) {
    const tx = svg.querySelector("text." + cls);
    if (!tx) continue;
    t.caption.append(el("span", cls, tx.textContent));
    tx.remove();
  }
  const ground = svg.querySelector("rect.ground");
  if (ground) ground.remove();
  const box = svg.dataset.board;
  if (box) svg.setAttribute("viewBox", box);
  svg.removeAttribute("width");
  svg.removeAttribute("height");
}

// showClub writes a club's heading: its link's state (each of its tiles shows it too)
// and the age of its latest board, by the club's own clock (the result's time).
function showClub(club) {
  const c = club && clubs.get(club);
  if (!c) return;
  let at = 0, link = "", cls = "";
  for (const t of tiles.values()) {
    if (t.club !== club) continue;
    at = Math.max(at, t.at);
    if (t.stateText) { link = t.stateText; cls = t.stateCls; }
  }
  c.link.textContent = link;
  c.link.className = "link " + cls.replace(/ /g, "-");
  c.head.dataset.latest = at ? new Date(at).toISOString() : "";
  c.age.textContent = at ? "latest board " + age(Date.now() - at) + " ago" : "";
}

function age(ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return s + " s";
  if (s < 3600) return Math.floor(s / 60) + " min";
  if (s < 86400) return Math.floor(s / 3600) + " h";
  return Math.floor(s / 86400) + " d";
}

function remove(port) {
  const t = tiles.get(port);
  if (t) { t.root.remove(); tiles.delete(port); }
  if (t && t.club && ![...tiles.values()].some((o) => o.club === t.club)) {
    const c = clubs.get(t.club);
    if (c) { c.head.remove(); clubs.delete(t.club); }
  } else if (t) showClub(t.club);
  layout();
}

// layout picks the grid that fits every tile on the screen, each as large as it
// can be: the columns whose tiles come nearest a picture's shape.
function layout() {
  const n = Math.max(tiles.size, 1);
  // Each club's heading takes a row of its own, and its tiles start a row.
  const groups = new Map();
  for (const t of tiles.values()) groups.set(t.club, (groups.get(t.club) || 0) + 1);
  const rowsOf = (cols) => groups.size === 0 ? Math.ceil(n / cols)
    : [...groups.values()].reduce((r, k) => r + Math.ceil(k / cols), 0);
  const heads = large ? 0 : clubs.size;
  const w = window.innerWidth, h = window.innerHeight - 60 - 44 * heads;
  let best = 1, bestSide = 0;
  for (let cols = 1; cols <= n; cols++) {
    const side = Math.min(w / cols, (h / rowsOf(cols)) * 0.8); // a tile is a little taller than wide
    if (side > bestSide) { best = cols; bestSide = side; }
  }
  tilesEl.style.setProperty("--cols", best);
  tilesEl.style.setProperty("--rows", rowsOf(best));
  tilesEl.style.setProperty("--heads", heads);
  // Many tiles: smaller headings and answers (never under 16 px), for the picture.
  tilesEl.classList.toggle("many", n > 6);
}
window.addEventListener("resize", layout);

function setConn(up) {
  const c = document.getElementById("conn");
  c.textContent = up ? "live" : "reconnecting…";
  c.className = "conn " + (up ? "up" : "down");
}

async function loadBoards() {
  try {
    const r = await fetch("/api/boards", { cache: "no-store" });
    if (r.ok) for (const b of await r.json()) update(b);
  } catch (e) { /* the event stream brings them when the server is back */ }
}

async function loadHistory() {
  const sec = document.getElementById("history");
  try {
    const r = await fetch("/api/history?port=" + encodeURIComponent(large), { cache: "no-store" });
    if (!r.ok) return;
    const items = await r.json();
    const list = document.getElementById("history-list");
    list.replaceChildren();
    for (const it of items.reverse()) {
      const li = el("li");
      const text = "#" + it.seq + " " + hhmm(it.time) + " " + (it.error ? "error" : it.answer.trim().split("\n")[0]);
      if (it.svg) { const a = el("a", "", text); a.href = it.svg; li.append(a); } else li.textContent = text;
      list.append(li);
    }
    sec.hidden = items.length === 0;
  } catch (e) { /* history is optional */ }
}

let es = null;
function connect() {
  es = new EventSource("/api/events");
  es.onopen = () => setConn(true);
  es.onmessage = (m) => {
    const ev = JSON.parse(m.data);
    if (ev.type === "board") update(ev.board);
    else if (ev.type === "remove") remove(ev.port);
  };
  es.onerror = () => {
    setConn(false);
    // A refused connection closes the stream for good: open a new one.
    if (es.readyState === EventSource.CLOSED) { es.close(); setTimeout(connect, 1000); }
  };
}

function tick() {
  document.getElementById("clock").textContent = hhmmss(new Date());
  for (const club of clubs.keys()) showClub(club);
}

if (large) {
  document.body.classList.add("large");
  document.title = large + " · Scoreboard";
  loadHistory();
}
// The daemon's history not storing (a full disk): a small warning, the boards go on.
async function status() {
  try {
    const r = await fetch("/api/status", { cache: "no-store" });
    if (r.ok) document.getElementById("history-off").hidden = (await r.json()).history_ok;
  } catch (e) { /* the connection badge says it */ }
}

tick();
setInterval(tick, 1000);
status();
setInterval(status, 5000);
loadBoards().then(connect);
