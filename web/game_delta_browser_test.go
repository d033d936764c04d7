package web_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/internal/browsertest"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/samples"
	"github.com/goclub/scoreboard/pairing"
	"github.com/goclub/scoreboard/web"
)

// tileJS reads what a view shows of port: its board's unit number and the players
// on it ("Black - White", "" for none); the page's and the board's page's tile, or
// the embedded board.
const tileJS = `((port) => {
	const root = document.querySelector('.tile[data-port="' + port + '"]') || document.getElementById("board");
	if (!root) return "";
	const g = root.querySelector(".game:not([hidden])");
	return (root.dataset.seq || "0") + " " + (g ? [...g.querySelectorAll(".name")].map(e => e.textContent).join(" - ") : "");
})`

// TestTileKeepsPlayersAcrossResults: an event says a port's game only when it
// changed, so each view keeps its tile's players across the results of a round and
// changes them at the next: the page on a TV, a board's page on a phone, the
// embedded board on a tablet, and a delayed page (1 s) on a phone, each its own
// port. A round loaded shows its players before the next result, a port left
// without a game shows none, and the results after each keep what it shows.
func TestTileKeepsPlayersAcrossResults(t *testing.T) {
	b := browsertest.New(t)
	ns := bustest.Start(t, bustest.Options{JetStream: true})
	ctx, cancel := context.WithTimeout(context.Background(), bustest.Long)
	defer cancel()
	js, _ := jetstream.New(ns.Daemon())
	boards, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: bus.Subjects{Prefix: bus.DefaultPrefix}.Boards()})
	if err != nil {
		t.Fatal(err)
	}
	games, err := pairing.Setup(ctx, js, bus.DefaultPrefix, 1)
	if err != nil {
		t.Fatal(err)
	}
	live, _ := serveTestPage(t, ns.Tool(), pageOpts{pairings: true})
	delayed, _ := serveTestPage(t, ns.Tool(), pageOpts{pairings: true, delays: web.NewDelays(time.Second, nil)})
	units := samples.Units(t, "goscore", "goscore.in")

	views := []struct {
		name, base, path, port string
		width, height          int
		phone                  bool
	}{
		{"the page on a TV", live, "/", "tv", 1920, 1080, false},
		{"a board's page on a phone", live, "/boards/phone", "phone", 390, 844, true},
		{"the embedded board on a tablet", live, "/embed/tablet", "tablet", 768, 1024, false},
		{"the delayed page on a phone", delayed, "/", "late", 390, 844, true},
	}
	for _, v := range views {
		seq := uint64(0)
		result := func(n int) {
			for range n {
				seq++
				if _, err := boards.Put(ctx, v.port, boardValue(t, "goscore", v.port, seq, units[int(seq)%len(units)], time.Now())); err != nil {
					t.Fatal(err)
				}
			}
		}
		// round loads round r as the daemon's load does: a game at table 1, the
		// view's port, or (no black) at table 2 alone, another port, and none at
		// the view's.
		round := func(r int, black, white string) {
			rd := pairing.Round{Info: pairing.Info{Tournament: "Test Open", Round: r}}
			table := 1
			if black == "" {
				table, black, white = 2, "Spare One", "Spare Two"
			}
			rd.Games = []pairing.Game{{Table: table, Black: pairing.Player{Name: black}, White: pairing.Player{Name: white}}}
			if _, err := pairing.Apply(ctx, games, rd, map[int]string{1: v.port, 2: "spare"}, []string{v.port}, time.Now()); err != nil {
				t.Fatal(err)
			}
		}
		shows := func(step, want string) {
			t.Helper()
			bustest.Wait(t, fmt.Sprintf("%s, %s: %q", v.name, step, want), func() (bool, string) {
				got := browsertest.Eval[string](t, b, fmt.Sprintf("%s(%q)", tileJS, v.port))
				return got == want, fmt.Sprintf("it shows %q", got)
			})
		}
		b.Viewport(t, v.width, v.height, v.phone)
		round(1, "Lee Sedol", "张伟")
		result(1)
		b.Do(t, 30*time.Second, chromedp.Navigate(v.base+v.path))
		shows("round 1's first result", "1 Lee Sedol - 张伟")
		result(3)
		shows("round 1's next three results", "4 Lee Sedol - 张伟")
		round(2, "Chō Chikun", "محمد عبد الرحمن")
		shows("round 2 loaded", "4 Chō Chikun - محمد عبد الرحمن")
		result(2)
		shows("round 2's results", "6 Chō Chikun - محمد عبد الرحمن")
		round(3, "", "")
		shows("round 3, no game at the table", "6 ")
		result(2)
		shows("round 3's results", "8 ")
		round(4, "Ana Smith", "Zoë Ångström")
		result(1)
		shows("round 4 and its result", "9 Ana Smith - Zoë Ångström")
		if got := browsertest.Eval[string](t, b, fmt.Sprintf("%s(%q)", tileJS, v.port)); !strings.HasSuffix(got, "Ana Smith - Zoë Ångström") {
			t.Errorf("%s: at the end %q", v.name, got)
		}
	}
}
