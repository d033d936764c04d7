// durables: a tool creates N durable consumers on a stream (no inactive threshold):
// durables -n 200
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"time"

	"github.com/nats-io/nats.go"
)

func main() {
	url := flag.String("url", "nats://127.0.0.1:14222", "")
	stream := flag.String("stream", "SCOREBOARD", "")
	n := flag.Int("n", 200, "")
	prefix := flag.String("prefix", "evil", "")
	flag.Parse()
	nc, err := nats.Connect(*url)
	if err != nil {
		log.Fatal(err)
	}
	ok := 0
	var last string
	for i := 0; i < *n; i++ {
		name := fmt.Sprintf("%s%d", *prefix, i)
		cfg := map[string]any{"durable_name": name, "ack_policy": "explicit", "deliver_policy": "all",
			"max_ack_pending": -1}
		req, _ := json.Marshal(map[string]any{"stream_name": *stream, "config": cfg, "action": "create"})
		m, err := nc.Request("$JS.API.CONSUMER.CREATE."+*stream+"."+name, req, 5*time.Second)
		if err != nil {
			log.Fatal(err)
		}
		var r struct {
			Error *struct{ Description string }
		}
		json.Unmarshal(m.Data, &r)
		if r.Error == nil {
			ok++
		} else {
			last = r.Error.Description
		}
	}
	fmt.Printf("created %d of %d durable consumers; last error %q\n", ok, *n, last)
}
