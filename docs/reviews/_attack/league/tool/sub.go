package main

import (
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
)

// reqVia publishes a request with a reply subject of the caller's choosing and
// prints what comes back there (a reply subject that crosses the link).
func reqVia(nc *nats.Conn, subj, reply string, data []byte, wait time.Duration) {
	sub, _ := nc.SubscribeSync(reply)
	nc.Flush()
	time.Sleep(500 * time.Millisecond) // the interest crosses the leaf link
	nc.PublishMsg(&nats.Msg{Subject: subj, Reply: reply, Data: data})
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		m, err := sub.NextMsg(time.Until(deadline))
		if err != nil {
			break
		}
		d := m.Data
		if len(d) > 1500 {
			d = d[:1500]
		}
		fmt.Printf("REPLY on %s: %s\n", m.Subject, d)
	}
}
