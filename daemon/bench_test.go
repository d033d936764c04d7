package daemon_test

import (
	"io"
	"slices"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/daemon"
	"github.com/goclub/scoreboard/serialio"
)

// BenchmarkPTYLatency measures the latency the daemon adds on a real
// pseudo-terminal: from the moment a board's last byte is written on the
// scoreboard's side to the moment the first byte of its answer can be read there.
// One board at a time, as a scoreboard sends them; the embedded NATS server and the
// workers run in this process, as with `scoreboard run`.
func BenchmarkPTYLatency(b *testing.B) {
	_, nc := startBus(b, true)
	pt := newPTY(b)
	d := startDaemonLogging(b, nc, daemon.Config{Ports: []daemon.PortConfig{{Device: pt.Path, Problem: "goscore", Line: serialio.LineSettings{Baud: 115200}}}}, zerolog.InfoLevel)
	waitOpened(b, pt)
	unit := []byte(board(7))
	want := goscoreAnswer(b, string(unit))
	buf := make([]byte, len(want))
	var lat []time.Duration
	for b.Loop() {
		if _, err := pt.Master.Write(unit); err != nil {
			b.Fatal(err)
		}
		sent := time.Now()
		if _, err := pt.Master.Read(buf[:1]); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(sent))
		if _, err := io.ReadFull(pt.Master, buf[1:]); err != nil {
			b.Fatal(err)
		}
		if string(buf) != want {
			b.Fatalf("answer %q, want %q", buf, want)
		}
	}
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) }
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
	b.ReportMetric(pct(1), "max-µs")
	d.stop(b)
}
