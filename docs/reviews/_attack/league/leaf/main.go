// leaf: a hostile leaf node at the hub. It joins with a club's seed, subscribes
// (-sub, comma-separated) and prints what it gets, publishes (-pub subj=data, ;-separated)
// every second, and reports its leaf link state. Review tool, not project code.
package main

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/goclub/scoreboard/bus"
)

func main() {
	hub := flag.String("hub", "tls://localhost:27422", "")
	seed := flag.String("seed", "", "")
	user := flag.String("user", "", "token user")
	token := flag.String("token", "", "")
	ca := flag.String("ca", "/tmp/review-league/env/ca.crt", "")
	name := flag.String("name", "thief", "server name")
	domain := flag.String("domain", "", "js domain (enables JetStream)")
	subs := flag.String("sub", "", "")
	pubs := flag.String("pub", "", "")
	fcSubj := flag.String("fc", "", "publish a flow-control request (status 100) on this subject each second")
	fcReply := flag.String("fc-reply", "", "its reply subject")
	flag.Parse()
	u, _ := url.Parse(*hub)
	if *token != "" {
		u.User = url.UserPassword(*user, *token)
	}
	r := &server.RemoteLeafOpts{URLs: []*url.URL{u}}
	if *seed != "" {
		s, err := bus.ReadSeedFile(*seed)
		if err != nil {
			panic(err)
		}
		r.Nkey = s
	}
	if strings.HasPrefix(*hub, "tls") {
		pem, _ := os.ReadFile(*ca)
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(pem)
		r.TLS = true
		r.TLSConfig = &tls.Config{RootCAs: pool}
	}
	o := &server.Options{ServerName: *name, Port: -1, Host: "127.0.0.1", NoSigs: true}
	o.LeafNode.Remotes = []*server.RemoteLeafOpts{r}
	o.LeafNode.ReconnectInterval = time.Second
	if *domain != "" {
		o.JetStream = true
		o.JetStreamDomain = *domain
		o.StoreDir, _ = os.MkdirTemp("", "leafjs")
	}
	ns, err := server.NewServer(o)
	if err != nil {
		panic(err)
	}
	ns.ConfigureLogger()
	go ns.Start()
	ns.ReadyForConnections(5 * time.Second)
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		panic(err)
	}
	for _, s := range strings.Split(*subs, ",") {
		if s == "" {
			continue
		}
		nc.Subscribe(s, func(m *nats.Msg) {
			d := m.Data
			if len(d) > 300 {
				d = d[:300]
			}
			fmt.Printf("%s GOT %s reply=%s hdr=%v %s\n", time.Now().Format("15:04:05.000"), m.Subject, m.Reply, m.Header, d)
		})
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	t := time.NewTicker(time.Second)
	for {
		select {
		case <-sig:
			return
		case <-t.C:
		}
		fmt.Printf("%s leafs=%d\n", time.Now().Format("15:04:05"), ns.NumLeafNodes())
		if *fcSubj != "" && ns.NumLeafNodes() > 0 {
			rawHPub(ns.ClientURL(), *fcSubj, *fcReply, "NATS/1.0 100 FlowControl Request\r\n\r\n")
			fmt.Println("sent FC on", *fcSubj, "reply", *fcReply)
		}
		for _, p := range strings.Split(*pubs, ";") {
			if s, d, ok := strings.Cut(p, "="); ok {
				nc.Publish(s, []byte(d))
			}
		}
	}
}

// rawHPub writes one HPUB with the given header (a status line nats.go will not write).
func rawHPub(clientURL, subj, reply, hdr string) {
	u, _ := url.Parse(clientURL)
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		fmt.Println("raw:", err)
		return
	}
	defer c.Close()
	r := bufio.NewReader(c)
	r.ReadString('\n') // INFO
	fmt.Fprintf(c, "CONNECT {\"verbose\":false,\"pedantic\":false,\"headers\":true,\"protocol\":1}\r\n")
	fmt.Fprintf(c, "HPUB %s %s %d %d\r\n%s\r\nPING\r\n", subj, reply, len(hdr), len(hdr), hdr)
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	l, _ := r.ReadString('\n')
	if !strings.HasPrefix(l, "PONG") {
		fmt.Println("raw reply:", strings.TrimSpace(l))
	}
}
