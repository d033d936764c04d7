package web

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/history"
	"github.com/goclub/scoreboard/render"
)

// historySVG serves /history/<stream seq>-<stream>.svg: a kept message of the
// history stream, read by a direct get; on a league hub's page
// /history/<club>.<stream seq>-<stream>.svg, of the club's stream. <stream> names
// the stream's life (streamID): a stream made anew (a new state directory) numbers
// its messages from 1 again, and its pictures must not have the old ones'
// addresses, which a browser or a proxy keeps for a year. An address without it
// (an older page's) is answered with the current stream's picture, not kept. Each
// takes a turn of the history reads (a stream info, a get and a draw), as
// /api/history does.
func (s *Server) historySVG(w http.ResponseWriter, r *http.Request) {
	num, ok := strings.CutSuffix(r.PathValue("file"), ".svg")
	subj := s.subj
	if club, n, two := strings.Cut(num, "."); two {
		// Only a club of the hub's: a_b is not a-b, though their streams' names are
		// one (LEAGUE_A_B).
		if !bus.ValidToken(club) || !s.delays.Listed(club) {
			notFound(w, fmt.Sprintf("no club %q on this page: want /history/<club>.<stream sequence number>-<stream>.svg, as /api/history gives it", club))
			return
		}
		num, subj = n, bus.Subjects{Prefix: s.subj.Prefix + "." + club}
	}
	num, id, named := strings.Cut(num, "-")
	seq, err := strconv.ParseUint(num, 10, 64)
	if !ok || err != nil || seq == 0 || (named && id == "") {
		notFound(w, "want /history/<stream sequence number>-<stream>.svg, as /api/history gives it")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	svg, code, err := s.drawKept(ctx, subj, seq, id, named)
	if err != nil {
		if code == http.StatusNotFound {
			notFound(w, err.Error())
		} else {
			http.Error(w, err.Error(), code)
		}
		return
	}
	if !named {
		serveCached(w, r, fmt.Sprintf(`W/"%d"`, seq), "no-cache", "image/svg+xml", "", svg)
		return
	}
	// A kept unit's number in a stream's life never names another: kept for good.
	serveCached(w, r, fmt.Sprintf(`W/"%d-%s"`, seq, id), immutable, "image/svg+xml", "", svg)
}

// drawKept reads and draws the kept unit seq of subj's stream, in a turn of the
// history reads; with named, only while the stream is the one id names. An error
// comes with the status it is answered with.
func (s *Server) drawKept(ctx context.Context, subj bus.Subjects, seq uint64, id string, named bool) ([]byte, int, error) {
	leave, busy := historyReads.enter(ctx) // web/tail.go: a few at once
	if busy != nil {
		return nil, http.StatusServiceUnavailable, busy
	}
	defer leave()
	stream, err := s.js.Stream(ctx, subj.Stream())
	if err != nil {
		return nil, http.StatusServiceUnavailable, fmt.Errorf("history stream %s: %w", subj.Stream(), err)
	}
	if named && streamID(stream.CachedInfo()) != id {
		return nil, http.StatusNotFound, fmt.Errorf("history message %d: of a history that is no longer kept (its stream was made anew): /api/history gives the units kept now", seq)
	}
	msg, err := stream.GetMsg(ctx, seq)
	if err == nil && !strings.HasPrefix(msg.Subject, subj.Prefix+".") {
		// Another club's message, in a stream whose name two spellings of a club
		// share (a-b, a_b): not in this one's history, nor under its delay.
		err = jetstream.ErrMsgNotFound
	}
	if err == nil && s.delays != nil {
		// Newer than the delay: as if it were not there (never "not yet").
		if until, delayed := s.streamCutoff(subj.Prefix); delayed && msg.Time.After(until) {
			err = jetstream.ErrMsgNotFound
		}
	}
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, http.StatusNotFound, fmt.Errorf("history message %d: not in the history (each unit's number is in /api/history)", seq)
	}
	if err != nil {
		return nil, http.StatusNotFound, fmt.Errorf("history message %d: %w", seq, err)
	}
	problem, unit, err := keptUnit(subj, msg.Subject, msg.Data)
	if err != nil {
		return nil, http.StatusNotFound, fmt.Errorf("history message %d: %w", seq, err)
	}
	svg, err := render.SVG(problem, unit)
	if err != nil {
		return nil, http.StatusNotFound, fmt.Errorf("history message %d: %w", seq, err)
	}
	return svg, http.StatusOK, nil
}

// streamID names a stream's life: a hash of its name and the time it was made,
// which a stream made anew under the same name does not share.
func streamID(info *jetstream.StreamInfo) string {
	if info == nil {
		return ""
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(info.Config.Name))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write(strconv.AppendInt(nil, info.Created.UnixNano(), 10))
	return strconv.FormatUint(h.Sum64(), 36)
}

// keptUnit finds the unit of a history message: a dump's under subj, the page's
// prefix or on a league hub's page the address's club's (<prefix>.<club>), whose
// delay gated it.
func keptUnit(subj bus.Subjects, subject string, data []byte) (problem string, unit []byte, err error) {
	if p, _, err := subj.ParseDump(subject); err == nil {
		return p, data, nil
	}
	return "", nil, fmt.Errorf("is no unit but a message on %s: /api/history lists each unit's own number", subject)
}

// HistoryItem is one kept unit of a port and its outcome, as /api/history lists them.
type HistoryItem struct {
	// StreamSeq is the unit's dump in the history stream (0 if not kept).
	StreamSeq uint64 `json:"stream_seq"`
	Problem   string `json:"problem"`
	Seq       uint64 `json:"seq"`
	Answer    string `json:"answer"`
	Error     string `json:"error,omitempty"`
	Time      string `json:"time,omitempty"`
	// SVG is the picture's address, when the record keeps its unit.
	SVG string `json:"svg,omitempty"`
}

// History bounds: how far back /api/history looks by default and at most, and
// how many units it returns by default and at most. The read is of the stream's
// tail (at the delay's cutoff on a delayed page), but a port with fewer units than
// asked is read back to since: a week bounds that.
const (
	historySince    = 24 * time.Hour
	historyLimit    = 50
	historyMaxLimit = 1000
	historyMaxSince = 7 * 24 * time.Hour
)

// apiHistory lists a port's kept units, newest last: /api/history?port=P, with
// limit=N (default 50, at most 1000) and since=DURATION (default 24h, at most a
// week, back from the page's delay).
func (s *Server) apiHistory(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	port := q.Get("port")
	key, ok := s.portOf(port)
	if !ok {
		http.Error(w, "want ?port=NAME (lowercase letters, digits, '-' and '_'), or CLUB.NAME on a league hub's page", http.StatusBadRequest)
		return
	}
	// A league hub's port is <club>.<port>: its units are under the prefix
	// <prefix>.<club>, in that prefix's stream (the club's LEAGUE_<CLUB>).
	prefix, hq, pic := key.prefix(s.subj.Prefix), history.Query{Port: key.port}, ""
	if key.club != "" {
		pic, hq.Stream = key.club+".", bus.Subjects{Prefix: prefix}.Stream()
	}
	limit, since := historyLimit, historySince
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > historyMaxLimit {
			http.Error(w, fmt.Sprintf("limit=%q: want 1 to %d", v, historyMaxLimit), http.StatusBadRequest)
			return
		}
		limit = n
	}
	if v := q.Get("since"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 || d > historyMaxSince {
			http.Error(w, fmt.Sprintf("since=%q: want a duration above 0 and at most %v (a week), such as 2h or 30m", v, historyMaxSince), http.StatusBadRequest)
			return
		}
		since = d
	}
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	leave, busy := historyReads.enter(ctx) // web/tail.go: a few at once
	if busy != nil {
		http.Error(w, busy.Error(), http.StatusServiceUnavailable)
		return
	}
	items := []HistoryItem{}
	// The pictures' addresses name the stream's life (streamID); a stream not
	// there is Read's to report.
	var id string
	if st, err := s.js.Stream(ctx, cmp.Or(hq.Stream, s.subj.Stream())); err == nil {
		id = streamID(st.CachedInfo())
	}
	// Delayed, only units stored before the cutoff, the window reaching back from it.
	until, delayed := s.cutoff(port)
	hq.Since, hq.Last = until.Add(-since), limit
	if delayed {
		hq.Until = until
	}
	err := history.Read(ctx, s.js, prefix, hq,
		func(e *history.Entry) error {
			// Until bounds the units (their dumps' store time); a result stored after
			// it is not shown with its unit either (its time is the club's on a hub).
			if delayed && e.Time.After(until) {
				return nil
			}
			items = append(items, historyItem(e, pic, id))
			return nil
		})
	// The slot is for the read only: a client that is slow to read its answer
	// (or never reads it) must not hold it while the answer is written.
	leave()
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	writeJSON(w, items)
}

// historyItem is a kept unit as /api/history lists it: its picture is the unit's
// dump in the stream whose life id names (pic is "<club>." on a league hub's page,
// whose club's stream it is).
func historyItem(e *history.Entry, pic, id string) HistoryItem {
	r, _ := e.Record() // the history made it, or the worker did
	it := HistoryItem{StreamSeq: e.UnitSeq, Problem: e.Problem, Seq: e.Seq, Answer: r.Answer, Error: r.Error,
		Time: e.Time.UTC().Format(time.RFC3339Nano)}
	if e.UnitSeq != 0 && r.Error == "" && !e.Unanswered {
		it.SVG = fmt.Sprintf("/history/%s%d-%s.svg", pic, e.UnitSeq, id)
	}
	return it
}
