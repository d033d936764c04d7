package web

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestStreamGoneWhileSubscribing: a viewer whose request ends just as the hub
// takes its subscription (the hub ran the closure, the handler stopped waiting for
// it) is not left subscribed: each such stream is dropped, within the streams'
// count while it is held, and nothing reads what the hub's goroutine writes while
// it writes it (run under -race). Many requests already ended race the hub's turn,
// so some hand it their closure and then give up waiting.
func TestStreamGoneWhileSubscribing(t *testing.T) {
	s, _ := hubServer(t)
	ctx := context.Background()
	s.hub.put(ctx, &Board{Port: "p", Problem: "goscore", Seq: 1, Revision: 1})
	const tries = 400
	codes := map[int]int{}
	for i := range tries {
		port := ""
		if i%2 == 1 {
			port = "p"
		}
		rctx, cancel := context.WithCancel(ctx)
		cancel()
		r := httptest.NewRequestWithContext(rctx, http.MethodGet, "/api/events?port="+port, nil)
		w := httptest.NewRecorder()
		s.events(w, r)
		codes[w.Code]++
	}
	var held, all int
	s.hub.call(ctx, func() { held, all = len(s.hub.clients), s.hub.all })
	if held != 0 || all != 0 || s.streams.Load() != 0 {
		t.Fatalf("%d requests that ended while subscribing (answers %v): %d streams still subscribed (%d of every port), %d counted; want 0",
			tries, codes, held, all, s.streams.Load())
	}
	t.Logf("%d requests, answers %v", tries, fmt.Sprint(codes))
}
