package history

// The updater's safety nets: the idle comparison of each port's latest result with
// the stream's, and the stop's catch-up to the stream's latest.

import (
	"context"
	"iter"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/result"
)

// reconcileIdle is how long the updater waits without a result before it compares
// each port's latest result in the stream with the one it has; reconcileEvery how
// often it does so while idle all along.
const (
	reconcileIdle  = 500 * time.Millisecond
	reconcileEvery = 2 * time.Second
)

// reconcileQuietAfter is how long after the last result the idle comparison goes on
// every reconcileEvery (a replicated stream's new leader, the reader's restart);
// then it runs every reconcileIdleEvery: an idle daemon wakes for it once a minute,
// not every 2 s.
const (
	reconcileQuietAfter = time.Minute
	reconcileIdleEvery  = time.Minute
)

// reconcile reads each port's latest result in the stream (last per subject) and
// takes it where the updater has an older one: a safety net under the reader, so
// that a reader that stalls or misses a result (an ordered consumer reset on a
// loaded machine) cannot leave the bucket behind the stream.
//
// It reports whether it found the updater behind: a result taken, or the reader
// behind the stream; or whether the stream did not answer. A reader whose ordered consumer waits for good on a consumer
// lost in a leader change (seen in TestFaultClusterNodeAndWorkerKilled: it handed
// on nothing at all, and the stream's last result of the port was then an older
// unit's, put back late, so this comparison could not find the port's
// latest either) is stopped when two comparisons in a row find the stream's latest
// result beyond the last it handed on: read starts a new one after that.
func (u *Updater) reconcile(ctx context.Context) (behind bool) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	last, err := u.lastResults(ctx)
	if err != nil {
		// The stream does not answer (no leader, JetStream away): compared again
		// soon, not once a minute, so that the bucket follows within seconds of
		// its return even when the reader's consumer is slow to come back (seen in
		// CI after two 25 s spells without a leader: the bucket at unit 26 of
		// 19,513, the reader stuck, the next comparison a minute away).
		return true
	}
	var latest uint64 // the stream's last result of any port
	defer func() {
		if latest <= u.handed.Load() {
			u.lagging = 0
			return
		}
		behind = true
		if u.lagging++; u.lagging >= 2 {
			u.lagging = 0
			u.log.Warn().Uint64("stream_seq", latest).Uint64("handed", u.handed.Load()).
				Msg("the history stream's reader is behind the stream's latest result and idle: starting it again")
			// Stop may wait for a reset in progress: not here.
			go u.iterator().Stop()
		}
	}()
	for port, m := range last {
		latest = max(latest, m.Sequence)
		if u.takeLast(port, m) {
			u.warn.Warn(&u.log, "reconcile").Str("port", port).Uint64("stream_seq", m.Sequence).
				Msg("the stream's latest result of the port had not reached the bucket's updater; taken from the stream")
			behind = true
		}
	}
	return behind
}

// takeLast makes the stream's last result of a port its next value, if it is newer
// than the one the updater has; it reports whether it was.
func (u *Updater) takeLast(port string, m *jetstream.RawStreamMsg) bool {
	pv := u.port(port)
	if pv == nil {
		return false
	}
	unitSeq, origin := result.SeqOrigin(m.Data)
	if !pv.newer(origin, unitSeq, m.Sequence) {
		return false
	}
	pv.set(m.Data, m.Time, m.Sequence, origin, unitSeq)
	return true
}

// lastResults yields each port's last result in the stream (last per subject).
func (u *Updater) lastResults(ctx context.Context) (iter.Seq2[string, *jetstream.RawStreamMsg], error) {
	stream, err := u.theStream(ctx)
	if err != nil {
		return nil, err
	}
	info, err := stream.Info(ctx, jetstream.WithSubjectFilter(u.subj.AllResults()))
	if err != nil {
		return nil, err
	}
	return func(yield func(string, *jetstream.RawStreamMsg) bool) {
		for subject := range info.State.Subjects {
			m, err := stream.GetLastMsgForSubject(ctx, subject)
			if err != nil {
				continue
			}
			if !yield(subject[strings.LastIndexByte(subject, '.')+1:], m) {
				return
			}
		}
	}, nil
}

// theStream is the history stream, looked up once.
func (u *Updater) theStream(ctx context.Context) (jetstream.Stream, error) {
	if u.stream == nil {
		s, err := u.js.Stream(ctx, u.subj.Stream())
		if err != nil {
			return nil, err
		}
		u.stream = s
	}
	return u.stream, nil
}

// StopWithin bounds a stop's catch-up and last puts: left gives, when the stop
// begins, the time it may still take (a daemon's: what is left of its drain, so
// that the history does not make a stop longer than --daemon-drain). Without it a
// stop takes at most defaultStop.
func (u *Updater) StopWithin(left func() time.Duration) { u.stopLeft = left }

// defaultStop bounds a stop without StopWithin; minStop is the least a stop gets,
// for the last puts, when the drain has run out.
const (
	defaultStop = 5 * time.Second
	minStop     = 200 * time.Millisecond
)

func (u *Updater) stopBound() time.Duration {
	if u.stopLeft == nil {
		return defaultStop
	}
	return max(u.stopLeft(), minStop)
}

// catchUp takes, at a stop, the results the reader has not handed on yet up to the
// stream's latest result, until deadline. A reader behind the stream (started
// again after a replicated stream's leader change) would otherwise leave the bucket
// at what the idle comparison found, which after older units were put back late
// is an older unit's board (TestFaultClusterNodeAndWorkerKilled: unit 3,616 of
// 3,663, the reader started again from the stream's start 1 s before the stop).
func (u *Updater) catchUp(msgs <-chan jetstream.Msg, deadline time.Time) {
	defer func() {
		for range len(msgs) {
			u.take(<-msgs)
		}
	}()
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	results, err := u.lastResults(ctx)
	if err != nil {
		return
	}
	// Each port's last result at once, as the idle comparison takes it: a reader
	// far behind (a stream of large dumps, under load) may not reach it in time.
	var latest uint64
	for port, m := range results {
		latest = max(latest, m.Sequence)
		u.takeLast(port, m)
	}
	last := u.handed.Load()
	for last < latest {
		select {
		case m := <-msgs:
			u.take(m)
			if meta, err := m.Metadata(); err == nil {
				last = max(last, meta.Sequence.Stream) // the start window's are older
			}
		case <-ctx.Done():
			u.log.Warn().Uint64("stream_seq", latest).Uint64("read", last).
				Msg("stopping: the history stream's reader has not reached the stream's latest result; the bucket may show an older board until the next start")
			return
		}
	}
}
