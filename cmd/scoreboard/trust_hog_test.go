package main

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/goclub/scoreboard/bus"
)

// Issue 41, review F13: a client with the worker credentials holds 200 subscriptions
// in the workers' queue group on one port's dump subject and answers none of the
// dumps it takes, so that the queue gives it nearly every attempt of every unit. The
// port's units are still answered, each within its attempts: the last attempt goes
// to the daemon's own workers, not to the queue group. The hog did take dumps (else
// the test proved nothing).
func TestTrustWorkerHogsPort(t *testing.T) {
	e := startToolEnv(t, false)
	hog, err := nats.Connect(e.url, nats.Token(trustToken))
	if err != nil {
		t.Fatal(err)
	}
	defer hog.Close()
	var taken atomic.Int64
	subject := bus.Subjects{Prefix: bus.DefaultPrefix}.Dump("goscore", trustPort)
	for range 200 {
		if _, err := hog.QueueSubscribe(subject, bus.QueueGroup, func(*nats.Msg) { taken.Add(1) }); err != nil {
			t.Fatal(err)
		}
	}
	if err := hog.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := hog.LastError(); err != nil {
		t.Fatalf("the worker credentials' subscriptions: %v", err)
	}
	const units = 3
	t0 := time.Now()
	diskUnits(t, e.pt.Master, e.pt.Master, 0, units, e.run)
	t.Logf("%d units answered in %v; the hog took %d dumps and answered none", units, time.Since(t0).Round(time.Millisecond), taken.Load())
	if taken.Load() < units {
		t.Errorf("the hog took %d dumps of %d units: it did not stand in the way", taken.Load(), units)
	}
}
