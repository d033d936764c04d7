// deliver: a tool (no credentials) creates a push consumer on a stream it may read,
// whose deliver subject is one it may not publish on. Usage:
//
//	deliver -url nats://127.0.0.1:14222 -stream SCOREBOARD -filter scoreboard.dump.goscore.zz -deliver '$KV.SCOREBOARD_BOARDS.hall' [-pub 'body'] [-pubsubj scoreboard.dump.goscore.zz]
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
	filter := flag.String("filter", "", "")
	deliver := flag.String("deliver", "", "")
	pubsubj := flag.String("pubsubj", "", "publish this first (as the tool)")
	pub := flag.String("pub", "", "body to publish on pubsubj")
	policy := flag.String("policy", "last_per_subject", "")
	group := flag.String("group", "", "deliver_group")
	flag.Parse()
	nc, err := nats.Connect(*url, nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { log.Printf("async: %v", err) }))
	if err != nil {
		log.Fatal(err)
	}
	defer nc.Close()
	if *pubsubj != "" {
		if err := nc.Publish(*pubsubj, []byte(*pub)); err != nil {
			log.Fatal(err)
		}
		nc.Flush()
		time.Sleep(300 * time.Millisecond)
	}
	cfg := map[string]any{
		"deliver_subject": *deliver,
		"deliver_policy":  *policy,
		"ack_policy":      "none",
		"filter_subject":  *filter,
		"deliver_group":   *group,
	}
	req, _ := json.Marshal(map[string]any{"stream_name": *stream, "config": cfg})
	m, err := nc.Request("$JS.API.CONSUMER.CREATE."+*stream, req, 3*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("create: %s\n", m.Data)
	time.Sleep(time.Second)
	fmt.Println("last error:", nc.LastError())
}
