package history

// The updater's puts: which result is a port's latest, its value (the unit looked up,
// the board after it), and the puts to the bucket with their acks.

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/result"
)

// newer says whether a result (its origin and unit seq, stored at streamSeq) is its
// port's latest rather than pv's: the result of another publisher stored later (a
// daemon started again, or another sender), or of the same one a later unit.
// Workers answer a port's units in parallel, so its results are stored out of
// order: the stream's last result of a port is not always its last unit's.
func (pv *portValue) newer(origin string, unitSeq, streamSeq uint64) bool {
	if pv.seq == 0 {
		return true
	}
	if origin != pv.origin {
		return streamSeq > pv.seq
	}
	return unitSeq > pv.unitSeq || unitSeq == pv.unitSeq && streamSeq > pv.seq
}

// MaxPorts bounds the ports whose boards the bucket keeps (and the updater holds in
// memory): anyone may publish a dump, so a tool could name a new port with each one,
// and each would be a map entry and a bucket key for good. The results of a port
// beyond the bound are stored in the history, but not kept as a board; a club has
// a few ports.
const MaxPorts = 1000

// port is the value of port, made if new; nil, counted and warned of (sampled), for
// a token that is no port name (bus.ValidToken) or a new port beyond MaxPorts.
func (u *Updater) port(port string) *portValue {
	if pv := u.ports[port]; pv != nil {
		return pv
	}
	why := ""
	switch {
	case !bus.ValidToken(port):
		why = "a result of a port whose name is no port name; not kept in the bucket"
	case len(u.ports) >= MaxPorts:
		why = fmt.Sprintf("a result of a new port beyond the %d ports the bucket keeps; not kept in the bucket", MaxPorts)
	}
	if why != "" {
		u.refusedPorts.Add(1)
		u.warn.Warn(&u.log, "bad port").Str("port", port[:min(len(port), 80)]).Msg(why)
		return nil
	}
	pv := &portValue{}
	u.ports[port] = pv
	return pv
}

// RefusedPorts counts the results not kept as a board: of a port whose name is no
// port name, or beyond MaxPorts.
func (u *Updater) RefusedPorts() int64 { return u.refusedPorts.Load() }

// take makes a result the stream stored into its port's next value, if it is newer.
func (u *Updater) take(m jetstream.Msg) {
	meta, err := m.Metadata()
	if err != nil {
		return
	}
	if meta.Sequence.Stream > u.windowEnd {
		u.behind.Store(meta.NumPending) // the reader's, not the start window's
	}
	subject := m.Subject()
	pv := u.port(subject[strings.LastIndexByte(subject, '.')+1:])
	if pv == nil {
		return
	}
	unitSeq, origin := result.SeqOrigin(m.Data())
	if !pv.newer(origin, unitSeq, meta.Sequence.Stream) {
		return
	}
	pv.set(m.Data(), meta.Timestamp, meta.Sequence.Stream, origin, unitSeq)
}

// set makes a result the port's next value, unless the bucket holds it already.
func (pv *portValue) set(result []byte, at time.Time, seq uint64, origin string, unitSeq uint64) {
	pv.seq, pv.origin, pv.unitSeq = seq, origin, unitSeq
	if seq == pv.stored && pv.put == nil {
		pv.result = nil // the bucket holds it already (a start-up's), and no put will change it
		return
	}
	pv.result, pv.at = result, at
	pv.retry, pv.lookups, pv.notBefore = 0, 0, time.Time{}
}

// value makes a result into the bucket's value: with its unit's text, when it was
// stored, its stream sequence, and for othello the board after the command. ok is
// false when the result names a unit whose text was not found (nil value), or when
// the result is not one of port's (nil value: nothing to put).
func (u *Updater) value(ctx context.Context, port string, pv *portValue) (value []byte, ok bool) {
	res, err := result.Decode(pv.result)
	if err != nil || res.Port != port {
		u.warn.Warn(&u.log, "bad result").Str("port", port).Msg("a message on a results subject is not a result of its port; not kept in the bucket")
		return nil, true
	}
	unit := u.unit(ctx, res.Problem, res.Port, res.Origin, res.Seq)
	if unit == nil && res.Seq != 0 {
		if pv.lookups++; pv.lookups < lookupTries {
			return nil, false
		}
		n := u.lost.Add(1)
		u.warn.Warn(&u.log, "lost unit").Str("port", port).Uint64("seq", res.Seq).Uint64("stream_seq", pv.seq).
			Int("lookups", pv.lookups).Uint64("values_without_unit", n).
			Msg("the unit of the port's latest result is not in the history stream; the bucket holds the result without it")
	}
	var board []string
	if res.Problem == "othello" && unit != nil {
		board, _ = engine.OthelloBoardAfter(unit) // a unit that does not parse has no board
	}
	return AppendStreamSeq(AppendRecord(nil, pv.result, unit, pv.at, board, false), pv.seq), true
}

// AppendStreamSeq adds "stream_seq" to a record (a JSON object): the stream sequence
// of the result a bucket's value holds, which orders the values, whatever the clocks.
func AppendStreamSeq(record []byte, seq uint64) []byte {
	record = append(record[:len(record)-1], `,"stream_seq":`...)
	return append(strconv.AppendUint(record, seq, 10), '}')
}

// maxLookups bounds the stream requests that look for one result's unit: a binary
// search over a stream of a billion messages takes 30.
const maxLookups = 40

// unit finds the text of the unit a result answers: its dump, kept in the stream. It
// is looked up only for the values put (a burst of results makes one put a port),
// rather than every dump being sent to the updater too, which cost the server and
// the updater as much again. Most often the port's last dump is the one; with units
// in flight it is a little earlier on the same subject, where a port's dumps are in
// seq order. nil if it is not found.
func (u *Updater) unit(ctx context.Context, problem, port, origin string, seq uint64) []byte {
	if seq == 0 {
		return nil // a dump by hand: nothing tells which one
	}
	if u.local != nil {
		if unit := u.local(port, origin, seq); unit != nil {
			return unit
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := u.theStream(ctx); err != nil {
		return nil
	}
	subject := u.subj.Dump(problem, port)
	m, err := u.stream.GetLastMsgForSubject(ctx, subject)
	if err != nil {
		return nil
	}
	d, _ := bus.ReadDump(m.Header)
	if d.Origin != origin {
		return nil // another publisher's dumps, or a daemon started since
	}
	if d.Seq == seq {
		return m.Data
	}
	if d.Seq < seq {
		return nil
	}
	// A binary search of the stream sequences [a, b] before the last dump.
	a, b := uint64(1), m.Sequence-1
	for range maxLookups {
		if a > b {
			return nil
		}
		mid := a + (b-a)/2
		if m, err = u.stream.GetMsg(ctx, mid, jetstream.WithGetMsgSubject(subject)); err != nil {
			return nil
		}
		if m.Sequence > b {
			b = mid - 1 // no dump of the port in [mid, b]
			continue
		}
		d, _ := bus.ReadDump(m.Header)
		if d.Origin != origin {
			// Most likely an earlier daemon's dumps on this port: look after them.
			a = m.Sequence + 1
			continue
		}
		switch {
		case d.Seq == seq:
			return m.Data
		case d.Seq < seq:
			a = m.Sequence + 1
		default:
			b = mid - 1 // m is the port's first dump from mid on, and past it
		}
	}
	return nil
}

// pump collects the acks that came and puts the values waiting, one a port, of the
// ports whose last put was sent before since.
// It reports whether anything is left: a value to put, or a put awaiting its ack.
//
// Its look-ups end with ctx: a stop does not wait for them (a tool's unit, not in
// LookUpFirst's, looked up in a stream of large dumps under load took seconds).
func (u *Updater) pump(ctx context.Context, since time.Time) (pending bool) {
	now := time.Now()
	for port, pv := range u.ports {
		if pv.put != nil {
			select {
			case <-pv.put.Ok():
				u.puts.Add(1)
				pv.stored = pv.putSeq
			case err := <-pv.put.Err():
				u.refuse(port, err)
				// A put refused (most often an ack late on a busy server) is put again,
				// unless a newer result came meanwhile: else the port's board stays
				// stale until its next result, which may never come.
				if pv.result == nil {
					pv.result, pv.at, pv.seq = pv.putting, pv.putAt, pv.putSeq
					pv.retry = putRetry.Next(pv.retry)
					pv.notBefore = now.Add(pv.retry)
				}
			default:
				continue // still waiting for its ack
			}
			u.inFlight.Add(-1)
			pv.put = nil
		}
		if pv.result == nil || pv.sent.After(since) || now.Before(pv.notBefore) {
			continue
		}
		value, ok := u.value(ctx, port, pv)
		if ctx.Err() != nil {
			break // a look-up cut short proves nothing of its unit
		}
		if !ok {
			// Its unit not found: looked up again a moment later (a look-up that
			// timed out on a busy machine), up to lookupTries.
			pv.notBefore = now.Add(lookupRetry.Wait(pv.lookups - 1))
			continue
		}
		if value == nil {
			pv.result = nil
			continue
		}
		f, err := u.js.PublishAsync(u.key+port, value)
		if err != nil {
			u.refuse(port, err)
			pv.retry = putRetry.Next(pv.retry)
			pv.notBefore = now.Add(pv.retry)
			continue
		}
		u.inFlight.Add(1)
		pv.put, pv.putting, pv.putAt, pv.putSeq, pv.result, pv.sent = f, pv.result, pv.at, pv.seq, nil, now
	}
	for _, pv := range u.ports {
		if pv.put != nil || pv.result != nil {
			return true
		}
	}
	return false
}

func (u *Updater) refuse(port string, err error) {
	n := u.refused.Add(1)
	u.warn.Warn(&u.log, "refused").Str("port", port).Uint64("refused", n).Err(err).
		Msg("the history bucket did not take the port's latest board; the scoreboard is not affected")
}

// finish waits for the puts in flight until deadline, so a clean stop keeps the last
// board.
func (u *Updater) finish(deadline time.Time) {
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	// Twice: a put acked may let the next value of its port go.
	for range 2 {
		u.pump(ctx, time.Now())
		done := u.js.PublishAsyncComplete()
		select {
		case <-done:
			continue
		default:
		}
		t := time.NewTimer(max(time.Until(deadline), 0))
		select {
		case <-done:
			t.Stop()
			continue
		case <-t.C:
			u.log.Warn().Msg("stopping: the history bucket has not acked the last boards")
			return
		}
	}
}
