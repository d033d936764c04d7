// hog: with the worker credentials, joins the workers' queue group on one port's dump
// subject N times and never answers: TOKEN=wtok hog -n 200 -subj scoreboard.dump.goscore.hall -hold 40s
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
)

func main() {
	n := flag.Int("n", 200, "")
	subj := flag.String("subj", "scoreboard.dump.goscore.hall", "")
	hold := flag.Duration("hold", 40*time.Second, "")
	flag.Parse()
	nc, err := nats.Connect("nats://127.0.0.1:14222", nats.Token(os.Getenv("TOKEN")))
	if err != nil {
		log.Fatal(err)
	}
	var taken atomic.Int64
	for i := 0; i < *n; i++ {
		if _, err := nc.QueueSubscribe(*subj, "scoreboard-workers", func(*nats.Msg) { taken.Add(1) }); err != nil {
			log.Fatal(err)
		}
	}
	nc.Flush()
	time.Sleep(*hold)
	fmt.Println("dumps taken and dropped:", taken.Load(), "last error:", nc.LastError())
}
