// sub: subscribe as a tool and print what comes for N seconds: sub <subject> <seconds> [queue]
package main

import (
	"fmt"
	"log"
	"os"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
)

func main() {
	url := os.Getenv("URL")
	if url == "" {
		url = "nats://127.0.0.1:14222"
	}
	var opts []nats.Option
	if t := os.Getenv("TOKEN"); t != "" {
		opts = append(opts, nats.Token(t))
	}
	opts = append(opts, nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { log.Printf("async: %v", err) }))
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		log.Fatal(err)
	}
	n, _ := strconv.Atoi(os.Args[2])
	cb := func(m *nats.Msg) {
		d := m.Data
		if len(d) > 200 {
			d = d[:200]
		}
		fmt.Printf("%s reply=%q hdr=%v %q\n", m.Subject, m.Reply, m.Header, d)
	}
	if len(os.Args) > 3 {
		_, err = nc.QueueSubscribe(os.Args[1], os.Args[3], cb)
	} else {
		_, err = nc.Subscribe(os.Args[1], cb)
	}
	if err != nil {
		log.Fatal(err)
	}
	nc.Flush()
	time.Sleep(time.Duration(n) * time.Second)
	fmt.Println("last error:", nc.LastError())
}
