package daemon

import (
	"errors"
	"os"
	"time"

	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/serialio"
)

// What a port does with an answer whose unit was read from its device before the
// device was reopened (PortConfig.OnReopen).
const (
	// OnReopenDrop drops it, counted as dropped: the device went away and came back,
	// which is most often a scoreboard that rebooted, and would take the answer for
	// the answer to its first unit; every later answer would then be off by one.
	OnReopenDrop = "drop"
	// OnReopenWrite writes it to the device reopened, as it waits for it while the
	// device is away: for a cable that was bumped, the scoreboard still waiting.
	OnReopenWrite = "write"
)

// answer is what the display writer hands the device writer for one unit: the bytes
// to write, the device they are for (the link's epoch when the unit was read) and
// the unit's outcome, counted once the bytes are written or dropped.
type answer struct {
	text            []byte
	epoch           uint64
	failed, stopped bool
}

// deviceWriter is a port's device writer actor: it writes the answers queued by the
// display writer to whatever device is open, each write bounded by a deadline where
// the port takes one. What is queued while a write is under way goes out in the next
// single write, so a burst of answers costs one system call, not one each.
//
// A device that stops reading keeps its answers: a write past its deadline is tried
// again with what is left, for as long as the same device stays open, while the full
// queue holds the port's reader back. Only once the daemon is stopping (stop is
// closed) does a write past its deadline drop its answers, so that a device that
// never reads cannot hold the daemon up.
//
// An answer for a unit read from a device since lost is dropped (OnReopenDrop), or
// kept for the device when it comes back (OnReopenWrite). Each answer's unit is
// counted once its bytes are written, or counted dropped: never answered if it was not.
type deviceWriter struct {
	link    *link
	timeout time.Duration
	log     zerolog.Logger
	queue   <-chan answer
	room    chan<- struct{} // told each time answers leave the queue
	stop    <-chan struct{} // closed when the daemon is stopping
	deaf    bool            // the device is not reading: a write is being tried again
	keep    bool            // OnReopenWrite
	mon     *Monitor
	port    string
	buf     []byte
}

// run writes until the queue is closed and empty.
func (w *deviceWriter) run() {
	var batch []answer
	for a := range w.queue {
		batch = append(batch[:0], a)
		size := len(a.text)
	more:
		for size < 64<<10 {
			select {
			case a, ok := <-w.queue:
				if !ok {
					break more
				}
				batch = append(batch, a)
				size += len(a.text)
			default:
				break more
			}
		}
		select {
		case w.room <- struct{}{}:
		default:
		}
		w.write(batch)
		clear(batch) // let the texts go
	}
}

// write writes batch's answers in order, those of another device than the one open
// dropped or waited for as OnReopen says.
func (w *deviceWriter) write(batch []answer) {
	off := 0 // bytes of batch[0] already written, to offPort
	var offPort serialio.Port
	for len(batch) > 0 {
		port, epoch, changed := w.link.current()
		if off > 0 && port != offPort {
			// Half an answer reached a device now gone: the rest would be noise.
			w.drop(batch[:1], "the device went away in the middle of an answer; answer dropped")
			batch, off = batch[1:], 0
			continue
		}
		if port == nil {
			if w.keep && off == 0 && w.waitFor(changed) {
				continue
			}
			w.drop(batch, "port not open; answer dropped")
			return
		}
		if !w.keep && off == 0 {
			n := 0
			for n < len(batch) && batch[n].epoch != epoch {
				n++
			}
			if n > 0 {
				w.drop(batch[:n], "the device was reopened since the unit was read; answer dropped")
				batch = batch[n:]
				continue
			}
		}
		// The run of answers for this device (any, with OnReopenWrite).
		end := 1
		for end < len(batch) && (w.keep || batch[end].epoch == epoch) {
			end++
		}
		w.buf = append(w.buf[:0], batch[0].text[off:]...)
		for _, a := range batch[1:end] {
			w.buf = append(w.buf, a.text...)
		}
		if err := port.SetWriteDeadline(time.Now().Add(w.timeout)); err != nil && !errors.Is(err, os.ErrNoDeadline) {
			w.log.Debug().Err(err).Msg("set write deadline")
		}
		written, err := port.Write(w.buf)
		// The answers wholly written are counted; a part of one is remembered.
		for n := written; n > 0; {
			left := len(batch[0].text) - off
			if n < left {
				off += n
				offPort = port
				break
			}
			n -= left
			w.mon.outcome(w.port, batch[0].failed, batch[0].stopped)
			batch, off = batch[1:], 0
		}
		if err == nil {
			if w.deaf {
				w.deaf = false
				w.log.Info().Msg("the device reads again")
			}
			continue
		}
		timedOut := errors.Is(err, os.ErrDeadlineExceeded)
		if timedOut && !w.stopping() && w.link.get() == port {
			if !w.deaf {
				w.deaf = true
				w.log.Warn().Dur("timeout_ms", w.timeout).Int("bytes", len(w.buf)-written).Msg("the device is not reading; holding its answers")
			}
			continue
		}
		if off > 0 {
			// Half an answer reached the device: the rest would be noise on any other.
			w.drop(batch[:1], "write to port failed in the middle of an answer; answer dropped")
			batch, off = batch[1:], 0
		}
		// A device lost mid-write: the reader sees it too, and drops or replaces it.
		// With OnReopenWrite the answers left wait for it; else they are dropped now.
		if !timedOut && w.keep && !w.stopping() && w.waitLost(port, changed) {
			continue
		}
		ev := w.log.Error().Err(err)
		if timedOut {
			ev.Dur("timeout_ms", w.timeout).Int("answers", len(batch)).Msg("the device is not reading; answer dropped")
		} else {
			ev.Int("answers", len(batch)).Msg("write to port failed; answer dropped")
		}
		w.drop(batch, "")
		return
	}
}

// drop counts answers dropped, with one log line for them (none for an empty msg).
func (w *deviceWriter) drop(batch []answer, msg string) {
	if len(batch) == 0 {
		return
	}
	if msg != "" {
		w.log.Error().Int("answers", len(batch)).Msg(msg)
	}
	for range batch {
		w.mon.dropped(w.port)
	}
}

// waitFor waits until the link changes (the device is back) or the daemon stops; it
// reports whether the link changed.
func (w *deviceWriter) waitFor(changed <-chan struct{}) bool {
	select {
	case <-changed:
		return true
	case <-w.stop:
		return false
	}
}

// waitLost waits, at most a write timeout, for the reader to let port go after a
// write to it failed; it reports whether it did.
func (w *deviceWriter) waitLost(port serialio.Port, changed <-chan struct{}) bool {
	t := time.NewTimer(w.timeout)
	defer t.Stop()
	for {
		select {
		case <-changed:
			var now serialio.Port
			now, _, changed = w.link.current()
			if now != port {
				return true
			}
		case <-t.C:
			return false
		case <-w.stop:
			return false
		}
	}
}

func (w *deviceWriter) stopping() bool {
	select {
	case <-w.stop:
		return true
	default:
		return false
	}
}
