package daemon

import (
	"errors"
	"os"
	"time"

	"github.com/rs/zerolog"
)

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
type deviceWriter struct {
	link    *link
	timeout time.Duration
	log     zerolog.Logger
	queue   <-chan []byte
	room    chan<- struct{} // told each time answers leave the queue
	stop    <-chan struct{} // closed when the daemon is stopping
	deaf    bool            // the device is not reading: a write is being tried again
}

// run writes until the queue is closed and empty.
func (w *deviceWriter) run() {
	var buf []byte
	for text := range w.queue {
		buf = append(buf[:0], text...)
	more:
		for len(buf) < 64<<10 {
			select {
			case text, ok := <-w.queue:
				if !ok {
					break more
				}
				buf = append(buf, text...)
			default:
				break more
			}
		}
		select {
		case w.room <- struct{}{}:
		default:
		}
		w.write(buf)
	}
}

func (w *deviceWriter) write(b []byte) {
	for {
		port := w.link.get()
		if port == nil {
			w.log.Error().Int("bytes", len(b)).Msg("port not open; answer dropped")
			return
		}
		if err := port.SetWriteDeadline(time.Now().Add(w.timeout)); err != nil && !errors.Is(err, os.ErrNoDeadline) {
			w.log.Debug().Err(err).Msg("set write deadline")
		}
		n, err := port.Write(b)
		b = b[n:]
		if err == nil {
			if w.deaf {
				w.deaf = false
				w.log.Info().Msg("the device reads again")
			}
			return
		}
		timedOut := errors.Is(err, os.ErrDeadlineExceeded)
		if timedOut && !w.stopping() && w.link.get() == port {
			if !w.deaf {
				w.deaf = true
				w.log.Warn().Dur("timeout_ms", w.timeout).Int("bytes", len(b)).Msg("the device is not reading; holding its answers")
			}
			continue
		}
		ev := w.log.Error().Err(err).Int("written", n).Int("bytes", len(b)+n)
		if timedOut {
			ev.Dur("timeout_ms", w.timeout).Msg("the device is not reading; answer dropped")
		} else {
			ev.Msg("write to port failed; answer dropped")
		}
		return
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
