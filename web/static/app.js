// The scoreboard page: /api/boards when it loads, then the live events. The event
// stream reconnects by itself (and the server sends every board again), so the page
// recovers from a daemon restart without a reload.
"use strict";

const large = location.pathname.startsWith("/boards/")
  ? decodeURIComponent(location.pathname.slice("/boards/".length)) : null;
// A league hub's page of one club, /clubs/<club>: its tiles alone, from its own
// events (?club=), not the whole league's.
const onlyClub = location.pathname.startsWith("/clubs/")
  ? decodeURIComponent(location.pathname.slice("/clubs/".length)) : null;
// One port's page follows that port's events alone: a phone that found a player's
// board is sent that board, not the league's.
const only = onlyClub ? "?club=" + encodeURIComponent(onlyClub) : large ? "?port=" + encodeURIComponent(large) : "";
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
  const game = gameBlock();
  h.append(name, problem, game.line);
  const meta = el("div", "meta");
  const seq = el("span", "seq");
  const time = el("span", "time");
  const state = el("span", "state");
  // The players first, beside the unit's line when the tile is wide enough.
  meta.append(game.root, seq, time, state);
  const pic = el("div", "pic");
  const caption = el("div", "caption");
  const answer = el("pre", "answer");
  const links = el("div", "links");
  root.append(h, meta, pic, caption, answer, links);
  t = { root, problem, seq, time, state, pic, caption, answer, links, game, key: "", club, at: 0, stateText: "", stateCls: "" };
  if (club && !large && !clubs.has(club)) {
    const head = el("h2", "club");
    head.dataset.club = club;
    const cname = el("a", "club-name", club);
    cname.href = "/clubs/" + encodeURIComponent(club);
    const link = el("span", "link");
    const age = el("span", "age");
    const delay = el("span", "delay");
    delay.hidden = true;
    head.append(cname, delay, link, age);
    clubs.set(club, { head, link, age, delay });
    showDelays();
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
  schedule();
  return t;
}

// update shows board b on its tile; whole: b is all of the port (/api/boards),
// not an event, which says the port's game only when it changed.
function update(b, whole) {
  if (large && b.port !== large) return;
  const t = tileFor(b.port);
  const [stext, scls] = stateText(b.state);
  t.state.textContent = stext;
  t.state.className = "state " + scls;
  t.stateText = stext; t.stateCls = scls;
  if (b.time) t.at = Math.max(t.at, Date.parse(b.time) || 0);
  showClub(t.club);
  // The players come and go with the round loaded, on the board shown: a port
  // with no game in the round shows none. An event without "game" keeps the
  // tile's; "game": null takes it away (docs/page.md, "Events").
  if ((whole || "game" in b) && showGame(t.game, b.game || null)) {
    t.root.dataset.game = b.game ? b.game.round + "/" + b.game.table : "";
    schedule();
  }
  const key = b.revision + "/" + b.seq;
  if (!b.revision || key === t.key) return;
  t.key = key;
  t.problem.textContent = b.problem || "";
  t.seq.textContent = "unit #" + b.seq;
  t.time.textContent = hhmmss(b.time);
  const text = b.error ? b.error : b.answer;
  t.answer.textContent = text;
  // A long answer (othello's board: 9 lines) takes a smaller type, never under 14 px,
  // and is never cut.
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
  showPicture(t, b, key);
  t.root.classList.add("fresh");
  clearTimeout(t.fade);
  t.fade = setTimeout(() => t.root.classList.remove("fresh"), 3000);
  if (large) loadHistory();
}

// showPicture draws the board's picture in its tile (board.js), then marks the
// board shown.
async function showPicture(t, b, key) {
  const svg = await pictureOf(b);
  if (t.key !== key) return; // a newer board came while this one was fetched
  boardAlone(svg, t.pic, t.caption);
  // The board is whole on the page only now, its picture with its text.
  t.root.dataset.seq = b.seq;
  t.root.dataset.revision = b.revision;
  t.root.dataset.applied = Date.now(); // when the page showed it: the tests measure the delay
  schedule();
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
  schedule();
}

// pending: a layout is asked for the next frame; passes: layouts in a row, each
// measuring the text the one before wrapped.
let pending = false, passes = 0;

// layout places the tiles. Every picture is at least a third of the screen's height
// and of its tile's width: when every tile fits on one screen with pictures that big
// (a few boards), it does, each picture as large as it can be; when not, the page
// scrolls, in as many columns as keep the pictures that big (one on a phone). On a
// league hub's page each club's heading spans its own tiles' columns, and clubs sit
// side by side in a band when they fit, a club in the columns left beside others
// when that leaves no more cells empty (pack).
function layout() {
  pending = false;
  if (large) { settled(); return; }
  const rem = parseFloat(getComputedStyle(document.documentElement).fontSize);
  // The grid's gap, and its padding, which the style sheet keeps equal to it.
  const gap = parseFloat(getComputedStyle(tilesEl).rowGap) || 0.6 * rem;
  const W = document.documentElement.clientWidth, H = window.innerHeight;
  const header = document.querySelector("header").offsetHeight;
  let headH = 2.6 * rem;
  const aHead = clubs.size && [...clubs.values()][0].head;
  if (aHead && aHead.offsetHeight) {
    const cs = getComputedStyle(aHead);
    headH = aHead.offsetHeight + parseFloat(cs.marginTop) + parseFloat(cs.marginBottom);
  }
  // A tile's text and frame around its picture, as the page draws them now.
  let padX = 1.4 * rem + 6, over = 7 * rem;
  const some = [...tiles.values()].filter((t) => t.pic.offsetHeight > 0);
  if (some.length) {
    padX = some[0].root.offsetWidth - some[0].pic.offsetWidth;
    over = Math.max(...some.map((t) => t.root.offsetHeight - t.pic.offsetHeight));
  }
  // The tiles in order, by club (a club's ports are <club>.<port>, sorted together).
  const groups = [];
  for (const port of [...tiles.keys()].sort()) {
    const t = tiles.get(port);
    if (!groups.length || groups[groups.length - 1].club !== t.club) groups.push({ club: t.club, tiles: [] });
    groups[groups.length - 1].tiles.push(t);
  }
  const n = Math.max(tiles.size, 1);
  const least = H / 3; // no picture smaller than a third of the screen's height
  const tileW = (cols) => (W - gap * (cols + 1)) / cols;
  let best = null;
  for (let cols = 1; cols <= n; cols++) {
    const side = tileW(cols) - padX;
    if (side < least && cols > 1) break;
    const bands = pack(groups, cols);
    const rows = bands.reduce((r, b) => r + b.rows, 0);
    const heads = bands.filter((b) => b.head).length;
    const fit = (H - header - heads * headH - gap * (rows + heads + 1)) / rows - over;
    const s = Math.min(side, fit);
    // A picture of a third of its tile's width at least, and of the screen's height.
    if (s >= least && s >= tileW(cols) / 3 && (!best || s > best.s)) best = { cols, bands, s };
  }
  if (!best) {
    // Not all on one screen: the page scrolls, in the most columns whose pictures
    // are big enough, each tile no taller than the screen.
    let cols = 1;
    while (cols < n && tileW(cols + 1) - padX >= least) cols++;
    const s = Math.max(least, Math.min(tileW(cols) - padX, H - header - over - 2 * gap));
    best = { cols, bands: pack(groups, cols), s };
  }
  place(best.bands);
  tilesEl.style.setProperty("--cols", best.cols);
  tilesEl.style.setProperty("--pic", Math.floor(best.s) + "px");
  // Many tiles: smaller headings and answers (never under 14 px), for the picture.
  tilesEl.classList.toggle("many", n > 6);
  // The text around a picture wraps as the tiles' width says: measure again once.
  if (++passes < 3) requestAnimationFrame(() => {
    const now = [...tiles.values()].filter((t) => t.pic.offsetHeight > 0);
    const o = now.length ? Math.max(...now.map((t) => t.root.offsetHeight - t.pic.offsetHeight)) : over;
    if (Math.abs(o - over) > 2) layout();
    else settled();
  });
  else settled();
}

// settled marks the layout done for the tests: the page's tiles, as laid out.
function settled() {
  passes = 0;
  if (!pending) tilesEl.dataset.settled = tiles.size;
}
// schedule lays the page out once in the next frame, however many boards came.
function schedule() {
  if (pending) return;
  pending = true;
  delete tilesEl.dataset.settled;
  requestAnimationFrame(layout);
}

// pack puts the clubs' tiles in bands of cols columns: a club takes as many
// columns as it has tiles (cols at most), beside the ones before while they fit.
// When it does not fit, it may still take the columns left, in more rows: when
// that leaves no more cells empty than a band of its own would (which also takes a
// row for its heading), so that a club of one board and a club of four share a
// row rather than leave the rest of the first one's empty. A club's page is one
// group without a heading.
function pack(groups, cols) {
  const bands = [];
  let band = null;
  for (const g of groups) {
    const n = g.tiles.length;
    let w = Math.min(n, cols);
    if (band && band.used + w > cols) {
      const left = cols - band.used;
      const rows = left > 0 ? Math.max(band.rows, Math.ceil(n / left)) : 0;
      const beside = cols * rows - band.tiles - n;
      const apart = cols * band.rows - band.tiles + cols * Math.ceil(n / w) - n;
      if (left > 0 && band.head && g.club !== null && beside <= apart) w = left;
      else band = null;
    }
    if (!band) {
      band = { used: 0, rows: 0, tiles: 0, head: g.club !== null, groups: [] };
      bands.push(band);
    }
    band.groups.push({ g, col: band.used, w });
    band.used += w;
    band.tiles += n;
    band.rows = Math.max(band.rows, Math.ceil(n / w));
  }
  return bands;
}

// place sets each heading's and tile's grid cell from the bands.
function place(bands) {
  let row = 1;
  for (const b of bands) {
    const first = b.head ? row + 1 : row;
    for (const { g, col, w } of b.groups) {
      const c = g.club !== null && clubs.get(g.club);
      if (c) {
        c.head.style.gridRow = String(row);
        c.head.style.gridColumn = (col + 1) + " / span " + w;
      }
      g.tiles.forEach((t, i) => {
        t.root.style.gridRow = String(first + Math.floor(i / w));
        t.root.style.gridColumn = String(col + 1 + (i % w));
      });
    }
    row = first + b.rows;
  }
}
window.addEventListener("resize", schedule);

function setConn(up) {
  const c = document.getElementById("conn");
  c.textContent = up ? "live" : "reconnecting…";
  c.className = "conn " + (up ? "up" : "down");
}

async function loadBoards() {
  try {
    const r = await fetch("/api/boards" + only, { cache: "no-store" });
    if (r.ok) for (const b of await r.json()) update(b, true);
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
  es = new EventSource("/api/events" + only);
  es.onopen = () => { reopened(); setConn(true); };
  es.onmessage = (m) => {
    const ev = JSON.parse(m.data);
    if (ev.type === "board") update(ev.board);
    else if (ev.type === "remove") remove(ev.port);
  };
  es.onerror = () => {
    setConn(false);
    // A refused connection closes the stream for good: open a new one, later
    // each time it is refused again (board.js).
    if (es.readyState === EventSource.CLOSED) { es.close(); setTimeout(connect, reopenDelay()); }
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
if (onlyClub) document.title = onlyClub + " · Scoreboard";
// The daemon's history not storing (a full disk): a small warning, the boards go on.
// A delayed page says so, and by how much; on a hub, each club whose delay is its own.
let delays = { page: 0, clubs: {} };
async function status() {
  try {
    const r = await fetch("/api/status", { cache: "no-store" });
    if (!r.ok) return;
    const st = await r.json();
    document.getElementById("history-off").hidden = st.history_ok !== false;
    // A league hub's page links to its index of clubs and players, with the search.
    document.getElementById("find").hidden = !st.league;
    delays = { page: seconds(st.delay_seconds), clubs: st.club_delay_seconds || {} };
    showDelays();
  } catch (e) { /* the connection badge says it */ }
}

function seconds(v) { return typeof v === "number" && v > 0 ? v : 0; }

function showDelays() {
  const d = document.getElementById("delay");
  const was = d.hidden + d.textContent;
  d.hidden = delays.page === 0;
  d.textContent = delayText(delays.page);
  // A badge that comes or goes may wrap the header, or a club's heading: lay out again.
  let changed = was !== d.hidden + d.textContent;
  for (const [club, c] of clubs) {
    const own = club in delays.clubs ? seconds(delays.clubs[club]) : null;
    // A club whose delay differs from the page's says its own: "live" if none.
    const before = c.delay.hidden + c.delay.textContent;
    c.delay.hidden = own === null;
    c.delay.textContent = own ? delayText(own) : "live";
    c.delay.className = "delay" + (own ? " delayed" : " live");
    changed ||= before !== c.delay.hidden + c.delay.textContent;
  }
  if (changed) schedule();
}

tick();
setInterval(tick, 1000);
status();
setInterval(status, 5000);
loadBoards().then(connect);
