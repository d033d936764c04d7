// apiflood: a tool publishes N JetStream API requests it may make, as fast as it can:
// apiflood -n 50000 -subj '$JS.API.STREAM.INFO.SCOREBOARD' -body '{"subjects_filter":">"}'
package main

import (
	"flag"
	"fmt"
	"log"

	"github.com/nats-io/nats.go"
)

func main() {
	url := flag.String("url", "nats://127.0.0.1:14222", "")
	n := flag.Int("n", 50000, "")
	subj := flag.String("subj", "$JS.API.STREAM.INFO.SCOREBOARD", "")
	body := flag.String("body", `{"subjects_filter":">"}`, "")
	flag.Parse()
	nc, err := nats.Connect(*url)
	if err != nil {
		log.Fatal(err)
	}
	inbox := nats.NewInbox()
	got := 0
	nc.Subscribe(inbox, func(*nats.Msg) { got++ })
	for i := 0; i < *n; i++ {
		if err := nc.PublishRequest(*subj, inbox, []byte(*body)); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Println("flush:", nc.Flush(), "replies so far:", got)
}
