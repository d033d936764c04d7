// forge: a tool (no credentials) watches a port's dumps for its origin and seq, then
// publishes, ahead of the port, dumps of another unit with the port's origin and its
// next seqs (and the dumps' Nats-Msg-Id), so that the history keeps the workers'
// answers to them (r.<origin>.<seq>) and drops the port's own. Usage:
//
//	forge -port hall -problem goscore -unit file -n 5
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
)

func main() {
	url := flag.String("url", "nats://127.0.0.1:14222", "")
	port := flag.String("port", "hall", "")
	problem := flag.String("problem", "goscore", "")
	unitFile := flag.String("unit", "", "the forged unit")
	n := flag.Int("n", 5, "how many seqs ahead")
	origin := flag.String("origin", "", "the port's origin (else learnt from its next dump)")
	seq := flag.Uint64("seq", 0, "the port's last seq (with -origin)")
	flag.Parse()
	unit, err := os.ReadFile(*unitFile)
	if err != nil {
		log.Fatal(err)
	}
	nc, err := nats.Connect(*url)
	if err != nil {
		log.Fatal(err)
	}
	subj := "scoreboard.dump." + *problem + "." + *port
	if *origin == "" {
		sub, _ := nc.SubscribeSync(subj)
		m, err := sub.NextMsg(60 * time.Second)
		if err != nil {
			log.Fatal(err)
		}
		*origin = m.Header.Get("Scoreboard-Origin")
		*seq, _ = strconv.ParseUint(m.Header.Get("Scoreboard-Seq"), 10, 64)
		sub.Unsubscribe()
	}
	fmt.Printf("origin %s last seq %d\n", *origin, *seq)
	for s := *seq + 1; s <= *seq+uint64(*n); s++ {
		m := &nats.Msg{Subject: subj, Data: unit, Header: nats.Header{}}
		m.Header.Set("Scoreboard-Origin", *origin)
		m.Header.Set("Scoreboard-Seq", strconv.FormatUint(s, 10))
		m.Header.Set("Scoreboard-Port", *port)
		m.Header.Set("Nats-Msg-Id", "d."+*origin+"."+strconv.FormatUint(s, 10))
		if err := nc.PublishMsg(m); err != nil {
			log.Fatal(err)
		}
	}
	nc.Flush()
	fmt.Println("published; last error:", nc.LastError())
}
