// The scoreboard page: /api/boards when it loads, then the live events. The event
// stream reconnects by itself (and the server sends every board again), so the page
// recovers from a daemon restart without a reload.
"use strict";

const large = location.pathname.startsWith("/boards/")
  ? decodeURIComponent(location.pathname.slice("/boards/".length)) : null;
const tilesEl = document.getElementById("tiles");
const tiles = new Map();

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
  const name = el("a", "port", port);
  name.href = "/boards/" + encodeURIComponent(port);
  const problem = el("span", "problem");
  h.append(name, problem);
  const meta = el("div", "meta");
  const seq = el("span", "seq");
  const time = el("span", "time");
  const state = el("span", "state");
  meta.append(seq, time, state);
  const pic = el("div", "pic");
  const answer = el("pre", "answer");
  const links = el("div", "links");
  root.append(h, meta, pic, answer, links);
  t = { root, problem, seq, time, state, pic, answer, links, key: "" };
  tiles.set(port, t);
  const after = [...tiles.keys()].sort().indexOf(port);
  const next = [...tiles.keys()].sort()[after + 1];
  tilesEl.insertBefore(root, next ? tiles.get(next).root : null);
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
  const key = b.revision + "/" + b.seq;
  if (!b.revision || key === t.key) return;
  t.key = key;
  t.root.dataset.seq = b.seq;
  t.root.dataset.revision = b.revision;
  t.root.dataset.applied = Date.now(); // when the page showed it: the tests measure the delay
  t.problem.textContent = b.problem || "";
  t.seq.textContent = "unit #" + b.seq;
  t.time.textContent = hhmmss(b.time);
  t.pic.innerHTML = b.svg || "";
  t.answer.textContent = b.error ? b.error : b.answer;
  t.answer.className = b.error ? "answer error" : "answer";
  t.links.replaceChildren();
  const svg = el("a", "", "picture");
  svg.href = "/boards/" + encodeURIComponent(b.port) + ".svg";
  t.links.append(svg);
  if (["goscore", "replay", "territory"].includes(b.problem)) {
    const sgf = el("a", "", "SGF");
    sgf.href = "/boards/" + encodeURIComponent(b.port) + ".sgf";
    t.links.append(sgf);
  }
  t.root.classList.add("fresh");
  clearTimeout(t.fade);
  t.fade = setTimeout(() => t.root.classList.remove("fresh"), 3000);
  if (large) loadHistory();
}

function remove(port) {
  const t = tiles.get(port);
  if (t) { t.root.remove(); tiles.delete(port); }
  layout();
}

// layout picks the grid that fits every tile on the screen, each as large as it
// can be: the columns whose tiles come nearest a picture's shape.
function layout() {
  const n = Math.max(tiles.size, 1);
  const w = window.innerWidth, h = window.innerHeight - 60;
  let best = 1, bestSide = 0;
  for (let cols = 1; cols <= n; cols++) {
    const rows = Math.ceil(n / cols);
    const side = Math.min(w / cols, (h / rows) * 0.8); // a tile is a little taller than wide
    if (side > bestSide) { best = cols; bestSide = side; }
  }
  tilesEl.style.setProperty("--cols", best);
  tilesEl.style.setProperty("--rows", Math.ceil(n / best));
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

function tick() { document.getElementById("clock").textContent = hhmmss(new Date()); }

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
