package club_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goclub/scoreboard/club"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/internal/promtest"
)

func freeAddr(t *testing.T) string {
	return "127.0.0.1:" + strconv.Itoa(proctest.FreePort(t))
}

// status GETs url: its status, or 0 when nothing answers.
func status(t *testing.T, url string) int {
	t.Helper()
	c := &http.Client{Timeout: 20 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// pageSettings is a daemon on the bus at url with no port, its page on page and
// its metrics as metrics says.
func pageSettings(url, page, metrics string) string {
	return fmt.Sprintf("[nats]\nurl = %q\n[history]\nenabled = false\n[http]\nlisten = %q\nmetrics = %q\n", url, page, metrics)
}

// TestMetricsListener: a club daemon (the type run is) with http.metrics on a
// listener of its own serves /metrics there, promtool takes it, and the page's
// listener answers 404 on /metrics; with the page off it is still served; with
// "off", no /metrics anywhere; beside the page, as before. A taken address fails
// the start, naming the setting.
func TestMetricsListener(t *testing.T) {
	url := natsServer(t)
	page, own := freeAddr(t), freeAddr(t)

	d := start(t, pageSettings(url, page, own), nil)
	proctest.WaitTCP(t, page, 30*time.Second)
	fams, body := promtest.Scrape(t, "http://"+own+"/metrics")
	if fams["scoreboard_nats_connected"] == nil {
		t.Errorf("/metrics on %s lacks scoreboard_nats_connected:\n%s", own, body)
	}
	promtest.Promtool(t, body, "check", "metrics")
	bustest.Wait(t, "the page", func() (bool, string) {
		n := status(t, "http://"+page+"/")
		return n == http.StatusOK, fmt.Sprintf("GET / on the page: %d", n)
	})
	if n := status(t, "http://"+page+"/metrics"); n != http.StatusNotFound {
		t.Errorf("GET /metrics on the page's listener, with the metrics on their own: %d, want 404", n)
	}
	if n := status(t, "http://"+own+"/"); n != http.StatusNotFound {
		t.Errorf("GET / on the metrics' listener: %d, want 404 (the page is not there)", n)
	}
	stop(t, d.d)

	// The page off, the metrics on their own: served.
	d = start(t, pageSettings(url, "off", own), nil)
	if _, body := promtest.Scrape(t, "http://"+own+"/metrics"); !strings.Contains(string(body), "scoreboard_nats_connected") {
		t.Errorf("/metrics with the page off lacks scoreboard_nats_connected")
	}
	stop(t, d.d)

	// Off: the page serves no /metrics, and nothing else listens.
	d = start(t, pageSettings(url, page, "off"), nil)
	bustest.Wait(t, "the page", func() (bool, string) {
		n := status(t, "http://"+page+"/")
		return n == http.StatusOK, fmt.Sprintf("GET / on the page: %d", n)
	})
	if n := status(t, "http://"+page+"/metrics"); n != http.StatusNotFound {
		t.Errorf("GET /metrics with http.metrics off: %d, want 404", n)
	}
	if n := status(t, "http://"+own+"/metrics"); n != 0 {
		t.Errorf("GET /metrics on %s with http.metrics off: %d, want nothing listening", own, n)
	}
	stop(t, d.d)

	// Beside the page, the default.
	d = start(t, pageSettings(url, page, "page"), nil)
	bustest.Wait(t, "/metrics beside the page", func() (bool, string) {
		n := status(t, "http://"+page+"/metrics")
		return n == http.StatusOK, fmt.Sprintf("GET /metrics on the page: %d", n)
	})
	stop(t, d.d)

	// A taken address: the start fails, naming the setting and what to do.
	taken, err := net.Listen("tcp", own)
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	c := settings(t, pageSettings(url, "off", own))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if d, err := club.Start(ctx, club.Config{Settings: c, Ports: c.DaemonConfig(), Log: bustest.Logger(t)}); err == nil {
		_ = d.Shutdown(ctx)
		t.Fatal("the daemon started with its metrics' address taken")
	} else if msg := err.Error(); !strings.Contains(msg, "http.metrics: the metrics' address "+own+" is taken") ||
		!strings.Contains(msg, `"off"`) {
		t.Errorf("the start's error %q: want it to name http.metrics, the address, and the choices", msg)
	}
}

func stop(t *testing.T, d *club.Daemon) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := d.Shutdown(ctx); err != nil {
		t.Errorf("shutdown: %v", err)
	}
}
