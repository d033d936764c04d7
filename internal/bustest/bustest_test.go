package bustest

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// The clients have their roles: a tool's result never reaches the daemon, a
// worker's does. The state directory is the test's, and a restart keeps the port.
func TestRolesStateDirRestart(t *testing.T) {
	b := Start(t, Options{Workers: true, JetStream: true})
	if b.StateDir == "" {
		t.Fatal("JetStream without a state directory")
	}
	if _, err := os.Stat(b.StateDir); err != nil {
		t.Fatalf("state directory: %v", err)
	}
	daemon, worker, tool := b.Daemon(), b.Worker(), b.Tool()
	sub, err := daemon.SubscribeSync(b.Subjects().AllResults())
	if err != nil {
		t.Fatal(err)
	}
	if err := daemon.Flush(); err != nil {
		t.Fatal(err)
	}
	subject := b.Subjects().Result("goscore", "hall")
	// Each publish is flushed before the next: the server has handled the tool's
	// before it sees the worker's, so a tool's result let through would come first.
	for _, c := range []struct {
		nc   *nats.Conn
		data string
	}{{tool, "from the tool"}, {worker, "from the worker"}} {
		if err := c.nc.Publish(subject, []byte(c.data)); err != nil {
			t.Fatal(err)
		}
		_ = c.nc.Flush()
	}
	m, err := sub.NextMsg(Long)
	if err != nil || string(m.Data) != "from the worker" {
		t.Fatalf("first result %v, %v; want the worker's, the tool's refused", m, err)
	}

	url := b.URL()
	b.Restart()
	if b.URL() != url {
		t.Errorf("restarted on %s, want %s", b.URL(), url)
	}
	Wait(t, "the tool reconnected", func() (bool, string) {
		return tool.IsConnected(), "status " + tool.Status().String()
	})
}

// fatalRecorder keeps what Fatalf says and ends the goroutine, as testing does.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (f *fatalRecorder) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// Wait says what it waited for and the counts its condition gave last.
func TestWaitSaysItsCounts(t *testing.T) {
	r := &fatalRecorder{TB: t}
	done := make(chan struct{})
	tries := 0
	go func() {
		defer close(done)
		WaitWithin(r, 50*time.Millisecond, "five answers", func() (bool, string) {
			tries++
			return false, fmt.Sprintf("%d of 5 answers", 2)
		})
	}()
	<-done
	if !strings.Contains(r.msg, "five answers") || !strings.Contains(r.msg, "2 of 5 answers") || tries < 2 {
		t.Errorf("Wait failed with %q after %d tries; want what and the counts, after more than one try", r.msg, tries)
	}
}
