// batchget: one direct-get request for a batch of the whole history: batchget -batch 200000
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
	batch := flag.Int("batch", 200000, "")
	maxBytes := flag.Int("max-bytes", 0, "")
	flag.Parse()
	nc, err := nats.Connect(*url)
	if err != nil {
		log.Fatal(err)
	}
	inbox := nats.NewInbox()
	sub, _ := nc.SubscribeSync(inbox)
	sub.SetPendingLimits(-1, -1)
	body := fmt.Sprintf(`{"seq":1,"batch":%d}`, *batch)
	if *maxBytes > 0 {
		body = fmt.Sprintf(`{"seq":1,"batch":%d,"max_bytes":%d}`, *batch, *maxBytes)
	}
	start := time.Now()
	nc.PublishRequest("$JS.API.DIRECT.GET.SCOREBOARD", inbox, []byte(body))
	n, bytes := 0, 0
	for {
		m, err := sub.NextMsg(3 * time.Second)
		if err != nil {
			break
		}
		if n == 0 && bytes == 0 && m.Header.Get("Status") != "" && len(m.Data) == 0 {
			fmt.Println("first status", m.Header)
		}
		if len(m.Data) == 0 && m.Header.Get("Status") == "204" {
			fmt.Println("status", m.Header.Get("Status"), m.Header.Get("Description"))
			break
		}
		n++
		bytes += len(m.Data)
	}
	fmt.Printf("%d messages, %d bytes in %v for one %d-byte request\n", n, bytes, time.Since(start), len(body))
}
