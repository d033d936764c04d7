// pub: publish as a tool: pub <subject> <body> [Header:Value ...]
package main

import (
	"fmt"
	"log"
	"os"
	"strings"

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
	m := nats.NewMsg(os.Args[1])
	m.Data = []byte(os.Args[2])
	for _, h := range os.Args[3:] {
		k, v, _ := strings.Cut(h, ":")
		m.Header.Add(k, v)
	}
	if err := nc.PublishMsg(m); err != nil {
		log.Fatal(err)
	}
	nc.Flush()
	fmt.Println("last error:", nc.LastError())
}
