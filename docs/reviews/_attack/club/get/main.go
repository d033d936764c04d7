// get: raw request as a tool: get <subject> [body]
package main

import (
	"fmt"
	"log"
	"os"
	"time"

	"github.com/nats-io/nats.go"
)

func main() {
	url := os.Getenv("URL")
	if url == "" {
		url = "nats://127.0.0.1:14222"
	}
	nc, err := nats.Connect(url)
	if err != nil {
		log.Fatal(err)
	}
	body := ""
	if len(os.Args) > 2 {
		body = os.Args[2]
	}
	m, err := nc.Request(os.Args[1], []byte(body), 3*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	for k, v := range m.Header {
		fmt.Printf("%s: %v\n", k, v)
	}
	fmt.Printf("%s\n", m.Data)
}
