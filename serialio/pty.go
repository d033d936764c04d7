package serialio

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// PTY is a pseudo-terminal pair: the scoreboard's end (Master) and the device path of
// the other end, for a daemon to open as its serial port.
type PTY struct {
	Master *os.File
	Path   string
}

// OpenPTY opens a pseudo-terminal pair. The device is put in raw mode, so that nothing
// written before a daemon sets its own line settings is echoed or rewritten, and then
// closed: the device exists as long as Master is open.
func OpenPTY() (*PTY, error) {
	master, slave, err := pty.Open()
	if err != nil {
		return nil, fmt.Errorf("open a pseudo-terminal: %w", err)
	}
	defer slave.Close()
	if err := makeRaw(int(slave.Fd())); err != nil {
		master.Close()
		return nil, fmt.Errorf("pseudo-terminal %s: raw mode: %w", slave.Name(), err)
	}
	return &PTY{Master: master, Path: slave.Name()}, nil
}

// makeRaw is cfmakeraw: no echo, no line editing, no CR/LF rewriting, 8 bits.
func makeRaw(fd int) error {
	t, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return err
	}
	t.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	t.Oflag &^= unix.OPOST
	t.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	t.Cflag &^= unix.CSIZE | unix.PARENB
	t.Cflag |= unix.CS8
	t.Cc[unix.VMIN], t.Cc[unix.VTIME] = 1, 0
	return unix.IoctlSetTermios(fd, unix.TCSETS, t)
}

// WaitOpened waits until something opens the device: while nobody has it open, the
// master sees a hang-up.
func (p *PTY) WaitOpened(ctx context.Context) error { return p.wait(ctx, false) }

// WaitClosed waits until nobody has the device open any more.
func (p *PTY) WaitClosed(ctx context.Context) error { return p.wait(ctx, true) }

func (p *PTY) wait(ctx context.Context, closed bool) error {
	for {
		fds := []unix.PollFd{{Fd: int32(p.Master.Fd()), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds, 0); err != nil && err != unix.EINTR {
			return fmt.Errorf("pseudo-terminal %s: poll: %w", p.Path, err)
		}
		if hup := fds[0].Revents&unix.POLLHUP != 0; hup == closed {
			return nil
		}
		select {
		case <-ctx.Done():
			if closed {
				return fmt.Errorf("pseudo-terminal %s: still open: %w", p.Path, ctx.Err())
			}
			return fmt.Errorf("pseudo-terminal %s: nobody opened it: %w", p.Path, ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// Close closes the master: to whoever has the device open, it is unplugged.
func (p *PTY) Close() error { return p.Master.Close() }
