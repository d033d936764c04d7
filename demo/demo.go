// Package demo plays two scoreboards on pseudo-terminals for 'scoreboard demo': a Go
// board dumping the goscore sample and an Othello board playing the othello sample,
// each in a loop, as a club room would, so a new user sees the daemon, the page and
// the tools at work within a minute, with nothing plugged in.
// Simulate is 'scoreboard simulate': one scoreboard on a pseudo-terminal, by hand.
package demo

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/goclub/scoreboard/serialio"
)

// The samples the boards play: copies of testdata/samples (a test keeps them equal),
// embedded so that an installed binary has them.
var (
	//go:embed samples/goscore.in
	goscore []byte
	//go:embed samples/othello.in
	othello []byte
)

// Board is one simulated scoreboard: its pseudo-terminal, the port's name and
// problem, and what it sends each round.
type Board struct {
	Name, Problem string
	PTY           *serialio.PTY
	Input         []byte
}

// Boards opens the two boards' pseudo-terminals; Close closes them.
func Boards() ([]*Board, error) {
	var bs []*Board
	for _, b := range []struct {
		name, problem string
		in            []byte
	}{{"hall", "goscore", goscore}, {"lobby", "othello", othello}} {
		pt, err := serialio.OpenPTY()
		if err != nil {
			Close(bs)
			return nil, err
		}
		bs = append(bs, &Board{Name: b.name, Problem: b.problem, PTY: pt, Input: b.in})
	}
	return bs, nil
}

// Close closes the boards' pseudo-terminals.
func Close(bs []*Board) {
	for _, b := range bs {
		b.PTY.Close()
	}
}

// Config is the daemon's configuration for the boards: a TOML file for 'run --config'
// with the page on httpAddr, the NATS listener on natsAddr and the history in
// stateDir.
func Config(bs []*Board, natsAddr, httpAddr, stateDir string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# scoreboard demo: two simulated scoreboards.\n[nats]\nlisten = %q\n\n[daemon]\nstate_dir = %q\n\n[http]\nlisten = %q\n",
		natsAddr, stateDir, httpAddr)
	for i, bd := range bs {
		fmt.Fprintf(&b, "\n[[port]]\nname = %q\ndevice = %q\nproblem = %q\nbaud = 115200\ntable = %d\n", bd.Name, bd.PTY.Path, bd.Problem, i+1)
	}
	return []byte(b.String())
}

// Play sends the board's input in a loop, at baud (10 bits a byte; 0: at once) with
// pause between rounds, and reads (and drops) the answers, until ctx ends. It waits
// for the daemon to open the device first, and again after it closes it.
func (b *Board) Play(ctx context.Context, baud int, pause time.Duration) error {
	if err := b.PTY.WaitOpened(ctx); err != nil {
		return nil // ctx ended
	}
	// The answers are dropped: the page and 'scoreboard watch' show them.
	go serialio.ReadAnswers(ctx, b.PTY.Master, nil, nil)
	for ctx.Err() == nil {
		err := serialio.SendPaced(ctx, b.PTY.Master, bytes.NewReader(b.Input), baud)
		if err != nil && !errors.Is(err, unix.EIO) { // EIO: the daemon closed the device, this round is lost
			return fmt.Errorf("board %s: %w", b.Name, err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(pause):
		}
	}
	return nil
}

// Next is what to try once the demo runs: the page, and the tools against its bus.
func Next(pageURL, natsURL, stateDir string, temporary bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "scoreboard demo: two simulated scoreboards, hall (goscore) and lobby (othello), play the samples in a loop.\n\n")
	fmt.Fprintf(&b, "  The page:            %s  (one board: %sboards/lobby)\n", pageURL, pageURL)
	fmt.Fprintf(&b, "  Results as they come: NATS_URL=%s scoreboard watch\n", natsURL)
	fmt.Fprintf(&b, "  What was kept:        NATS_URL=%s scoreboard history --port hall\n", natsURL)
	fmt.Fprintf(&b, "  Solve a board:        NATS_URL=%s scoreboard send goscore testdata/samples/goscore.in\n", natsURL)
	fmt.Fprintf(&b, "  Its picture:          scoreboard render goscore testdata/samples/goscore.in > board.svg\n")
	fmt.Fprintf(&b, "  Who plays:            NATS_URL=%s scoreboard pairings load --daemon-state-dir %s tournament.xml (docs/pairings.md)\n", natsURL, stateDir)
	fmt.Fprintf(&b, "  A real scoreboard:    scoreboard ports, then scoreboard run --port-device /dev/serial/by-id/... --port-problem goscore\n")
	fmt.Fprintf(&b, "  (From a clone, without the binary installed: go run ./cmd/scoreboard in place of scoreboard.)\n\n")
	if temporary {
		fmt.Fprintf(&b, "The history is kept in %s, removed when the demo stops (Ctrl-C); --daemon-state-dir keeps it.\n", stateDir)
	} else {
		fmt.Fprintf(&b, "The history is kept in %s. Ctrl-C stops the demo.\n", stateDir)
	}
	return b.String()
}
