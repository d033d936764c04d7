package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/goclub/scoreboard/serialio"
)

// Simulate is 'scoreboard simulate': one scoreboard on a pseudo-terminal, played by
// hand.
type Simulate struct {
	Input io.Reader // the units to send
	Out   io.Writer // what comes back
	Log   io.Writer // the device's path, and when it is open
	Baud  int       // the pace of the sending (10 bits a byte); 0: at once
	Link  string    // a symbolic link to make to the device; "": none
	Idle  time.Duration
	Wait  time.Duration // for the daemon to open the device; 0: for ever
}

// Run opens the pseudo-terminal, waits until a daemon opens it, sends Input, and
// copies what comes back to Out; it returns once everything is sent and nothing
// came back for Idle, or when ctx ends.
func (s Simulate) Run(ctx context.Context) error {
	if s.Link != "" {
		if err := checkLink(s.Link); err != nil {
			return err
		}
	}
	pt, err := serialio.OpenPTY()
	if err != nil {
		return err
	}
	defer pt.Close()
	master, path := pt.Master, pt.Path
	if s.Link != "" {
		_ = os.Remove(s.Link) // checkLink found none, or a stale one of ours
		if err := os.Symlink(path, s.Link); err != nil {
			return fmt.Errorf("--link %s: %w", s.Link, err)
		}
		defer func() {
			// Only our own link: another simulate may have taken the path since.
			if target, err := os.Readlink(s.Link); err == nil && target == path {
				os.Remove(s.Link)
			}
		}()
		fmt.Fprintf(s.Log, "scoreboard simulate: device %s (linked from %s)\n", path, s.Link)
	} else {
		fmt.Fprintf(s.Log, "scoreboard simulate: device %s\n", path)
	}

	waitCtx := ctx
	if s.Wait > 0 {
		var cancel context.CancelFunc
		waitCtx, cancel = context.WithTimeout(ctx, s.Wait)
		defer cancel()
	}
	if err := pt.WaitOpened(waitCtx); err != nil {
		return err
	}
	fmt.Fprintln(s.Log, "scoreboard simulate: the device is open; sending")

	// The reader stops when the deferred Close of master ends its Read.
	answers := make(chan struct{}, 1)
	go serialio.ReadAnswers(ctx, master, s.Out, answers)

	if err := serialio.SendPaced(ctx, master, s.Input, s.Baud); err != nil {
		return err
	}
	timer := time.NewTimer(s.Idle)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-answers:
			timer.Reset(s.Idle)
		case <-timer.C:
			return nil
		}
	}
}

// checkLink refuses to replace what is at path unless it is a link simulate would
// have made and left: one to a pseudo-terminal that is gone (dangling), or to one
// under /dev/pts. A file, a directory or another link is the user's.
func checkLink(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("--link %s: %w", path, err)
	}
	if fi.Mode()&os.ModeSymlink == 0 {
		return fmt.Errorf("--link %s: there is a %s there, which simulate will not replace: remove it, or give another path",
			path, describeMode(fi.Mode()))
	}
	target, err := os.Readlink(path)
	if err != nil {
		return fmt.Errorf("--link %s: %w", path, err)
	}
	if _, err := os.Stat(path); err == nil && !strings.HasPrefix(target, "/dev/pts/") {
		return fmt.Errorf("--link %s: it is a link to %s, not to a pseudo-terminal: remove it, or give another path", path, target)
	}
	return nil
}

func describeMode(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m.IsRegular():
		return "regular file"
	}
	return "file (" + m.Type().String() + ")"
}
