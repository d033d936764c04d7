// seqs: a tool publishes tiny dumps on a port's subject with the port's origin and
// far-future seqs, paced for the workers: each gets an error result stored, whose
// notice the port's display keeps forever: seqs -origin O -n 200000
package main

import (
	"flag"
	"fmt"
	"log"
	"strconv"

	"github.com/nats-io/nats.go"
)

func main() {
	url := flag.String("url", "nats://127.0.0.1:14222", "")
	origin := flag.String("origin", "", "")
	subj := flag.String("subj", "scoreboard.dump.goscore.hall", "")
	n := flag.Int("n", 200000, "")
	batch := flag.Int("batch", 1000, "")
	flag.Parse()
	nc, err := nats.Connect(*url)
	if err != nil {
		log.Fatal(err)
	}
	res, _ := nc.SubscribeSync("scoreboard.result.goscore.hall")
	res.SetPendingLimits(-1, -1)
	base := uint64(1) << 40
	got := 0
	for i := 0; i < *n; i += *batch {
		for j := i; j < i+*batch && j < *n; j++ {
			m := nats.NewMsg(*subj)
			m.Header.Set("Scoreboard-Origin", *origin)
			m.Header.Set("Scoreboard-Seq", strconv.FormatUint(base+uint64(j), 10))
			m.Data = []byte("x")
			nc.PublishMsg(m)
		}
		nc.Flush()
		// wait for most of the batch's results: pace to the workers
		for k := 0; k < *batch*9/10; k++ {
			if _, err := res.NextMsg(5e9); err != nil {
				break
			}
			got++
		}
	}
	fmt.Println("results seen:", got, "last error:", nc.LastError())
}
