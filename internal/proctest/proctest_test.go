package proctest

import (
	"net"
	"testing"
	"time"
)

func TestMain(m *testing.M) { Main(m) }

func TestNATSServerRestartsOnItsPort(t *testing.T) {
	s := StartNATS(t, NATSOptions{Token: "s3cret"})
	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	// A nats-server greets every client with its INFO line.
	buf := make([]byte, 4)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Read(buf); err != nil || string(buf) != "INFO" {
		t.Fatalf("first bytes %q, %v; want INFO", buf, err)
	}
	c.Close()

	s.Stop()
	if c, err := net.DialTimeout("tcp", s.Addr(), time.Second); err == nil {
		c.Close()
		t.Fatal("server still accepts connections after Stop")
	}
	s.Start()
	WaitTCP(t, s.Addr(), 10*time.Second)
}
