package history

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/bus"
)

// NoteStored has a reader of the stream tell stored of every result stored from now
// on (its publisher's origin and its unit's seq, from its Nats-Msg-Id), as it is
// stored: the result is in the store then, and a display writer holding the unit's
// answer for it (daemon.Stored) may write it. Call it after Subscribe and before the
// ports start; Run stops the reader when it ends.
//
// The reader is not the bucket's: that one starts startWindow messages back and waits
// for the actor, so a look-up or a put that is slow would hold the answers back, and
// on a stream of large dumps its start took seconds to reach the stream's end, every
// answer meanwhile held the whole daemon.DefaultStoreWait (in the later runs of
// TestFaultStopUnderLoad, on one state dir, every answer of a run). This one starts
// at the stream's end, reads the headers only, and waits for nothing.
func (u *Updater) NoteStored(stored func(origin string, seq uint64)) error {
	it, err := u.notesFrom(0)
	if err != nil {
		return err
	}
	u.notesMu.Lock()
	u.notesIt = it
	u.notesMu.Unlock()
	u.notesDone = make(chan struct{})
	go u.readNotes(it, stored)
	return nil
}

// notesFrom starts reading the stream's results, headers only: those stored after
// stream sequence last, or from now on when last is 0.
func (u *Updater) notesFrom(last uint64) (jetstream.MessagesContext, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cfg := jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{u.subj.AllResults()},
		DeliverPolicy:  jetstream.DeliverNewPolicy,
		HeadersOnly:    true,
	}
	if last > 0 {
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, last+1
	}
	cons, err := u.js.OrderedConsumer(ctx, u.subj.Stream(), cfg)
	if err != nil {
		return nil, fmt.Errorf("history: read stream %s's results as they are stored: %w", u.subj.Stream(), err)
	}
	it, err := cons.Messages()
	if err != nil {
		return nil, fmt.Errorf("history: read stream %s's results as they are stored: %w", u.subj.Stream(), err)
	}
	return it, nil
}

// readNotes tells stored of each result it reads, until Run ends. An ordered
// consumer starts again by itself after a lost connection; one that gave up is
// replaced by a new one after the last result read, as the bucket's reader is.
func (u *Updater) readNotes(it jetstream.MessagesContext, stored func(origin string, seq uint64)) {
	defer close(u.notesDone)
	var last uint64
	failed := 0 // errors in a row
	for {
		m, err := it.Next()
		if err == nil {
			failed = 0
			if meta, err := m.Metadata(); err == nil {
				last = meta.Sequence.Stream
			}
			if origin, seq, ok := bus.ParseResultID(m.Headers().Get(nats.MsgIdHdr)); ok {
				stored(origin, seq)
			}
			continue
		}
		select {
		case <-u.quit:
			return
		default:
		}
		if !errors.Is(err, jetstream.ErrMsgIteratorClosed) {
			u.warn.Warn(&u.log, "notes").Err(err).Msg("reading which results the history stream stored; trying again")
			if failed++; failed < 5 {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			it.Stop() // this one is stuck: a new one below
		}
		failed = 0
		// Given up by the ordered consumer (a replicated stream without a leader for
		// long): the answers are held at most StoreWait meanwhile.
		select {
		case <-u.quit:
			return
		case <-time.After(time.Second):
		}
		next, err := u.notesFrom(last)
		if err != nil {
			u.warn.Warn(&u.log, "notes").Err(err).Msg("reading which results the history stream stored; trying again")
			continue
		}
		u.notesMu.Lock()
		it, u.notesIt = next, next
		u.notesMu.Unlock()
		select {
		case <-u.quit:
			it.Stop()
			return
		default:
		}
	}
}

// stopNotes stops the notes' reader, if any, and waits for it until deadline.
func (u *Updater) stopNotes(deadline time.Time) {
	if u.notesDone == nil {
		return
	}
	u.notesMu.Lock()
	it := u.notesIt
	u.notesMu.Unlock()
	// Stop waits for the ordered consumer's lock, which a reset holds while it retries.
	go it.Stop()
	t := time.NewTimer(max(time.Until(deadline), 0))
	defer t.Stop()
	select {
	case <-u.notesDone:
	case <-t.C:
	}
}
