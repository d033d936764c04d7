package web

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/goclub/scoreboard/internal/faulttest"
)

// hostileClubs are the clubs that flood in these tests, each with 64 ports:
// together more than the whole page's bounds, each more than its own.
var hostileClubs = []string{"h0", "h1", "h2", "h3", "h4", "h5", "h6", "h7", "h8", "h9"}

// TestHeldBoundPerClub: on a delayed hub's page, clubs that flood every port with
// large values are held at their own bound each, and all of them at the page's;
// another club's values, held alongside, are all kept and come out in their time.
func TestHeldBoundPerClub(t *testing.T) {
	s := &Server{hub: newHub(), log: zerolog.Nop()}
	s.WithDelays(NewDelays(time.Hour, map[string]time.Duration{"good": 0}))
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	wg.Go(func() { s.hub.run(ctx) })
	now := time.Now()
	// One buffer for every value: the stage keeps them as they come, so the test
	// costs the page's accounting, not the machine's memory.
	big := bytes.Repeat([]byte("x"), 256<<10)
	rev := uint64(0)
	for _, club := range hostileClubs {
		for port := range 64 {
			for range maxHeldBytes/len(big) + 2 {
				rev++
				s.held.take(ctx, heldValue{rev: rev, stored: now, value: big}, fmt.Sprintf("%s.p%d", club, port))
			}
		}
	}
	// The good club's values, held a moment (delay 0 is at once: it is given an
	// hour too, then let out).
	s.delays.SetClubs(map[string]time.Duration{"good": time.Hour})
	unit, _ := faulttest.GoscoreBoard(3)
	for port := range 4 {
		rev++
		v := fmt.Appendf(nil, `{"problem":"goscore","port":"p%d","seq":%d,"answer":"a","unit":%q}`, port, rev, unit)
		s.held.take(ctx, heldValue{rev: rev, stored: now, value: v}, fmt.Sprintf("good.p%d", port))
	}
	s.held.mu.Lock()
	byClub, total := map[string]int{}, 0
	for port, p := range s.held.ports {
		club, _, _ := strings.Cut(port, ".")
		for _, v := range p.held {
			byClub[club] += len(v.value)
			total += len(v.value)
		}
	}
	goodHeld := 0
	for port := range 4 {
		if p := s.held.ports[fmt.Sprintf("good.p%d", port)]; p != nil {
			goodHeld += len(p.held)
		}
	}
	s.held.mu.Unlock()
	for _, club := range hostileClubs {
		if byClub[club] > maxHeldClubBytes {
			t.Errorf("club %s holds %d bytes of values, beyond its bound %d", club, byClub[club], maxHeldClubBytes)
		}
	}
	if total > maxHeldPageBytes {
		t.Errorf("the page holds %d bytes of values, beyond its bound %d", total, maxHeldPageBytes)
	}
	if goodHeld != 4 {
		t.Fatalf("the good club holds %d of its 4 values", goodHeld)
	}
	s.delays.SetClubs(map[string]time.Duration{"good": 0})
	deadline := time.Now().Add(time.Minute)
	for port := range 4 {
		for s.hub.board(ctx, fmt.Sprintf("good.p%d", port)) == nil {
			if time.Now().After(deadline) {
				t.Fatalf("good.p%d not shown a minute after its delay was set to 0", port)
			}
			time.Sleep(10 * time.Millisecond) // a poll's pace
		}
	}
	t.Logf("held: %d bytes in all (bound %d); club h0 %d (bound %d)", total, maxHeldPageBytes, byClub["h0"], maxHeldClubBytes)
}

// TestPictureBoundPerClub: clubs whose every port sends large units keep at most
// their own bound of pictures each, and all of them the page's; another club's
// boards and pictures still show.
func TestPictureBoundPerClub(t *testing.T) {
	s, ts := hubServer(t)
	ctx := context.Background()
	unit, _ := faulttest.GoscoreBoard(3)
	for port := range 2 {
		s.hub.put(ctx, &Board{Port: fmt.Sprintf("good.p%d", port), Problem: "goscore", Seq: 1, Revision: uint64(port + 1), unit: []byte(unit)})
	}
	big := bytes.Repeat([]byte("x"), 128<<10)
	rev := uint64(100)
	for _, club := range hostileClubs {
		for port := range 64 {
			for range keptPictures + 2 {
				rev++
				s.hub.put(ctx, &Board{Port: fmt.Sprintf("%s.p%d", club, port), Problem: "goscore", Seq: rev, Revision: rev, unit: big})
			}
		}
	}
	byClub, total := map[string]int{}, 0
	s.hub.call(ctx, func() {
		for port, sh := range s.hub.ports {
			club, _, _ := strings.Cut(port, ".")
			for _, p := range sh.pictures {
				byClub[club] += pictureCost(p)
				total += pictureCost(p)
			}
		}
	})
	for _, club := range hostileClubs {
		if byClub[club] > maxPictureClubBytes {
			t.Errorf("club %s holds %d bytes of pictures, beyond its bound %d", club, byClub[club], maxPictureClubBytes)
		}
	}
	if total > maxPicturePageBytes {
		t.Errorf("the page holds %d bytes of pictures, beyond its bound %d", total, maxPicturePageBytes)
	}
	for port := range 2 {
		b := s.hub.board(ctx, fmt.Sprintf("good.p%d", port))
		if b == nil || b.Picture == "" {
			t.Fatalf("good.p%d: %+v, want its board with a picture", port, b)
		}
		if code, body := httpGet(t, ts.URL+b.Picture); code != 200 || !strings.Contains(body, "<svg") {
			t.Errorf("%s: %d %.80q", b.Picture, code, body)
		}
	}
	t.Logf("pictures: %d bytes in all (bound %d); club h0 %d (bound %d)", total, maxPicturePageBytes, byClub["h0"], maxPictureClubBytes)
}
