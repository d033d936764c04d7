// nospace: connects with a user name the server logs as an error when it refuses it,
// and which the daemon's log scraper takes for a full disk: nospace -n 1 -every 0
package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
)

func main() {
	url := flag.String("url", "nats://127.0.0.1:14222", "")
	n := flag.Int("n", 1, "")
	every := flag.Duration("every", time.Second, "")
	user := flag.String("user", "no space left on device", "")
	flag.Parse()
	for i := 0; i < *n; i++ {
		_, err := nats.Connect(*url, nats.UserInfo(*user, "x"), nats.NoReconnect())
		fmt.Println(i, err)
		time.Sleep(*every)
	}
}
