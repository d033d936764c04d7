package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/goclub/scoreboard/serialio"
)

func init() { register(simulateCommand) }

func simulateCommand(io stdio) *cobra.Command {
	var (
		baud       int
		link       string
		idle, wait time.Duration
	)
	cmd := &cobra.Command{
		Use:   "simulate [FILE]",
		Short: "plays the scoreboard on a pseudo-terminal: sends units, prints answers",
		Long: "Opens a pseudo-terminal pair and plays the scoreboard on it: prints the device\n" +
			"path (on stderr) to give to 'scoreboard run --port-device', waits until the\n" +
			"daemon opens it, sends FILE (or stdin) line by line at the given baud rate, and\n" +
			"copies what comes back to stdout. It exits once everything is sent and no answer\n" +
			"has come for --idle.",
		Example: "  scoreboard simulate --baud 115200 --link /tmp/board ../shared/samples/othello.in\n" +
			"  scoreboard run --port-device /tmp/board --port-problem othello --nats-listen off   # in another terminal",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usagef("want at most one FILE, got %d arguments", len(args))
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&baud, "baud", 9600, "line speed to pace the sending at (10 bits a byte); 0 sends at once")
	cmd.Flags().StringVar(&link, "link", "", "also make `PATH` a symbolic link to the device, for a stable --port-device")
	cmd.Flags().DurationVar(&idle, "idle", 3*time.Second, "exit when everything is sent and nothing came back for this long")
	cmd.Flags().DurationVar(&wait, "wait", 0, "give up if no daemon opens the device within this long (0: wait forever)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if baud < 0 {
			return usagef("--baud %d: want a line speed, or 0 to send at once", baud)
		}
		return simulate(cmd.Context(), args, baud, link, idle, wait, io)
	}
	return cmd
}

func simulate(ctx context.Context, args []string, baud int, link string, idle, wait time.Duration, io stdio) error {
	input, err := io.input(args, 0)
	if err != nil {
		return err
	}
	defer input.Close()

	if link != "" {
		if err := checkLink(link); err != nil {
			return err
		}
	}
	pt, err := serialio.OpenPTY()
	if err != nil {
		return err
	}
	defer pt.Close()
	master, path := pt.Master, pt.Path
	if link != "" {
		_ = os.Remove(link) // checkLink found none, or a stale one of ours
		if err := os.Symlink(path, link); err != nil {
			return fmt.Errorf("--link %s: %w", link, err)
		}
		defer func() {
			// Only our own link: another simulate may have taken the path since.
			if target, err := os.Readlink(link); err == nil && target == path {
				os.Remove(link)
			}
		}()
		fmt.Fprintf(io.err, "scoreboard simulate: device %s (linked from %s)\n", path, link)
	} else {
		fmt.Fprintf(io.err, "scoreboard simulate: device %s\n", path)
	}

	waitCtx := ctx
	if wait > 0 {
		var cancel context.CancelFunc
		waitCtx, cancel = context.WithTimeout(ctx, wait)
		defer cancel()
	}
	if err := pt.WaitOpened(waitCtx); err != nil {
		return err
	}
	fmt.Fprintln(io.err, "scoreboard simulate: the device is open; sending")

	// The reader stops when the deferred Close of master ends its Read.
	answers := make(chan struct{}, 1)
	go serialio.ReadAnswers(ctx, master, io.out, answers)

	if err := serialio.SendPaced(ctx, master, input, baud); err != nil {
		return err
	}
	timer := time.NewTimer(idle)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-answers:
			timer.Reset(idle)
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
