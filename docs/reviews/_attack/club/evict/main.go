// evict: a tool publishes junk dumps of size bytes until total bytes are sent, one new
// port name per message or one name for all: evict -size 1600000 -total 80000000
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
	size := flag.Int("size", 1600000, "")
	total := flag.Int("total", 80000000, "")
	subj := flag.String("subj", "scoreboard.dump.nosuch.junk", "a subject no worker serves: nothing answers, the stream keeps it")
	flag.Parse()
	nc, err := nats.Connect(*url)
	if err != nil {
		log.Fatal(err)
	}
	data := make([]byte, *size)
	start := time.Now()
	for sent := 0; sent < *total; sent += *size {
		if err := nc.Publish(*subj, data); err != nil {
			log.Fatal(err)
		}
	}
	err = nc.Flush()
	fmt.Printf("sent %d bytes in %v (flush %v, last error %v)\n", *total, time.Since(start), err, nc.LastError())
}
