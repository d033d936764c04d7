package bus_test

import (
	"testing"

	"github.com/goclub/scoreboard/bus"
)

func TestDefaultURL(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	if got := bus.DefaultURL(getenv); got != "nats://"+bus.DefaultListen {
		t.Errorf("without $NATS_URL: %q", got)
	}
	env["NATS_URL"] = "nats://club:4222,nats://club2:4222"
	if got := bus.DefaultURL(getenv); got != env["NATS_URL"] {
		t.Errorf("with $NATS_URL=%s: %q", env["NATS_URL"], got)
	}
	env["NATS_URL"] = "  "
	if got := bus.DefaultURL(getenv); got != "nats://"+bus.DefaultListen {
		t.Errorf("with a blank $NATS_URL: %q", got)
	}
}
