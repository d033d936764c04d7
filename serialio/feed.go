package serialio

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// SendPaced writes r to w line by line, as a scoreboard would on its serial line:
// never faster than baud allows (10 bits a byte; 0: at once). It paces against the
// start time rather than sleeping per line, which keeps the rate right over long
// inputs. It returns when r ends (nil) or ctx does (nil), or with the write's error:
// errors.Is(err, unix.EIO) when the daemon closed the pseudo-terminal.
func SendPaced(ctx context.Context, w io.Writer, r io.Reader, baud int) error {
	br := bufio.NewReader(r)
	start := time.Now()
	var sent int64
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			if baud > 0 {
				due := start.Add(time.Duration(sent+int64(len(line))) * 10 * time.Second / time.Duration(baud))
				t := time.NewTimer(time.Until(due))
				select {
				case <-ctx.Done():
					t.Stop()
					return nil
				case <-t.C:
				}
			}
			if _, werr := w.Write(line); werr != nil {
				return fmt.Errorf("send: %w", werr)
			}
			sent += int64(len(line))
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read input: %w", err)
		}
	}
}

// ReadAnswers reads what the daemon writes to a pseudo-terminal's master side, so
// that its writes never wait on a full terminal, and copies it to out (nil: drops
// it), telling each read on seen (if not nil; never blocking). While the daemon has
// the device closed (EIO) it waits for it to come back; it returns when ctx ends or
// master is closed.
func ReadAnswers(ctx context.Context, master *os.File, out io.Writer, seen chan<- struct{}) {
	buf := make([]byte, 4096)
	for ctx.Err() == nil {
		n, err := master.Read(buf)
		if n > 0 {
			if out != nil {
				out.Write(buf[:n])
			}
			select {
			case seen <- struct{}{}:
			default:
			}
		}
		if err != nil {
			if !errors.Is(err, unix.EIO) {
				return // closed
			}
			time.Sleep(20 * time.Millisecond) // the daemon closed the device, for now
		}
	}
}
