package web_test

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/samples"
	"github.com/goclub/scoreboard/result"
	"github.com/goclub/scoreboard/web"
)

func get(t *testing.T, url string) (int, string, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(body)
}

// waitGet polls url until it answers 200.
func waitGet(t *testing.T, url string) string {
	t.Helper()
	var body string
	bustest.Wait(t, "GET "+url, func() (bool, string) {
		var code int
		code, _, body = get(t, url)
		return code == http.StatusOK, fmt.Sprintf("%d %s", code, body)
	})
	return body
}

// TestEndpoints: the pictures, the game records, the JSON API and the history, from a
// board bucket and a history stream written as the history keeps them.
func TestEndpoints(t *testing.T) {
	// The page reads as a tool ('scoreboard web'); the daemon's history writes.
	ns := bustest.Start(t, bustest.Options{JetStream: true})
	nc := ns.Daemon()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	js, _ := jetstream.New(nc)
	subj := bus.Subjects{Prefix: bus.DefaultPrefix}
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: subj.Boards()})
	if err != nil {
		t.Fatal(err)
	}
	stream, err := js.CreateStream(ctx, jetstream.StreamConfig{
		Name: subj.Stream(), Subjects: []string{"scoreboard.dump.>", "scoreboard.result.>"}, AllowDirect: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	base, _ := serveTestPage(t, ns.Tool(), pageOpts{})

	replay := samples.Units(t, "replay", "replay.in")[0]
	othello := samples.Units(t, "othello", "othello.in")[1]
	now := time.Now()
	if _, err := kv.Put(ctx, "hall", boardValue(t, "replay", "hall", 3, replay, now)); err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "lobby", boardValue(t, "othello", "lobby", 2, othello, now)); err != nil {
		t.Fatal(err)
	}
	// The history as the daemon keeps it: each unit's dump (with its headers), then
	// its result; units 1 and 3 of hall, unit 2 of lobby.
	for i, port := range []string{"hall", "lobby", "hall"} {
		seq := uint64(i + 1)
		d := nats.NewMsg("scoreboard.dump.replay." + port)
		d.Header.Set(bus.HeaderPort, port)
		d.Header.Set(bus.HeaderSeq, strconv.FormatUint(seq, 10))
		d.Header.Set(bus.HeaderOrigin, "o1")
		d.Data = replay
		if _, err := js.PublishMsg(ctx, d); err != nil {
			t.Fatal(err)
		}
		res, err := json.Marshal(result.Record{Problem: "replay", Port: port, Seq: seq, Answer: "5 3\n", Origin: "o1", Worker: "test"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := js.Publish(ctx, "scoreboard.result.replay."+port, res); err != nil {
			t.Fatal(err)
		}
	}

	// The page follows the bucket: it has both ports once both pictures are served
	// (reading lobby after waiting only for hall failed 1 run in 8).
	waitGet(t, base+"/boards/lobby.svg")
	svg := waitGet(t, base+"/boards/hall.svg")
	if err := xml.Unmarshal([]byte(svg), new(struct{})); err != nil || !strings.Contains(svg, `class="stone`) {
		t.Errorf("/boards/hall.svg: %v\n%s", err, svg)
	}
	code, ctype, sgf := get(t, base+"/boards/hall.sgf")
	if code != 200 || !strings.HasPrefix(sgf, "(;FF[4]GM[1]") || !strings.Contains(ctype, "sgf") {
		t.Errorf("/boards/hall.sgf: %d %s %q", code, ctype, sgf)
	}
	if code, _, body := get(t, base+"/boards/lobby.sgf"); code != 404 || !strings.Contains(body, "no game record") {
		t.Errorf("othello SGF: %d %q", code, body)
	}
	if code, _, _ := get(t, base+"/boards/nobody.svg"); code != 404 {
		t.Errorf("an unknown port's picture: %d", code)
	}
	if code, ctype, body := get(t, base+"/boards/hall"); code != 200 || !strings.Contains(ctype, "html") || !strings.Contains(body, "app.js") {
		t.Errorf("/boards/hall: %d %s", code, ctype)
	}

	var boards []web.Board
	_, _, body := get(t, base+"/api/boards")
	if err := json.Unmarshal([]byte(body), &boards); err != nil || len(boards) != 2 {
		t.Fatalf("/api/boards: %v %s", err, body)
	}
	if b := boards[1]; b.Port != "lobby" || b.Problem != "othello" || len(b.Board) != 8 || b.Revision == 0 ||
		!strings.HasPrefix(b.Picture, fmt.Sprintf("/pictures/lobby/%d-", b.Revision)) || b.SGF != "" {
		t.Errorf("/api/boards lobby: %+v", b)
	}
	// The board carries what changed and its picture's address, not the picture.
	if strings.Contains(body, "<svg") || strings.Contains(body, `"unit"`) || strings.Contains(body, `"result"`) {
		t.Errorf("/api/boards carries the picture or the unit: %.300s", body)
	}
	checkPictures(t, base, boards[0])

	checkHistory(t, base, stream)
	// Every asset the page loads is embedded.
	for _, p := range []string{"/", "/static/app.js", "/static/style.css"} {
		if code, _, _ := get(t, base+p); code != 200 {
			t.Errorf("GET %s: %d", p, code)
		}
	}
}

// checkHistory: /api/history lists hall's units 1 and 3 of the stream, each with a
// picture's address in the stream's life, kept for good; its bad queries are 400s;
// a number that is no unit is a 404 that says where the units' numbers are.
func checkHistory(t *testing.T, base string, stream jetstream.Stream) {
	t.Helper()
	var items []web.HistoryItem
	_, _, body := get(t, base+"/api/history?port=hall")
	if err := json.Unmarshal([]byte(body), &items); err != nil || len(items) != 2 || items[0].Seq != 1 || items[1].Seq != 3 ||
		items[0].Answer != "5 3\n" || items[0].SVG == "" {
		t.Fatalf("/api/history?port=hall: %v %s", err, body)
	}
	// Each unit's picture is its dump, drawn again from the stream; its number in
	// the stream's life never names another, so it is cacheable for good.
	for _, it := range items {
		resp, body := do(t, "GET", base+it.SVG, nil)
		etag := `W/"` + strings.TrimSuffix(strings.TrimPrefix(it.SVG, "/history/"), ".svg") + `"`
		if !strings.HasPrefix(etag, fmt.Sprintf(`W/"%d-`, it.StreamSeq)) {
			t.Errorf("%s: want /history/%d-<stream>.svg", it.SVG, it.StreamSeq)
		}
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/svg+xml" || !strings.Contains(body, "<svg") ||
			resp.Header.Get("ETag") != etag || resp.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" {
			t.Errorf("%s: %d %v %.80s", it.SVG, resp.StatusCode, resp.Header, body)
		}
		if resp, _ := do(t, "GET", base+it.SVG, map[string]string{"If-None-Match": etag}); resp.StatusCode != http.StatusNotModified {
			t.Errorf("%s If-None-Match %s: %d, want 304", it.SVG, etag, resp.StatusCode)
		}
	}
	_, _, body = get(t, base+"/api/history?port=hall&limit=1")
	if err := json.Unmarshal([]byte(body), &items); err != nil || len(items) != 1 || items[0].Seq != 3 {
		t.Errorf("limit=1: %v %s", err, body)
	}
	for _, q := range []string{"port=Hall", "port=hall&limit=0", "port=hall&since=yesterday", "port=hall&since=169h"} {
		if code, _, body := get(t, base+"/api/history?"+q); code != 400 {
			t.Errorf("/api/history?%s: %d %s", q, code, body)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	info, err := stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// A result is no unit: the address says which numbers are.
	if code, _, body := get(t, fmt.Sprintf("%s/history/%d.svg", base, info.State.LastSeq)); code != 404 || !strings.Contains(body, "/api/history") {
		t.Errorf("a result's number: %d %s", code, body)
	}
	if code, _, _ := get(t, fmt.Sprintf("%s/history/%d.svg", base, info.State.LastSeq+1)); code != 404 {
		t.Errorf("a message not kept: %d", code)
	}
	if code, _, _ := get(t, base+"/history/x.svg"); code != 404 {
		t.Errorf("/history/x.svg: %d", code)
	}
}

// checkPictures: a board's picture and game record by revision are immutable, with
// an ETag that answers 304; the port's latest (/boards/<port>.svg) is revalidated;
// a revision the page does not hold is a 404 nobody keeps; text is gzipped for a
// client that asks.
func checkPictures(t *testing.T, base string, b web.Board) {
	t.Helper()
	name := strings.TrimSuffix(strings.TrimPrefix(b.Picture, "/pictures/"+b.Port+"/"), ".svg")
	if rev, _, _ := strings.Cut(name, "-"); rev != fmt.Sprint(b.Revision) || b.SGF != "/pictures/"+b.Port+"/"+name+".sgf" {
		t.Fatalf("%s's addresses: picture %q sgf %q", b.Port, b.Picture, b.SGF)
	}
	for _, c := range []struct{ path, ctype, prefix, cache string }{
		{b.Picture, "image/svg+xml", "<svg", "public, max-age=31536000, immutable"},
		{b.SGF, "application/x-go-sgf; charset=utf-8", "(;FF[4]", "public, max-age=31536000, immutable"},
		{"/boards/" + b.Port + ".svg", "image/svg+xml", "<svg", "no-cache"},
		{"/boards/" + b.Port + ".sgf", "application/x-go-sgf; charset=utf-8", "(;FF[4]", "no-cache"},
	} {
		resp, body := do(t, "GET", base+c.path, nil)
		etag := resp.Header.Get("ETag")
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != c.ctype || !strings.HasPrefix(body, c.prefix) ||
			resp.Header.Get("Cache-Control") != c.cache || etag != `W/"`+name+`"` {
			t.Errorf("GET %s: %d %q cache %q etag %q %.40q", c.path, resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Cache-Control"), etag, body)
			continue
		}
		resp, body = do(t, "GET", base+c.path, map[string]string{"If-None-Match": etag})
		if resp.StatusCode != http.StatusNotModified || body != "" || resp.Header.Get("Cache-Control") != c.cache {
			t.Errorf("GET %s If-None-Match %s: %d cache %q, %d bytes; want 304", c.path, etag, resp.StatusCode, resp.Header.Get("Cache-Control"), len(body))
		}
	}
	for _, path := range []string{
		fmt.Sprintf("/pictures/%s/%d.svg", b.Port, b.Revision), // the revision without its hash
		fmt.Sprintf("/pictures/%s/%d-0.svg", b.Port, b.Revision), "/pictures/nobody/" + name + ".svg",
		"/pictures/" + b.Port + "/" + name + ".png", "/pictures/Hall/" + name + ".svg",
	} {
		if resp, body := do(t, "GET", base+path, nil); resp.StatusCode != 404 || resp.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("GET %s: %d cache %q %q; want 404, no-store", path, resp.StatusCode, resp.Header.Get("Cache-Control"), body)
		}
	}
	// gzip for the text (over 1 KB: smaller answers go as they are), not for the
	// event stream.
	for _, c := range []struct {
		path string
		gz   bool
	}{{b.Picture, true}, {"/static/app.js", true}, {"/static/style.css", true}, {"/api/events", false}} {
		req, _ := http.NewRequest("GET", base+c.path, nil)
		req.Header.Set("Accept-Encoding", "gzip")
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("Content-Encoding") == "gzip"; got != c.gz {
			t.Errorf("GET %s with Accept-Encoding gzip: Content-Encoding %q, want gzip %v", c.path, resp.Header.Get("Content-Encoding"), c.gz)
		}
	}
}

// do sends a request with headers and reads the answer.
func do(t *testing.T, method, url string, headers map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}
