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
type deviceWriter struct {
	link    *link
	timeout time.Duration
	log     zerolog.Logger
	queue   <-chan []byte
	room    chan<- struct{} // told each time answers leave the queue
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
	port := w.link.get()
	if port == nil {
		w.log.Error().Int("bytes", len(b)).Msg("port not open; answer dropped")
		return
	}
	if err := port.SetWriteDeadline(time.Now().Add(w.timeout)); err != nil && !errors.Is(err, os.ErrNoDeadline) {
		w.log.Debug().Err(err).Msg("set write deadline")
	}
	n, err := port.Write(b)
	if err != nil {
		ev := w.log.Error().Err(err).Int("written", n).Int("bytes", len(b))
		if errors.Is(err, os.ErrDeadlineExceeded) {
			ev.Dur("timeout", w.timeout).Msg("the device is not reading; answer dropped")
		} else {
			ev.Msg("write to port failed; answer dropped")
		}
	}
}
