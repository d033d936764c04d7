package club_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/internal/samples"
	"github.com/goclub/scoreboard/web"
)

// historyItems loads a board's earlier units as its page does.
func historyItems(url string) (int, []web.HistoryItem, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	var items []web.HistoryItem
	if resp.StatusCode == http.StatusOK {
		err = json.NewDecoder(resp.Body).Decode(&items)
	}
	return resp.StatusCode, items, err
}

// inOrder says whether items are a port's units in the order it numbered them,
// each once.
func inOrder(items []web.HistoryItem) bool {
	for i := 1; i < len(items); i++ {
		if items[i].Seq <= items[i-1].Seq {
			return false
		}
	}
	return true
}

// A hundred viewers open a board's page at once (each loads its earlier units,
// /api/history?port=hall) while the port sends units: the port answers every unit,
// in order, none twice (its output is the sample's answers once a repetition of the
// sample it was sent); every viewer gets its units, in order; and no more of the
// page's history reads ran at once than its bound (web.HistoryReads: without the
// bound, most of the hundred run at once and the most seen is far above it).
func TestPageHistoryCrowdLeavesThePortAlone(t *testing.T) {
	in, want := samples.Pair(t, samples.Case{Problem: "goscore", File: "goscore"})
	addr := "127.0.0.1:" + strconv.Itoa(proctest.FreePort(t))
	portIn, feed := io.Pipe()
	p := start(t, fmt.Sprintf(`
[nats]
listen = "off"
[daemon]
state_dir = %q
[http]
listen = %q
[[port]]
name = "hall"
device = "-"
problem = "goscore"
`, t.TempDir(), addr), portIn)
	proctest.WaitTCP(t, addr, bustest.Long)
	url := "http://" + addr + "/api/history?port=hall"

	// The port sends the sample once, then again as the crowd comes and once more
	// each time a viewer has its units (a few times at least, so that the reads
	// meet units coming): the units keep coming while the crowd reads.
	const minReps, viewers = 3, 100
	go_, finished, viewed := make(chan struct{}), make(chan struct{}, viewers), make(chan struct{})
	reps := 0
	var writer sync.WaitGroup
	writer.Go(func() {
		for {
			if _, err := feed.Write(in); err != nil {
				t.Errorf("the port's input: %v", err)
				return
			}
			if reps++; reps == 1 {
				<-go_
				continue
			}
			select {
			case <-finished:
			case <-viewed:
				if reps >= minReps {
					return
				}
			}
		}
	})
	// A unit or two kept before the crowd comes: each read has a tail to read.
	bustest.Wait(t, "the first units in the history", func() (bool, string) {
		code, items, err := historyItems(url)
		return err == nil && code == http.StatusOK && len(items) >= 2, fmt.Sprintf("status %d, %d items, %v", code, len(items), err)
	})

	var crowd sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	var problems []string
	for i := range viewers {
		crowd.Go(func() {
			<-go_
			code, items, err := historyItems(url)
			finished <- struct{}{}
			mu.Lock()
			defer mu.Unlock()
			codes[code]++
			switch {
			case err != nil:
				problems = append(problems, fmt.Sprintf("viewer %d: %v", i, err))
			case code == http.StatusOK && (len(items) == 0 || len(items) > 50 || !inOrder(items)):
				problems = append(problems, fmt.Sprintf("viewer %d: %d items, in order %v", i, len(items), inOrder(items)))
			}
		})
	}
	began := time.Now()
	close(go_)
	crowd.Wait()
	took := time.Since(began)
	close(viewed)
	writer.Wait()
	if codes[http.StatusOK] != viewers || len(problems) > 0 {
		t.Errorf("of %d viewers, by status: %v; %d problems: %s", viewers, codes, len(problems), strings.Join(problems, "; "))
	}
	// (A read may still be leaving: its answer is sent before its handler ends.)
	now, most, bound := web.HistoryReads()
	if most > bound || most < 1 {
		t.Errorf("history reads at once: at most %d seen, bound %d (%d running as the crowd left)", most, bound, now)
	}

	// Every unit sent is answered, in order, once, and kept once.
	sent := 2 * reps // the sample's two units a repetition
	bustest.Wait(t, "every unit in the history", func() (bool, string) {
		code, items, err := historyItems(url + "&limit=1000")
		return err == nil && code == http.StatusOK && len(items) == sent && inOrder(items),
			fmt.Sprintf("status %d, %d items of %d sent, in order %v, %v", code, len(items), sent, inOrder(items), err)
	})
	feed.Close()
	select {
	case <-p.d.Done():
	case <-time.After(2 * time.Minute):
		t.Fatalf("the daemon did not end at the end of its input; it answered %d bytes", len(p.out.String()))
	}
	if got, want := p.out.String(), strings.Repeat(string(want), reps); got != want {
		t.Errorf("the port answered %d lines, want %d (%d units sent):\n%q", strings.Count(got, "\n"), strings.Count(want, "\n"), sent, got)
	}
	t.Logf("%d units sent and answered while %d viewers loaded the history in %s; at most %d reads at once (bound %d)", sent, viewers, took, most, bound)
}
