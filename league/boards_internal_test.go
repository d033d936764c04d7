package league

import (
	"strings"
	"testing"
)

// TestCheckResult: what the boards keeper shows of a club's stream is a valid
// result of a known problem, and every kind of junk has its reason.
func TestCheckResult(t *testing.T) {
	for _, c := range []struct {
		rest, data, want string
	}{
		{"result.goscore.t1", `{"problem":"goscore","port":"t1","seq":1,"answer":"180 181\n","solve_us":1}`, ""},
		{"result.goscore.t1", `{"problem":"goscore","port":"t1","seq":1,"answer":"","error":"bad unit","solve_us":1}`, ""},
		{"result.goscore.t1", `{"problem":"goscore",`, "malformed"},
		{"result.goscore.t1", "{\"problem\":\"goscore\",\"port\":\"t1\",\"answer\":\"\xff\xfe\"}", "invalid_utf8"},
		{"result.chess.t1", `{"problem":"chess","port":"t1","seq":1,"answer":"e4\n"}`, "unknown_problem"},
		{"result.goscore.T1", `{"problem":"goscore","port":"T1","seq":1,"answer":"1 1\n"}`, "bad_port"},
		{"result.goscore.t2", `{"problem":"goscore","port":"t1","seq":1,"answer":"1 1\n"}`, "bad_subject"},
		{"result.goscore", `{"problem":"goscore","port":"t1","seq":1,"answer":"1 1\n"}`, "bad_subject"},
		{"result.goscore.t1", `{"problem":"goscore","port":"t1","seq":1,"answer":"` + strings.Repeat("9", 100) + `"}`, "too_large"},
		{"result.goscore.t1", `{"problem":"goscore","port":"t1","seq":1,"error":"` + strings.Repeat("e", maxErrorBytes+1) + `"}`, "too_large"},
		{"result.goscore.t1", `{"problem":"goscore","port":"t1","pad":"` + strings.Repeat("p", maxResultBytes) + `"}`, "too_large"},
		{"result.goscore.t1", `{"problem":"goscore","port":"t1","seq":1,"answer":"1 1\n","players":{"round":2,"black":"Zoé","white":"王"}}`, ""},
		{"result.goscore.t1", `{"problem":"goscore","port":"t1","seq":1,"answer":"1 1\n","players":{"black":"` + strings.Repeat("x", 3000) + `"}}`, "too_large"},
	} {
		if _, got := checkResult(c.rest, []byte(c.data)); got != c.want {
			t.Errorf("%s %.80q: %q, want %q", c.rest, c.data, got, c.want)
		}
	}
	for _, c := range []struct {
		rest, unit, want string
	}{
		{"dump.goscore.t1", "19\n", ""},
		{"dump.chess.t1", "e4", "unknown_problem"},
		{"dump.goscore.T1", "19\n", "bad_port"},
		{"dump.othello.t1", strings.Repeat("x", 201), "too_large"},
		{"dump.goscore.t1", "\xff", "invalid_utf8"},
		{"dump.goscore", "19\n", "bad_subject"},
	} {
		if got := checkDump(c.rest, []byte(c.unit)); got != c.want {
			t.Errorf("%s %.40q: %q, want %q", c.rest, c.unit, got, c.want)
		}
	}
}

// TestBoardWriterPorts: a club's board writer takes at most maxPorts ports; a
// result of another port is refused (junk: too_many_ports), a known port's is
// taken, its latest replacing the one not put yet.
func TestBoardWriterPorts(t *testing.T) {
	w := &boardWriter{wake: make(chan struct{}, 1), pending: map[string]pendingBoard{}}
	for i := range maxPorts {
		if !w.offer(strings.Repeat("p", i+1), pendingBoard{problem: "goscore"}) {
			t.Fatalf("port %d of %d refused", i+1, maxPorts)
		}
	}
	if w.offer("one-more", pendingBoard{}) {
		t.Fatalf("a port beyond %d taken", maxPorts)
	}
	if !w.offer("p", pendingBoard{problem: "othello"}) || w.pending["p"].problem != "othello" || len(w.pending) != maxPorts {
		t.Fatalf("port p's latest result: taken %q, %d pending", w.pending["p"].problem, len(w.pending))
	}
}
