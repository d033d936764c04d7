// steal: a tool pulls from every pull consumer of a stream (the daemon's own), with
// its own inbox, again and again: steal -stream SCOREBOARD -secs 30
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
)

func main() {
	url := flag.String("url", "nats://127.0.0.1:14222", "")
	stream := flag.String("stream", "SCOREBOARD", "")
	secs := flag.Int("secs", 30, "")
	every := flag.Int("every", 200, "ms between pulls")
	flag.Parse()
	nc, err := nats.Connect(*url)
	if err != nil {
		log.Fatal(err)
	}
	var stolen atomic.Int64
	inbox := nats.NewInbox()
	nc.Subscribe(inbox, func(m *nats.Msg) {
		if len(m.Data) > 0 {
			stolen.Add(1)
			fmt.Printf("stole %s %.60q\n", m.Subject, m.Data)
		}
	})
	end := time.Now().Add(time.Duration(*secs) * time.Second)
	seen := map[string]bool{}
	for time.Now().Before(end) {
		m, err := nc.Request("$JS.API.CONSUMER.NAMES."+*stream, nil, 2*time.Second)
		if err != nil {
			log.Print(err)
			continue
		}
		var r struct{ Consumers []string }
		json.Unmarshal(m.Data, &r)
		for _, c := range r.Consumers {
			if !seen[c] {
				fmt.Println("pulling from", c)
				seen[c] = true
			}
			req, _ := json.Marshal(map[string]any{"batch": 100, "expires": int64(2 * time.Second)})
			nc.PublishRequest("$JS.API.CONSUMER.MSG.NEXT."+*stream+"."+c, inbox, req)
		}
		nc.Flush()
		time.Sleep(time.Duration(*every) * time.Millisecond)
	}
	fmt.Println("stolen:", stolen.Load(), "last error:", nc.LastError())
}
