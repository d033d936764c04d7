// solveflood: a tool publishes N copies of a contest input on solve endpoints (no
// reply wanted): solveflood -in cap11.in -n 100 -problems capture,goscore
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/nats-io/nats.go"
)

func main() {
	url := flag.String("url", "nats://127.0.0.1:14222", "")
	in := flag.String("in", "", "")
	n := flag.Int("n", 100, "per problem")
	problems := flag.String("problems", "capture", "")
	flag.Parse()
	data, err := os.ReadFile(*in)
	if err != nil {
		log.Fatal(err)
	}
	nc, err := nats.Connect(*url)
	if err != nil {
		log.Fatal(err)
	}
	for i := 0; i < *n; i++ {
		for _, p := range strings.Split(*problems, ",") {
			if err := nc.PublishRequest("scoreboard.solve."+p, "_INBOX.none", data); err != nil {
				log.Fatal(err)
			}
		}
	}
	nc.Flush()
	fmt.Println("sent; last error:", nc.LastError())
}
