// Package web serves the club's TV page: one tile per port with its latest board drawn,
// its answer and its device state, updated live. It is a tool on the bus like any
// other, read-only: it follows the history's board bucket (a KV watch) and the ports'
// state subjects, and reads kept units from the history stream by sequence number.
// Every asset is embedded, so the page needs no host but this one.
package web

import (
	"cmp"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/render"
	"github.com/goclub/scoreboard/result"
)

//go:embed static
var static embed.FS

// Server is the page's server: the feeds from the bus and the HTTP handlers.
type Server struct {
	nc   *nats.Conn
	js   jetstream.JetStream
	subj bus.Subjects
	log  zerolog.Logger
	hub  *hub
	// historyOK, when set, says whether the daemon's history is storing; the page
	// shows a small warning while it is not (/api/status).
	historyOK func() bool
	// noLineEnds, when set, names the ports that receive bytes but no line ends
	// (a device set to the wrong line end or baud rate): no unit can be read there.
	noLineEnds func() []string
	// writeTimeout is writeTimeout unless a test sets it.
	writeTimeout time.Duration
	// streams counts the event streams being served.
	streams atomic.Int64
	// delays hold every unit back from the page (delay.go); nil: live.
	delays *Delays
	held   *delayStage
	// gamesBucket is the pairings' bucket the page follows, decodeGame reads its
	// values (WithGames, games.go); heldGames is its delay stage.
	gamesBucket string
	decodeGame  GameDecoder
	heldGames   *delayStage
	// viewers and embedOrigins are the guard's (WithGuard, guard.go).
	viewers      *viewers
	embedOrigins []string
}

// WithHistoryStatus has the page show whether the history is storing, as ok says
// (run's history keeper); call it before Handler.
func (s *Server) WithHistoryStatus(ok func() bool) { s.historyOK = ok }

// WithPortStatus has /api/status name the ports that receive bytes but no line
// ends, as none says (run's monitor); call it before Handler.
func (s *Server) WithPortStatus(none func() []string) { s.noLineEnds = none }

// apiStatus serves /api/status: {"history_ok": bool}, true when nothing says
// otherwise; the page's delay in seconds (0: live), on a league hub's page the
// clubs whose delay is another, and on a club's the ports that receive bytes but
// no line ends.
func (s *Server) apiStatus(w http.ResponseWriter, r *http.Request) {
	var none []string
	if s.noLineEnds != nil {
		none = s.noLineEnds()
	}
	writeJSON(w, struct {
		HistoryOK  bool               `json:"history_ok"`
		Delay      float64            `json:"delay_seconds"`
		ClubDelays map[string]float64 `json:"club_delay_seconds,omitempty"`
		NoLineEnds []string           `json:"no_line_ends,omitempty"`
		League     bool               `json:"league,omitempty"`
	}{s.historyOK == nil || s.historyOK(), s.delays.Page().Seconds(), s.delays.differing(), none, s.delays.League()})
}

// New returns a server reading the bus under prefix through nc. Run must run for the
// page to have anything to show.
func New(nc *nats.Conn, prefix string, log zerolog.Logger) (*Server, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("page: jetstream: %w", err)
	}
	return &Server{
		nc: nc, js: js, subj: bus.Subjects{Prefix: prefix},
		log: log.With().Str("component", "web").Logger(), hub: newHub(),
	}, nil
}

// Run follows the bus until ctx ends: the hub, the board bucket and the ports' states.
func (s *Server) Run(ctx context.Context) error {
	// A port is <port> on a club's bus, <club>.<port> on a league hub's.
	states := s.subj.Prefix + ".port.>"
	sub, err := s.nc.Subscribe(states, func(m *nats.Msg) {
		st, ok := s.portState(m.Subject, m.Data)
		if !ok {
			s.log.Debug().Str("subject", m.Subject).Msg("ignored a port state that is not one of this page's ports")
			return
		}
		// A delayed port is shown from its first board let out, not before: its
		// tile would tell the moment a table started (hub.state).
		s.hub.state(ctx, st, s.delays.Port(st.Port) > 0)
	})
	if err != nil {
		return fmt.Errorf("page: subscribe %s: %w", states, err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	var wg sync.WaitGroup
	wg.Go(func() { s.follow(ctx, s.subj.Boards(), s.board) })
	wg.Go(func() { s.watchGames(ctx) })
	s.hub.run(ctx)
	wg.Wait()
	return nil
}

// portState reads a state of <prefix>.port.<key>: only of the port its subject
// names, and on a league hub's page of one of the hub's clubs. A payload that
// names another port (a tile of any text for any club) is not taken.
func (s *Server) portState(subject string, data []byte) (bus.PortState, bool) {
	var st bus.PortState
	key, ok := strings.CutPrefix(subject, s.subj.Prefix+".port.")
	if !ok {
		return st, false
	}
	if _, ok := s.portOf(key); !ok || json.Unmarshal(data, &st) != nil || st.Port != key {
		return bus.PortState{}, false
	}
	return st, true
}

// boardRetry is how often the page looks for a board bucket that is not there yet
// (a daemon without history, or not started).
const boardRetry = time.Second

// follow follows a bucket (the boards', or the pairings'): all its values first,
// then every change, each to take. A watch is started again when the connection
// has reconnected (the daemon, or its server, restarted), since the consumer
// behind it may be gone.
func (s *Server) follow(ctx context.Context, bucket string, take func(context.Context, jetstream.KeyValueEntry)) {
	waiting := false
	for ctx.Err() == nil {
		kv, err := s.js.KeyValue(ctx, bucket)
		if err != nil {
			if !waiting {
				ev := s.log.Info().Err(err).Str("bucket", bucket)
				if errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrJetStreamNotEnabled) {
					ev = ev.Str("why", "the server has no JetStream: a daemon that keeps no history")
				}
				ev.Msg("waiting for the bucket (history) to exist")
				waiting = true
			}
			sleep(ctx, boardRetry)
			continue
		}
		if waiting {
			s.log.Info().Str("bucket", bucket).Msg("following the bucket")
			waiting = false
		}
		if err := s.watch(ctx, kv, take); err != nil && ctx.Err() == nil {
			s.log.Warn().Err(err).Str("bucket", bucket).Msg("bucket watch ended; starting it again")
			sleep(ctx, boardRetry)
		}
	}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

func (s *Server) watch(ctx context.Context, kv jetstream.KeyValue, take func(context.Context, jetstream.KeyValueEntry)) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Told, not polled: an idle page wakes for nothing.
	back := s.nc.StatusChanged(nats.CONNECTED)
	defer s.nc.RemoveStatusListener(back)
	w, err := kv.WatchAll(wctx)
	if err != nil {
		return fmt.Errorf("watch: %w", err)
	}
	defer func() { _ = w.Stop() }()
	for {
		select {
		case <-ctx.Done():
			return nil
		case e, ok := <-w.Updates():
			if !ok {
				return errors.New("the watch was closed")
			}
			if e == nil {
				continue // every value so far was delivered
			}
			// A put or a delete, through the delay stage (delay.go) to the hub.
			take(ctx, e)
		case <-back:
			return errors.New("the connection reconnected")
		}
	}
}

// decodeBoard reads a bucket value. Its unit is kept, not drawn: a picture is drawn
// when someone asks for it, most units of a busy hub never are.
func decodeBoard(key string, value []byte) (*Board, error) {
	r, err := result.DecodeKept(value)
	if err != nil {
		return nil, fmt.Errorf("value is not a result JSON: %w", err)
	}
	b := &Board{
		Port: key, Problem: r.Problem, Seq: r.Seq, Line: r.Line, Answer: r.Answer, Error: r.Error,
		Time: r.Time, Board: r.Board,
	}
	if r.Unit != "" {
		b.unit = []byte(r.Unit)
	}
	if r.Players != nil {
		at, _ := time.Parse(time.RFC3339Nano, r.Time)
		b.game = render.Game{Players: r.Players, Club: clubOf(key), Date: at}
	}
	return b, nil
}

// Handler serves the page, its assets, the pictures, the game records and the API.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	assets, _ := fs.Sub(static, "static") // the directory is embedded above
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(assets)))
	mux.HandleFunc("GET /{$}", s.page)
	mux.HandleFunc("GET /boards/{file}", s.boardFile)
	mux.HandleFunc("GET /history/{file}", s.historySVG)
	mux.HandleFunc("GET /api/boards", s.apiBoards)
	mux.HandleFunc("GET /api/history", s.apiHistory)
	mux.Handle("GET /api/events", s.viewers.wrap(http.HandlerFunc(s.events)))
	mux.HandleFunc("GET /api/status", s.apiStatus)
	mux.HandleFunc("GET /pictures/{port}/{file}", s.pictureFile)
	mux.HandleFunc("GET /embed/{port}", s.embed)
	mux.HandleFunc("GET /clubs", s.clubsIndex)
	mux.HandleFunc("GET /clubs/{club}", s.clubPage)
	return gzipText(s.guard(mux))
}

func (s *Server) page(w http.ResponseWriter, r *http.Request) { serveHTML(w, "static/index.html") }

// serveHTML serves one of the embedded pages, asked for again on each load (its
// scripts and the data come from elsewhere).
func serveHTML(w http.ResponseWriter, name string) {
	data, err := static.ReadFile(name)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(data)
}

// boardFile serves /boards/<port> (the large view), <port>.svg and <port>.sgf; a
// port is <club>.<port> on a league hub's page.
func (s *Server) boardFile(w http.ResponseWriter, r *http.Request) {
	file := r.PathValue("file")
	port, ext := file, ""
	for _, e := range []string{".svg", ".sgf"} {
		if p, ok := strings.CutSuffix(file, e); ok {
			port, ext = p, e
		}
	}
	// A league hub's port has a dot of its own: <club>.<port>.
	if _, ok := s.portOf(port); !ok {
		http.NotFound(w, r)
		return
	}
	if ext == "" {
		s.page(w, r)
		return
	}
	// The latest picture: its address stays, its content changes with each unit, so
	// a client asks again each time (no-cache) and gets 304 while it is the same.
	b := s.hub.board(r.Context(), port)
	var p *picture
	if b != nil && b.Picture != "" {
		p = s.hub.picture(r.Context(), port, strings.TrimSuffix(path.Base(b.Picture), ".svg"))
	}
	if p == nil {
		msg := fmt.Sprintf("no board for port %q yet", port)
		if b != nil && b.Revision != 0 {
			msg = fmt.Sprintf("port %q: unit %d has no picture: %s", port, b.Seq, cmp.Or(b.Error, "its result was published without its unit"))
		}
		notFound(w, msg)
		return
	}
	s.servePicture(w, r, p, ext[1:], "no-cache")
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(v)
}

// apiBoards serves /api/boards: every board, or those the filters of the event
// stream name (?club=, ?player=, ?port=).
func (s *Server) apiBoards(w http.ResponseWriter, r *http.Request) {
	f, ok := s.filterOf(w, r)
	if !ok {
		return
	}
	boards := s.hub.snapshot(r.Context(), f)
	if boards == nil {
		boards = []*Board{}
	}
	writeJSON(w, boards)
}

// filterOf reads what a client follows: ?port=P, or ?club=C (a league hub's
// page's club), ?player=NAME (a part of a player's name), or both; none: every
// port. A value that names nothing the page may show is a 400 saying what to send.
func (s *Server) filterOf(w http.ResponseWriter, r *http.Request) (filter, bool) {
	q := r.URL.Query()
	f := filter{port: q.Get("port"), club: q.Get("club")}
	if _, ok := s.portOf(f.port); f.port != "" && (!ok || f.club != "" || q.Has("player")) {
		http.Error(w, "want ?port=NAME (lowercase letters, digits, '-' and '_'), or CLUB.NAME on a league hub's page, or no port for every board; ?port= goes alone, without ?club= or ?player=", http.StatusBadRequest)
		return f, false
	}
	if f.club != "" && !s.isClub(f.club) {
		http.Error(w, fmt.Sprintf("?club=%.60q is no club of this page: want one of its clubs' names, as the league's [[club]] tables spell them", f.club), http.StatusBadRequest)
		return f, false
	}
	var err error
	if f.player, err = playerQuery(q.Get("player")); err != nil || (q.Has("player") && f.player == "") {
		http.Error(w, errNoGame.Error(), http.StatusBadRequest)
		return f, false
	}
	return f, true
}

// events is the page's live feed (server-sent events): every board now, then each
// change; with ?port=P, only port P's, with ?club=C only club C's, with
// ?player=NAME only the ports where a player of that name plays (filterOf). The
// browser reconnects by itself; "retry" makes it try every second.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	f, ok := s.filterOf(w, r)
	if !ok {
		return
	}
	c, ok := s.hub.subscribe(r.Context(), f)
	if !ok {
		http.Error(w, "stopping", http.StatusServiceUnavailable)
		return
	}
	defer s.hub.unsubscribe(c)
	s.streams.Add(1)
	defer s.streams.Add(-1)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	rc := http.NewResponseController(w)
	timeout := cmp.Or(s.writeTimeout, writeTimeout)
	// Each write has its own deadline, set before it (in place of the server's
	// response timeout); ended, the stream's last chunk has one too, so a viewer
	// dropped for not reading cannot hold it there.
	defer func() { _ = rc.SetWriteDeadline(time.Now().Add(timeout)) }()
	_ = rc.SetWriteDeadline(time.Now().Add(timeout))
	if _, err := fmt.Fprint(w, "retry: 1000\n\n"); err != nil {
		return
	}
	if err := rc.Flush(); err != nil {
		return
	}
	keep := time.NewTicker(15 * time.Second)
	defer keep.Stop()
	// A viewer's events are written together, at most one write and flush each
	// flushEvery: a league of 800 boards sends 1,600 events a second, and a flush
	// each (a write call, gzip's sync flush, a packet) would cost every viewer that
	// many. An event after a quiet spell goes at once; only a burst waits.
	var flushed time.Time
	pause := time.NewTimer(0)
	defer pause.Stop()
	<-pause.C
	for {
		var err error
		select {
		case data, ok := <-c:
			if !ok {
				return // dropped as too slow, or stopping: the page reconnects
			}
			if wait := flushEvery - time.Since(flushed); wait > 0 {
				pause.Reset(wait)
				select {
				case <-pause.C:
				case <-r.Context().Done():
					return
				}
			}
			_ = rc.SetWriteDeadline(time.Now().Add(timeout))
			_, err = w.Write(data) // framed once for every viewer (encode)
			for more := true; more && err == nil; {
				select {
				case data, ok := <-c:
					if !ok {
						return
					}
					_, err = w.Write(data)
				default:
					more = false
				}
			}
		case <-keep.C:
			_ = rc.SetWriteDeadline(time.Now().Add(timeout))
			_, err = fmt.Fprint(w, ": keep-alive\n\n")
		case <-r.Context().Done():
			return
		}
		if err != nil {
			return
		}
		if err := rc.Flush(); err != nil {
			return
		}
		flushed = time.Now()
	}
}

// flushEvery is how often at most a viewer's event stream is written and flushed:
// the events that came meanwhile go in one write. A tenth of a second is below what
// a viewer notices and a hundredth of the writes of a league's busiest second.
const flushEvery = 100 * time.Millisecond
