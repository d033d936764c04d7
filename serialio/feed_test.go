package serialio_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/serialio"
)

// SendPaced writes its input byte for byte, a line a write; ReadAnswers copies what
// the other side of a real pseudo-terminal writes and tells each read.
func TestSendPacedAndReadAnswers(t *testing.T) {
	in := "line one\nline two\r\nlast, no newline"
	var w lineWriter
	if err := serialio.SendPaced(context.Background(), &w, strings.NewReader(in), 0); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(w.writes, ""); got != in || len(w.writes) != 3 {
		t.Errorf("wrote %q in %d writes, want %q in 3", w.writes, len(w.writes), in)
	}
	// A context already ended sends nothing at a pace.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w = lineWriter{}
	if err := serialio.SendPaced(ctx, &w, strings.NewReader(in), 9600); err != nil || len(w.writes) != 0 {
		t.Errorf("after ctx's end: %d writes, error %v; want none", len(w.writes), err)
	}

	pt, err := serialio.OpenPTY()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer pt.Close()
	slave, err := os.OpenFile(pt.Path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer slave.Close()
	var out proctest.Buffer
	seen := make(chan struct{}, 1)
	rctx, stop := context.WithCancel(context.Background())
	defer stop()
	go serialio.ReadAnswers(rctx, pt.Master, &out, seen)
	if _, err := slave.Write([]byte("answer 1\n")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-seen:
	case <-time.After(time.Minute):
		t.Fatal("no read told within a minute")
	}
	deadline := time.Now().Add(time.Minute)
	for out.String() != "answer 1\n" && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := out.String(); got != "answer 1\n" {
		t.Errorf("read %q, want %q", got, "answer 1\n")
	}
}

type lineWriter struct{ writes []string }

func (w *lineWriter) Write(p []byte) (int, error) {
	w.writes = append(w.writes, string(p))
	return len(p), nil
}
