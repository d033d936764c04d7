package history

// The updater's readers of the stream: the results stored from Subscribe on, handed
// to the actor in stream order (and noted as stored for the display writers), and the
// start window's.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/internal/backoff"
)

// results reads the stream's results from stream sequence from on.
func (u *Updater) results(ctx context.Context, from uint64) (jetstream.MessagesContext, error) {
	cons, err := u.js.OrderedConsumer(ctx, u.subj.Stream(), jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{u.subj.AllResults()},
		DeliverPolicy:  jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:    max(from, 1),
	})
	if err != nil {
		return nil, fmt.Errorf("history: read stream %s: %w", u.subj.Stream(), err)
	}
	it, err := cons.Messages()
	if err != nil {
		return nil, fmt.Errorf("history: read stream %s: %w", u.subj.Stream(), err)
	}
	return it, nil
}

// readWindow hands on the results stored before Subscribe, from the start window
// to windowEnd: each port's results in flight at the end, so that the latest is its
// last unit's, not the last stored (the idle comparison takes each port's last
// stored, should this reader fail).
func (u *Updater) readWindow(it jetstream.MessagesContext) {
	defer u.windowRead.Store(true)
	defer it.Stop()
	for {
		m, err := it.Next()
		if err != nil {
			return // stopped by Run, or failed
		}
		meta, err := m.Metadata()
		if err != nil || meta.Sequence.Stream > u.windowEnd {
			return
		}
		select {
		case u.msgs <- m:
		case <-u.quit:
			return
		}
		if meta.Sequence.Stream == u.windowEnd || meta.NumPending == 0 {
			return
		}
	}
}

// startWindow is how many of the stream's last messages the updater reads at start:
// dumps and results of units in flight (a port has at most 1,024), of a few ports.
const startWindow = 20_000

// read hands the stream's results to the actor, until the iterator is stopped. The
// ordered consumer starts again by itself after a lost connection or JetStream,
// from the first result it has not read.
func (u *Updater) read() {
	defer close(u.reader)
	last := u.windowEnd // the stream sequence of the last result handed on
	var consumer string // the consumer that delivered it: a new name is a reset
	it := u.iterator()
	failed := 0 // errors in a row
	for {
		m, err := it.Next()
		if err != nil && !errors.Is(err, jetstream.ErrMsgIteratorClosed) {
			u.warn.Warn(&u.log, "read").Err(err).Msg("reading the history stream's results for the bucket; trying again")
			if failed++; failed < 5 {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			it.Stop() // this one is stuck: a new one below
			err = jetstream.ErrMsgIteratorClosed
		}
		failed = 0
		if errors.Is(err, jetstream.ErrMsgIteratorClosed) {
			// Stopped by Run, or given up by the ordered consumer after resets that
			// failed (a replicated stream without a leader for long): a new one
			// goes on after the last result handed on.
			if it = u.restart(last); it == nil {
				return // stopped by Run before a new one could be made
			}
			continue
		}
		if meta, err := m.Metadata(); err == nil {
			last = meta.Sequence.Stream
			if consumer != "" && meta.Consumer != consumer {
				// A tool may pull from this consumer by name (review F3): what it
				// took is read again from the new one, at the cost of this reset.
				u.resets.Add(1)
				u.warn.Warn(&u.log, "reset").Str("consumer", meta.Consumer).Uint64("stream_seq", last).
					Msg("the history stream's reader went on from a new consumer: a gap in its delivery (another client pulled from it, or the connection was lost)")
			}
			consumer = meta.Consumer
		}
		select {
		case u.msgs <- m:
			u.handed.Store(last)
		case <-u.quit:
			return
		}
	}
}

// iterator is the reader's current iterator.
func (u *Updater) iterator() jetstream.MessagesContext {
	u.itMu.Lock()
	defer u.itMu.Unlock()
	return u.it
}

// restart makes a new reader of the stream's results after stream sequence last,
// trying again (backing off to every 5 s, the failures logged sampled) for as long
// as the stream cannot be read: a replicated stream without a leader, or JetStream
// away. It returns nil only when Run has stopped the updater; never an iterator
// that does not exist (a nil one took the daemon down, issue 30).
func (u *Updater) restart(last uint64) jetstream.MessagesContext {
	for failures := 0; ; failures++ {
		select {
		case <-u.quit:
			return nil
		case <-time.After(restartRetry.Wait(failures)):
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		it, err := u.results(ctx, last+1)
		cancel()
		if err != nil {
			u.warn.Warn(&u.log, "read").Err(err).Int("failures", failures+1).
				Msg("reading the history stream's results for the bucket again; trying again")
			continue
		}
		u.itMu.Lock()
		u.it = it
		u.itMu.Unlock()
		select {
		case <-u.quit:
			// Run's stop may have taken the old iterator before this one was set.
			it.Stop()
			return nil
		default:
		}
		u.log.Info().Uint64("after_stream_seq", last).Int("failures", failures).Msg("reading the history stream's results for the bucket again")
		return it
	}
}

// restartRetry spaces the attempts to read the stream again: the first a second
// after the reader stopped, as the ordered consumer's own resets are spaced.
var restartRetry = backoff.Policy{Min: time.Second, Max: 5 * time.Second}
