// bighdr: a tool publishes dumps whose header values are huge: bighdr -n 20 -size 1000000 -hdr Scoreboard-Seq
package main

import (
	"flag"
	"fmt"
	"log"
	"strings"

	"github.com/nats-io/nats.go"
)

func main() {
	url := flag.String("url", "nats://127.0.0.1:14222", "")
	n := flag.Int("n", 20, "")
	size := flag.Int("size", 1000000, "")
	hdr := flag.String("hdr", "Scoreboard-Seq", "")
	problem := flag.String("problem", "goscore", "")
	flag.Parse()
	nc, err := nats.Connect(*url)
	if err != nil {
		log.Fatal(err)
	}
	v := strings.Repeat("x", *size)
	for i := 0; i < *n; i++ {
		m := nats.NewMsg(fmt.Sprintf("scoreboard.dump.%s.p%d", *problem, i))
		m.Header.Set(*hdr, v)
		m.Data = []byte("\n")
		if err := nc.PublishMsg(m); err != nil {
			log.Fatal(err)
		}
	}
	nc.Flush()
	fmt.Println("sent; last error:", nc.LastError())
}
