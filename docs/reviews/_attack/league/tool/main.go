// tool: a client of the hub's tools' listener without credentials (a "tool"),
// trying what a tool may not do. Review tool, not project code.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/nats-io/nats.go"
)

func main() {
	url := flag.String("url", "nats://127.0.0.1:24322", "")
	mode := flag.String("mode", "", "portstate|deliver|delcons|listcons|req")
	subj := flag.String("subj", "", "")
	data := flag.String("data", "", "")
	stream := flag.String("stream", "LEAGUE_SOUTH", "")
	deliver := flag.String("deliver", "", "")
	name := flag.String("name", "", "consumer name")
	startSeq := flag.Uint64("start", 0, "")
	flag.Parse()
	nc, err := nats.Connect(*url, nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { fmt.Println("ASYNC ERR:", err) }))
	if err != nil {
		fmt.Println("connect:", err)
		os.Exit(1)
	}
	defer nc.Close()
	switch *mode {
	case "pub":
		err := nc.Publish(*subj, []byte(*data))
		nc.Flush()
		time.Sleep(300 * time.Millisecond)
		fmt.Println("published", *subj, err, nc.LastError())
	case "sub":
		nc.Subscribe(*subj, func(m *nats.Msg) {
			d := m.Data
			if len(d) > 200 {
				d = d[:200]
			}
			fmt.Printf("GOT %s reply=%s hdr=%v %q\n", m.Subject, m.Reply, m.Header, d)
		})
		time.Sleep(time.Duration(*startSeq) * time.Second)
	case "reqvia":
		reqVia(nc, *subj, *deliver, []byte(*data), 3*time.Second)
	case "req":
		m, err := nc.Request(*subj, []byte(*data), 3*time.Second)
		if err != nil {
			fmt.Println("req err:", err)
			return
		}
		fmt.Println("reply:", string(m.Data))
	case "deliver":
		// A push consumer on stream whose deliver subject is *deliver: the hub's
		// JetStream then publishes the stream's messages there, with every right.
		cfg := map[string]any{"deliver_subject": *deliver, "ack_policy": "none", "deliver_policy": "all", "name": *name}
		if *startSeq > 0 {
			cfg["deliver_policy"] = "by_start_sequence"
			cfg["opt_start_seq"] = *startSeq
		}
		if *name == "" {
			delete(cfg, "name")
		}
		req, _ := json.Marshal(map[string]any{"stream_name": *stream, "config": cfg})
		s := "$JS.API.CONSUMER.CREATE." + *stream
		if *name != "" {
			s += "." + *name
		}
		m, err := nc.Request(s, req, 3*time.Second)
		if err != nil {
			fmt.Println("create err:", err)
			return
		}
		fmt.Println("create reply:", string(m.Data))
		time.Sleep(2 * time.Second)
	}
}
