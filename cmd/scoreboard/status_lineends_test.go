package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/proctest"
)

// A device that sends bytes but never a line end (a wrong line-end or baud
// setting) is named in the page's /api/status of a real daemon on a real
// pseudo-terminal, and no longer once a line end comes.
func TestStatusNamesPortWithoutLineEnds(t *testing.T) {
	bin := proctest.Scoreboard(t)
	pt := runPTY(t)
	addr := "127.0.0.1:" + strconv.Itoa(proctest.FreePort(t))
	p := proctest.Start(t, bin, "run", "--nats-listen", "off", "--http-listen", addr, "--history-enabled=false",
		"--port-device", pt.Path, "--port-problem", "goscore", "--port-name", "hall")
	runWaitOpened(t, pt, p)
	status := func() (none []string, raw string) {
		resp, err := http.Get("http://" + addr + "/api/status")
		if err != nil {
			return nil, err.Error()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		var s struct {
			NoLineEnds []string `json:"no_line_ends"`
		}
		if err := json.Unmarshal(body, &s); err != nil {
			return nil, fmt.Sprintf("%d %q: %v", resp.StatusCode, body, err)
		}
		return s.NoLineEnds, string(body)
	}
	// 400 bytes: more than goscore's longest line, said at once.
	if _, err := pt.Master.Write([]byte(strings.Repeat("+ ", 200))); err != nil {
		t.Fatal(err)
	}
	bustest.Wait(t, "/api/status naming hall", func() (bool, string) {
		none, raw := status()
		return slices.Equal(none, []string{"hall"}), raw + "; output:\n" + p.Output()
	})
	if _, err := pt.Master.Write([]byte("\n")); err != nil {
		t.Fatal(err)
	}
	bustest.Wait(t, "/api/status naming no port", func() (bool, string) {
		none, raw := status()
		return len(none) == 0 && strings.Contains(raw, "history_ok"), raw
	})
}
