// deputy: a tool publishes a micro-service request ($SRV.PING / INFO / STATS) with a
// reply subject it may not publish on; the workers' service answers there with its
// own rights. deputy -subj '$SRV.PING' -reply '$JS.API.STREAM.PURGE.SCOREBOARD'
package main

import (
	"flag"
	"fmt"
	"log"
	"os"

	"github.com/nats-io/nats.go"
)

func main() {
	url := flag.String("url", "nats://127.0.0.1:14222", "")
	subj := flag.String("subj", "$SRV.PING", "")
	reply := flag.String("reply", "", "")
	flag.Parse()
	var opts []nats.Option
	if t := os.Getenv("TOKEN"); t != "" {
		opts = append(opts, nats.Token(t))
	}
	nc, err := nats.Connect(*url, opts...)
	if err != nil {
		log.Fatal(err)
	}
	if err := nc.PublishRequest(*subj, *reply, nil); err != nil {
		log.Fatal(err)
	}
	nc.Flush()
	fmt.Println("published", *subj, "reply", *reply, "last error:", nc.LastError())
}
