// subs: a tool makes N subscriptions on distinct subjects and holds them: subs -n 200000 -hold 20s
package main

import (
	"flag"
	"fmt"
	"log"
	"time"

	"github.com/nats-io/nats.go"
)

func main() {
	url := flag.String("url", "nats://127.0.0.1:14222", "")
	n := flag.Int("n", 200000, "")
	hold := flag.Duration("hold", 20*time.Second, "")
	flag.Parse()
	nc, err := nats.Connect(*url)
	if err != nil {
		log.Fatal(err)
	}
	for i := 0; i < *n; i++ {
		if _, err := nc.Subscribe(fmt.Sprintf("scoreboard.x%d.%d", i%1000, i), func(*nats.Msg) {}); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Println("flush:", nc.Flush(), "last error:", nc.LastError())
	time.Sleep(*hold)
}
