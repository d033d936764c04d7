// One live board for another site's iframe: /embed/<port>. It follows the event
// stream of its port alone (and skips any other port's board a server sends).
"use strict";

const port = decodeURIComponent(location.pathname.slice("/embed/".length));
const $ = (id) => document.getElementById(id);
// The mark says "live" only once the page's delay is known: a delayed board is
// never called live, even for a moment.
let key = "", up = false, delay = 0, known = false;

// Who plays: under the port's name (board.js).
const game = gameBlock();
$("problem").after(game.line);
$("board").querySelector(".top").append(game.root);

async function update(b) {
  if (b.port !== port) return;
  // An event says the game only when it changed: none keeps it, null clears it.
  if ("game" in b && showGame(game, b.game)) $("board").dataset.game = b.game ? b.game.round + "/" + b.game.table : "";
  if (!b.revision) return;
  const k = b.revision + "/" + b.seq;
  if (k === key) return;
  key = k;
  const svg = await pictureOf(b);
  if (key !== k) return; // a newer board came while this one was fetched
  boardAlone(svg, $("pic"), $("caption"));
  $("problem").textContent = b.problem || "";
  const text = b.error ? b.error : b.answer;
  const lines = text.replace(/\n$/, "").split("\n").length;
  $("answer").textContent = text;
  $("answer").className = "answer" + (b.error ? " error" : "") + (lines > 2 ? " long" : "");
  $("none").hidden = true;
  // What the board shows, for the page around it and the tests.
  const d = $("board").dataset;
  d.seq = b.seq;
  d.revision = b.revision;
  d.applied = Date.now();
}

function mark() {
  const m = $("mark");
  if (!known) return;
  m.textContent = !up ? "reconnecting…" : delay > 0 ? delayText(delay) : "live";
  m.className = "mark " + (!up ? "down" : delay > 0 ? "delayed" : "live");
}

let es = null;
function connect() {
  es = new EventSource("/api/events?port=" + encodeURIComponent(port));
  es.onopen = () => { reopened(); up = true; mark(); };
  es.onmessage = (m) => {
    const ev = JSON.parse(m.data);
    if (ev.type === "board") update(ev.board);
  };
  es.onerror = () => {
    up = false;
    mark();
    // A refused connection closes the stream for good: open a new one, later
    // each time it is refused again (board.js).
    if (es.readyState === EventSource.CLOSED) { es.close(); setTimeout(connect, reopenDelay()); }
  };
}

// The page's delay: the club's own on a hub's page (a port is <club>.<port>).
async function status() {
  try {
    const r = await fetch("/api/status", { cache: "no-store" });
    const st = r.ok ? await r.json() : {}; // a server without it is live
    const club = port.includes(".") ? port.slice(0, port.indexOf(".")) : null;
    const own = club && st.club_delay_seconds && club in st.club_delay_seconds ? st.club_delay_seconds[club] : st.delay_seconds;
    delay = typeof own === "number" && own > 0 ? own : 0;
    known = true;
    mark();
  } catch (e) { /* the mark says the connection */ }
  // The delay seldom changes: every 30 s, or soon while it is not known yet.
  setTimeout(status, known ? 30000 : 2000);
}

// On a hub's page: the club, then its port.
$("port").textContent = port.replace(".", " · ");
$("port").href = "/boards/" + encodeURIComponent(port);
document.title = port + " · Scoreboard";
status();
connect();
