// matrix: tries publishes and subscriptions with the given token (or none), one
// connection each, and says which the server refused: TOKEN=wtok matrix
package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

func conn() *nats.Conn {
	var opts []nats.Option
	if t := os.Getenv("TOKEN"); t != "" {
		opts = append(opts, nats.Token(t))
	}
	nc, err := nats.Connect("nats://127.0.0.1:14222", opts...)
	if err != nil {
		panic(err)
	}
	return nc
}

func verdict(nc *nats.Conn) string {
	nc.FlushTimeout(2 * time.Second)
	time.Sleep(100 * time.Millisecond)
	if err := nc.LastError(); errors.Is(err, nats.ErrPermissionViolation) || (err != nil && strings.Contains(err.Error(), "ermission")) {
		return "refused"
	}
	return "ALLOWED"
}

func main() {
	pubs := []string{"scoreboard.dump.goscore.hall", "scoreboard.result.goscore.hall", "scoreboard.port.hall", "scoreboard.repair.result.goscore.hall",
		"_INBOX.x.1", "$JS.API.INFO", "$KV.SCOREBOARD_BOARDS.hall", "$SRV.PING", "$SYS.REQ.SERVER.PING", "$JS.ACK.SCOREBOARD.x.1.1.1.1.1", "$JSC.x", "$JS.FC.KV_SCOREBOARD_BOARDS.x"}
	for _, s := range pubs {
		nc := conn()
		nc.Publish(s, []byte("{}"))
		fmt.Printf("pub %-45s %s\n", s, verdict(nc))
		nc.Close()
	}
	subs := [][2]string{{"scoreboard.>", ""}, {"scoreboard.dump.*.*", ""}, {"scoreboard.dump.*.*", "scoreboard-workers"}, {"scoreboard.dump.>", "scoreboard-workers"},
		{"scoreboard.dump.goscore.hall", "scoreboard-workers"}, {"scoreboard.solve.*", "other"}, {"_INBOX.>", ""}, {"$JS.>", ""}, {"$KV.>", ""}, {">", ""}, {"$SRV.>", "scoreboard-workers"}}
	for _, s := range subs {
		nc := conn()
		if s[1] == "" {
			nc.Subscribe(s[0], func(*nats.Msg) {})
		} else {
			nc.QueueSubscribe(s[0], s[1], func(*nats.Msg) {})
		}
		fmt.Printf("sub %-30s q=%-20s %s\n", s[0], s[1], verdict(nc))
		nc.Close()
	}
}
