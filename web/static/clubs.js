// The index of a league hub's clubs: each club with its boards and who plays
// there, and a search by player or club that keeps only what matches, each line a
// link to its board: a player's board is one search away. It reads /api/boards
// (the hub's delays apply there: a delayed club's boards and players are not in it
// before their time) when it loads and every 10 s.
"use strict";

const listEl = document.getElementById("clubs");
const q = document.getElementById("q");
// rows are the boards' lines by port; clubsEl the clubs' sections by name.
const rows = new Map(), clubsEl = new Map();

// fold is a text as the search compares it: lower case, without accents.
function fold(s) {
  return (s || "").normalize("NFD").replace(/\p{M}/gu, "").toLowerCase().replace(/\s+/g, " ").trim();
}

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function clubFor(club) {
  let c = clubsEl.get(club);
  if (c) return c;
  const root = el("section");
  root.dataset.club = club;
  const h = el("h2");
  const a = el("a", "", club);
  a.href = "/clubs/" + encodeURIComponent(club);
  const delay = el("span", "delay");
  delay.hidden = true;
  h.append(a, delay);
  const ul = el("ul");
  root.append(h, ul);
  c = { root, ul, delay, key: fold(club) };
  showDelay(club, c);
  clubsEl.set(club, c);
  const names = [...clubsEl.keys()].sort();
  const next = names[names.indexOf(club) + 1];
  listEl.insertBefore(root, next ? clubsEl.get(next).root : null);
  return c;
}

function rowFor(b, club) {
  let r = rows.get(b.port);
  if (r) return r;
  const li = el("li");
  li.dataset.port = b.port;
  const a = el("a");
  a.href = "/boards/" + encodeURIComponent(b.port);
  const where = el("div", "where");
  const port = el("span", "port", b.port.slice(club.length + 1));
  const seq = el("span", "seq");
  const game = gameBlock();
  where.append(port, game.line, seq);
  const answer = el("div", "answer");
  a.append(where, game.root, answer);
  li.append(a);
  r = { li, seq, game, answer, club, key: "" };
  rows.set(b.port, r);
  const c = clubFor(club);
  const ports = [...rows.keys()].filter((p) => rows.get(p).club === club).sort();
  const next = ports[ports.indexOf(b.port) + 1];
  c.ul.insertBefore(li, next ? rows.get(next).li : null);
  return r;
}

function show(boards) {
  const seen = new Set();
  for (const b of boards) {
    const i = b.port.indexOf(".");
    if (i < 0) continue;
    const club = b.port.slice(0, i);
    const r = rowFor(b, club);
    seen.add(b.port);
    showGame(r.game, b.game);
    r.seq.textContent = b.revision ? "unit #" + b.seq : "";
    r.answer.textContent = b.revision ? (b.error ? "error" : b.answer.trim().split("\n")[0]) : "";
    r.key = fold(club) + "\n" + (b.game ? fold(b.game.black && b.game.black.name) + "\n" + fold(b.game.white && b.game.white.name) : "");
  }
  for (const [port, r] of rows) {
    if (seen.has(port)) continue;
    r.li.remove();
    rows.delete(port);
  }
  for (const [club, c] of clubsEl) {
    if (c.ul.children.length) continue;
    c.root.remove();
    clubsEl.delete(club);
  }
  document.getElementById("empty").hidden = rows.size > 0;
  filter();
}

// filter keeps the boards whose club or player holds the search's words, and the
// clubs that have one; an empty search keeps all.
function filter() {
  const words = fold(q.value).split(" ").filter((w) => w);
  let boards = 0;
  const shown = new Map();
  for (const r of rows.values()) {
    const ok = words.every((w) => r.key.includes(w));
    r.li.hidden = !ok;
    if (ok) { boards++; shown.set(r.club, true); }
  }
  for (const [club, c] of clubsEl) c.root.hidden = !shown.has(club);
  document.getElementById("found").textContent = words.length ? boards + (boards === 1 ? " board" : " boards") : "";
  listEl.dataset.found = boards;
}

let delays = { page: 0, clubs: {} };
// showDelay says a club's own delay in its heading, when it is not the page's.
function showDelay(club, c) {
  const own = club in delays.clubs ? delays.clubs[club] : null;
  c.delay.hidden = own === null;
  c.delay.textContent = own > 0 ? delayText(own) : "live";
}
async function status() {
  try {
    const r = await fetch("/api/status", { cache: "no-store" });
    if (!r.ok) return;
    const st = await r.json();
    delays = { page: st.delay_seconds > 0 ? st.delay_seconds : 0, clubs: st.club_delay_seconds || {} };
    const d = document.getElementById("delay");
    d.hidden = delays.page === 0;
    d.textContent = delayText(delays.page);
    for (const [club, c] of clubsEl) showDelay(club, c);
  } catch (e) { /* the next load says it */ }
}

async function load() {
  try {
    const r = await fetch("/api/boards", { cache: "no-store" });
    if (r.ok) show(await r.json());
    listEl.dataset.loaded = String(Date.now());
  } catch (e) { /* the next load brings them */ }
}

q.addEventListener("input", filter);
// A search in the address (/clubs?q=...), as a link or the phone's history keeps it.
q.value = new URLSearchParams(location.search).get("q") || "";
status();
load();
setInterval(load, 10000);
