package history

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/render"
)

// Format is how Print writes the units it reads.
type Format int

const (
	Lines Format = iota // a line a unit, as watch prints results (Entry.Line)
	JSON                // a record a line (Entry.JSON)
	SGF                 // the answered Go games among them, as one SGF collection
)

// Print reads the units q selects, oldest first, and writes them to w in format f:
// 'scoreboard history'.
func Print(ctx context.Context, js jetstream.JetStream, prefix string, q Query, f Format, w io.Writer) error {
	var (
		buf  []byte
		recs []render.Record
	)
	err := Read(ctx, js, prefix, q, func(e *Entry) error {
		switch f {
		case SGF:
			if e.Answered() && render.HasSGF(e.Problem) {
				rec := render.Record{Problem: e.Problem, Unit: e.Unit}
				if r, err := e.Record(); err == nil && r.Players != nil {
					rec.Game = render.Game{Players: r.Players, Date: e.Time}
				}
				recs = append(recs, rec)
			}
			return nil
		case JSON:
			buf = append(e.JSON(buf[:0]), '\n')
			_, err := w.Write(buf)
			return err
		}
		_, err := fmt.Fprintln(w, e.Line())
		return err
	})
	if err != nil || f != SGF {
		return err
	}
	out, n, err := render.Collection(recs)
	if err != nil {
		return fmt.Errorf("--sgf: %w", err)
	}
	if n == 0 {
		return errors.New("--sgf: no answered replay, goscore or territory unit in the selection")
	}
	_, err = w.Write(out)
	return err
}

// Answered says whether a kept unit has its text and an answer, not an error.
func (e *Entry) Answered() bool {
	if e.Unanswered || e.Unit == nil {
		return false
	}
	r, err := e.Record()
	return err == nil && r.Error == ""
}

// FindUnit reads a port's unit that q selects (a club's at a hub, say): the latest
// of sequence number seq (a port numbers its units from 1 again when its daemon
// restarts), or the port's last one when seq is 0. It returns the unit's problem
// and text.
func FindUnit(ctx context.Context, js jetstream.JetStream, prefix string, q Query, seq uint64) (string, []byte, error) {
	if seq == 0 {
		q.Last = 1
	}
	var found *Entry
	err := Read(ctx, js, prefix, q, func(e *Entry) error {
		if (seq == 0 || e.Seq == seq) && e.Unit != nil {
			found = e
		}
		return nil
	})
	switch {
	case err != nil:
		return "", nil, err
	case found == nil && seq == 0:
		return "", nil, fmt.Errorf("no unit kept in %s (is the club in the hub's [[club]] tables, the port's name right?)", q.Stream)
	case found == nil:
		return "", nil, fmt.Errorf("no unit %d kept in %s ('scoreboard history --club' lists the units kept)", seq, q.Stream)
	}
	return found.Problem, found.Unit, nil
}
