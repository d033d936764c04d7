package pairing

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

// ErrNotLoaded is a load the daemon (or the hub) refused, or could not finish.
var ErrNotLoaded = errors.New("pairings not loaded")

// Request sends a load to the daemon's endpoint on subject and returns its
// report: an error when no daemon answers, or when it applied nothing.
func Request(ctx context.Context, nc *nats.Conn, subject string, l Load, timeout time.Duration) (Report, error) {
	data, err := json.Marshal(l)
	if err != nil {
		return Report{}, err
	}
	if max := nc.MaxPayload(); int64(len(data)) > max {
		return Report{}, fmt.Errorf("%s: round %d is %d bytes as a request, over the server's %d: %w", l.File, l.Round.Round, len(data), max, ErrNotLoaded)
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	m, err := nc.RequestWithContext(rctx, subject, data)
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		return Report{}, fmt.Errorf("no daemon answers on %s: is scoreboard run (or, with --league, scoreboard hub) running with its history, on --nats-url? %w", subject, ErrNotLoaded)
	case err != nil:
		return Report{}, fmt.Errorf("%s: %w (%w)", subject, err, ErrNotLoaded)
	}
	var rep Report
	if err := json.Unmarshal(m.Data, &rep); err != nil {
		return Report{}, fmt.Errorf("%s: an answer that is no report: %w", subject, err)
	}
	if rep.Error != "" {
		return rep, fmt.Errorf("%s: %w", rep.Error, ErrNotLoaded)
	}
	return rep, nil
}

// Print writes what a load did, a line a port, for the organiser.
func (r Report) Print(w io.Writer, round Round) {
	fmt.Fprintf(w, "round %d of %q: %d games, %d on a port\n", round.Round, round.Tournament, len(round.Games), len(r.Ports))
	tables := make([]int, 0, len(r.Ports))
	for t := range r.Ports {
		tables = append(tables, t)
	}
	slices.Sort(tables)
	byTable := map[int]Game{}
	for _, g := range round.Games {
		byTable[g.Table] = g
	}
	for _, t := range tables {
		g := byTable[t]
		fmt.Fprintf(w, "  table %d on %s: %s (%s) - %s (%s)\n", t, r.Ports[t], g.Black.FullName(), g.Black.Rank, g.White.FullName(), g.White.Rank)
	}
	if len(r.NoPort) > 0 {
		fmt.Fprintf(w, "tables without a port (not shown; give a [[port]] its table, or at a hub map it in [tables]): %s\n", intList(r.NoPort))
	}
	if len(r.Cleared) > 0 {
		fmt.Fprintf(w, "ports without a game this round (they show no players): %s\n", strings.Join(r.Cleared, ", "))
	}
	if len(r.Unseen) > 0 {
		fmt.Fprintf(w, "ports that have shown no board here yet (their game shows once they send one; if one is a typo, fix [tables] and SIGHUP, then load again): %s\n", strings.Join(r.Unseen, ", "))
	}
}
