// sameorigin: floods a port's dump subject with dumps carrying the port's own
// Scoreboard-Origin (public: it is in every dump), so that they share the port's
// queue at the workers: sameorigin -origin O -secs 10
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/nats-io/nats.go"
)

func main() {
	url := flag.String("url", "nats://127.0.0.1:14222", "")
	origin := flag.String("origin", "", "")
	subj := flag.String("subj", "scoreboard.dump.goscore.hall", "")
	unitFile := flag.String("unit", "/tmp/review-club/unit1", "")
	secs := flag.Int("secs", 10, "")
	flag.Parse()
	unit, _ := os.ReadFile(*unitFile)
	nc, err := nats.Connect(*url)
	if err != nil {
		log.Fatal(err)
	}
	n := 0
	for end := time.Now().Add(time.Duration(*secs) * time.Second); time.Now().Before(end); {
		for i := 0; i < 500; i++ {
			m := nats.NewMsg(*subj)
			if *origin != "" {
				m.Header.Set("Scoreboard-Origin", *origin)
			}
			m.Data = unit
			nc.PublishMsg(m)
			n++
		}
		nc.Flush()
	}
	fmt.Println("sent", n, "last error:", nc.LastError())
}
