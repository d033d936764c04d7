package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/proctest"
)

// TestWebCommand: 'scoreboard web' joins a NATS server with JetStream, serves the page
// and the boards of the bucket it finds there, and logs the address to open; it
// refuses --http off, which would serve nothing.
func TestWebCommand(t *testing.T) {
	// The daemon's history writes the bucket; 'scoreboard web' reads it as a tool.
	ns := bustest.Start(t, bustest.Options{JetStream: true})
	js, _ := jetstream.New(ns.Daemon())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "SCOREBOARD_BOARDS"})
	if err != nil {
		t.Fatal(err)
	}
	value := `{"problem":"replay","port":"hall","seq":4,"answer":"1 0\n","unit":"3 1\nB(0,0)\n","time":"2026-11-23T19:00:00Z"}`
	if _, err := kv.Put(ctx, "hall", []byte(value)); err != nil {
		t.Fatal(err)
	}

	addr := "127.0.0.1:" + strconv.Itoa(proctest.FreePort(t))
	var stderr proctest.Buffer
	done := make(chan int, 1)
	go func() {
		done <- runMain(ctx, []string{"web", "--nats-url", ns.URL(), "--http", addr, "--log-format", "json"},
			stdio{strings.NewReader(""), io.Discard, &stderr})
	}()
	var boards []struct {
		Port string `json:"port"`
		Seq  int    `json:"seq"`
		// Picture is the address of its picture, drawn when asked for.
		Picture string `json:"picture"`
	}
	bustest.Wait(t, "a board served by web", func() (bool, string) {
		resp, err := http.Get("http://" + addr + "/api/boards")
		if err != nil {
			return false, fmt.Sprintf("GET /api/boards: %v; stderr:\n%s", err, stderr.String())
		}
		_ = json.NewDecoder(resp.Body).Decode(&boards)
		resp.Body.Close()
		return len(boards) > 0, fmt.Sprintf("%d boards; stderr:\n%s", len(boards), stderr.String())
	})
	if boards[0].Port != "hall" || boards[0].Seq != 4 || boards[0].Picture == "" {
		t.Fatalf("/api/boards: %+v", boards)
	}
	if resp, err := http.Get("http://" + addr + boards[0].Picture); err != nil {
		t.Error(err)
	} else {
		svg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(svg), "<svg") {
			t.Errorf("GET %s: %s %.100q", boards[0].Picture, resp.Status, svg)
		}
	}
	// web serves no /metrics (it counts nothing a club's Prometheus needs); its help
	// says so (TestWebHelpSaysNoMetrics).
	if resp, err := http.Get("http://" + addr + "/metrics"); err != nil {
		t.Error(err)
	} else {
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET /metrics on web's listener: %s, want 404 Not Found", resp.Status)
		}
	}
	if want := fmt.Sprintf(`"url":"http://%s/"`, addr); !strings.Contains(stderr.String(), want) {
		t.Errorf("the log does not give the URL %s:\n%s", want, stderr.String())
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("web exited %d after its context ended; stderr:\n%s", code, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("web did not stop")
	}

	if code, _, errs := runCmd(t, "", "web", "--http", "off"); code != 2 || !strings.Contains(errs, "usage") {
		t.Errorf("web --http off: exit %d, %q", code, errs)
	}
}

// TestRunServesPage: 'scoreboard run --http' serves the page beside the daemon, and
// stops it with the daemon.
func TestRunServesPage(t *testing.T) {
	addr := "127.0.0.1:" + strconv.Itoa(proctest.FreePort(t))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr proctest.Buffer
	done := make(chan int, 1)
	go func() {
		done <- runMain(ctx, []string{"run", "--nats-listen", "off", "--http", addr, "--log-format", "json"},
			stdio{strings.NewReader(""), io.Discard, &stderr})
	}()
	bustest.Wait(t, "run --http "+addr+" serving", func() (bool, string) {
		resp, err := http.Get("http://" + addr + "/")
		if err != nil {
			return false, fmt.Sprintf("GET /: %v; stderr:\n%s", err, stderr.String())
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), "/static/app.js") {
			t.Fatalf("GET /: %d %.100s", resp.StatusCode, body)
		}
		return true, ""
	})
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("run exited %d; stderr:\n%s", code, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("run did not stop")
	}
	if _, err := http.Get("http://" + addr + "/"); err == nil {
		t.Errorf("the page is still served after run stopped")
	}
}

// TestWebHelpSaysNoMetrics: web's help does not promise a /metrics it does not
// serve (TestWebCommand gets 404 there), nor "off", which web refuses.
func TestWebHelpSaysNoMetrics(t *testing.T) {
	code, out, errs := runCmd(t, "", "web", "--help")
	if code != 0 {
		t.Fatalf("web --help: exit %d, stderr %q", code, errs)
	}
	if strings.Contains(strings.ReplaceAll(out, "no /metrics here", ""), "metrics") {
		t.Errorf("web --help mentions metrics, which web does not serve:\n%s", out)
	}
	i := strings.Index(out, "--http-listen")
	if i < 0 {
		t.Fatalf("web --help has no --http-listen:\n%s", out)
	}
	flag := out[i : i+strings.Index(out[i:], "[$SCOREBOARD_HTTP_LISTEN]")]
	if strings.Contains(flag, `"off"`) {
		t.Errorf("web --help offers --http-listen off, which web refuses:\n%s", flag)
	}
}
