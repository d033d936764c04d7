// Package proctest runs the real processes tests need: the scoreboard binary, and an
// external nats-server built from the Go module in go.mod.
//
// Binaries are built once per test binary into a temporary directory; call Main from
// TestMain to remove it at the end:
//
//	func TestMain(m *testing.M) { proctest.Main(m) }
package proctest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

var (
	dirOnce sync.Once
	dir     string
	dirErr  error

	builds sync.Map // binary name -> *build
)

type build struct {
	once sync.Once
	path string
	err  error
}

// Main runs the tests, then the cleanups, and removes the built binaries.
func Main(m *testing.M, cleanups ...func()) {
	code := m.Run()
	for _, c := range cleanups {
		c()
	}
	if dir != "" {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

// StateDir points the default state directory of every daemon the tests start (in
// process or as a child) at a fresh temporary directory, through $STATE_DIRECTORY,
// so tests never touch the user's, nor another test binary's; it returns its removal,
// for Main. Tests that need their own pass --daemon-state-dir.
func StateDir() func() {
	d, err := os.MkdirTemp("", "proctest-state-")
	if err != nil {
		panic(err)
	}
	os.Setenv("STATE_DIRECTORY", d)
	return func() { os.RemoveAll(d) }
}

// moduleRoot finds the directory of go.mod above this package's tests.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("not inside a Go module")
	}
	return filepath.Dir(mod), nil
}

// binary builds pkg (a package path or directory, relative to the module root) once
// per test binary and returns its path.
func binary(t testing.TB, name, pkg string) string {
	SkipShort(t, "a process-level test: it builds and runs a program")
	t.Helper()
	b, _ := builds.LoadOrStore(name, &build{})
	bb := b.(*build)
	bb.once.Do(func() {
		if p, ok := prebuilt(name); ok {
			bb.path = p
			return
		}
		dirOnce.Do(func() { dir, dirErr = os.MkdirTemp("", "proctest-") })
		if dirErr != nil {
			bb.err = dirErr
			return
		}
		bb.path = filepath.Join(dir, name)
		bb.err = buildBinary(bb.path, pkg)
	})
	if bb.err != nil {
		t.Fatal(bb.err)
	}
	return bb.path
}

// buildBinary builds pkg (a package path, or a directory relative to the module
// root) into path.
func buildBinary(path, pkg string) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	cmd := exec.Command("go", "build", "-o", path, pkg)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
	}
	return nil
}

// SkipShort skips t under `go test -short`, saying what it is: the one-minute loop
// (docs/development.md) runs the engine, parser and package tests, and leaves the
// process-level fault, soak and browser tests to the full run (CI, the README's
// command).
func SkipShort(t testing.TB, what string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("%s: skipped under -short (go test without -short runs it)", what)
	}
}

// Scoreboard returns the path of the scoreboard binary, built from ./cmd/scoreboard.
func Scoreboard(t testing.TB) string {
	t.Helper()
	return binary(t, "scoreboard", "./cmd/scoreboard")
}

// NATSServerBinary returns the path of a nats-server binary built from the module's
// own github.com/nats-io/nats-server/v2.
func NATSServerBinary(t testing.TB) string {
	t.Helper()
	return binary(t, "nats-server", "github.com/nats-io/nats-server/v2")
}

// NATSCLIVersion is the release of the official NATS CLI the tests check the
// service against (`nats micro stats`): what a user sees.
const NATSCLIVersion = "v0.5.1"

var natsCLI build

// NATSCLI returns the path of the official NATS CLI (`nats`), built once per test
// binary from the Go module proxy (or the module cache). It is no dependency of the
// module: built with `go install`, outside it. When it cannot be built (no proxy),
// the test is skipped, except in CI (CI=true), where it fails.
func NATSCLI(t testing.TB) string {
	t.Helper()
	natsCLI.once.Do(func() {
		if p, ok := prebuilt("natscli/nats"); ok {
			natsCLI.path = p
			return
		}
		dirOnce.Do(func() { dir, dirErr = os.MkdirTemp("", "proctest-") })
		if dirErr != nil {
			natsCLI.err = dirErr
			return
		}
		natsCLI.path, natsCLI.err = installNATSCLI(filepath.Join(dir, "natscli"))
	})
	if natsCLI.err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the NATS CLI must run in CI: %v", natsCLI.err)
		}
		t.Skipf("no NATS CLI: %v", natsCLI.err)
	}
	return natsCLI.path
}

// installNATSCLI installs the NATS CLI into gobin and returns its path.
func installNATSCLI(gobin string) (string, error) {
	cmd := exec.Command("go", "install", "github.com/nats-io/natscli/nats@"+NATSCLIVersion)
	cmd.Dir = os.TempDir() // outside this module: its go.mod has no say
	cmd.Env = append(os.Environ(), "GOBIN="+gobin, "GOFLAGS=", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go install github.com/nats-io/natscli/nats@%s: %v\n%s", NATSCLIVersion, err, out)
	}
	return filepath.Join(gobin, "nats"), nil
}

// Process is a running child process whose output is kept for the test's log.
type Process struct {
	t    testing.TB
	name string
	cmd  *exec.Cmd
	out  Buffer
	done chan struct{}
	err  error
}

// Start starts bin with args; the process is stopped when the test ends, and its
// output is logged if the test failed.
func Start(t testing.TB, bin string, args ...string) *Process {
	t.Helper()
	p := &Process{t: t, name: filepath.Base(bin), done: make(chan struct{})}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Stdout = &p.out
	p.cmd.Stderr = &p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.Stop()
		out := p.out.String()
		// A panic anywhere fails the test that saw it, with the stack: a daemon
		// that panics mid-run may leave counts a test would take for a fault's.
		if i := panicAt(out); i >= 0 {
			t.Errorf("%s %s panicked:\n%s", p.name, strings.Join(args, " "), out[i:])
		}
		if t.Failed() {
			t.Logf("output of %s %s:\n%s", p.name, strings.Join(args, " "), out)
		}
	})
	return p
}

// panicAt is where a Go program's output says it panicked or died of a fatal
// runtime error, or -1.
func panicAt(out string) int {
	for _, s := range []string{"panic: ", "fatal error: "} {
		if strings.HasPrefix(out, s) {
			return 0
		}
		if i := strings.Index(out, "\n"+s); i >= 0 {
			return i + 1
		}
	}
	return -1
}

// Stop sends SIGTERM, waits up to 10 s for the process to exit, then kills it, and
// returns its exit error (nil for exit status 0).
func (p *Process) Stop() error {
	select {
	case <-p.done:
		return p.err
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	return p.err
}

// PID is the process's id, to read its /proc entries or send it a signal.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Signal sends sig to the process.
func (p *Process) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// Kill kills the process at once and waits for it.
func (p *Process) Kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

// Freeze stops the process (SIGSTOP) without ending it: its connections stay open and
// what is sent to it waits, unanswered, as on a machine that has hung.
func (p *Process) Freeze() {
	p.t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		p.t.Fatalf("freeze %s: %v", p.name, err)
	}
}

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Err is the process's exit error, once Done is closed.
func (p *Process) Err() error { <-p.done; return p.err }

// Output is everything the process wrote to stdout and stderr so far.
func (p *Process) Output() string { return p.out.String() }

// WaitOutput waits until the process's output contains s, failing the test after
// timeout or if the process exits first.
func (p *Process) WaitOutput(s string, timeout time.Duration) {
	p.t.Helper()
	deadline := time.Now().Add(timeout)
	for !strings.Contains(p.out.String(), s) {
		select {
		case <-p.done:
			if strings.Contains(p.out.String(), s) {
				return
			}
			p.t.Fatalf("%s exited (%v) before writing %q; output:\n%s", p.name, p.err, s, p.out.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("%s did not write %q within %v; output:\n%s", p.name, s, timeout, p.out.String())
		}
	}
}

// NATSOptions configures an external nats-server. At most one of Token and User is
// used.
type NATSOptions struct {
	Token          string
	User, Password string
	// Config is a configuration file (-c); the address, port and name given here
	// win over its own. Variables it takes from the environment come from the
	// test's (t.Setenv).
	Config string
	// JetStream turns JetStream on (-js), with its store in StoreDir (a temporary
	// directory of the test's when empty).
	JetStream bool
	StoreDir  string
	// Port is the client port; a free one when 0 (a test that starts a client
	// before its server picks one with FreePort).
	Port int
	// Name is the server's name, "proctest" when empty; the nodes of a JetStream
	// cluster need each their own.
	Name string
	// Cluster makes the server a node of a cluster: it listens for routes on
	// ClusterPort (loopback) and solicits Routes (nats-route://HOST:PORT URLs).
	Cluster     string
	ClusterPort int
	Routes      []string
}

// NATSServer is an external nats-server process on a loopback port.
type NATSServer struct {
	t    testing.TB
	opts NATSOptions
	Port int
	proc *Process
}

// StartNATS starts a nats-server process on a free loopback port and waits until it
// accepts connections. It is stopped when the test ends.
func StartNATS(t testing.TB, opts NATSOptions) *NATSServer {
	t.Helper()
	s := &NATSServer{t: t, opts: opts, Port: opts.Port}
	if s.Port == 0 {
		s.Port = FreePort(t)
	}
	s.start()
	return s
}

// URL is the server's client URL, without credentials.
func (s *NATSServer) URL() string { return "nats://" + s.Addr() }

// Addr is the server's HOST:PORT.
func (s *NATSServer) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port)) }

func (s *NATSServer) start() {
	s.t.Helper()
	name := s.opts.Name
	if name == "" {
		name = "proctest"
	}
	args := []string{"-a", "127.0.0.1", "-p", strconv.Itoa(s.Port), "-n", name}
	if s.opts.Cluster != "" {
		args = append(args, "--cluster_name", s.opts.Cluster,
			"--cluster", "nats://127.0.0.1:"+strconv.Itoa(s.opts.ClusterPort), "--routes", strings.Join(s.opts.Routes, ","))
	}
	if s.opts.Config != "" {
		args = append(args, "-c", s.opts.Config)
	}
	switch {
	case s.opts.Token != "":
		args = append(args, "--auth", s.opts.Token)
	case s.opts.User != "":
		args = append(args, "--user", s.opts.User, "--pass", s.opts.Password)
	}
	if s.opts.JetStream {
		if s.opts.StoreDir == "" {
			s.opts.StoreDir = s.t.TempDir()
		}
		args = append(args, "-js", "-sd", s.opts.StoreDir)
	}
	s.proc = Start(s.t, NATSServerBinary(s.t), args...)
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", s.Addr(), time.Second)
		if err == nil {
			c.Close()
			return
		}
		select {
		case <-s.proc.Done():
			s.t.Fatalf("nats-server on port %d exited: %v\n%s", s.Port, s.proc.Err(), s.proc.Output())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("nats-server does not accept connections on %s: %v", s.Addr(), err)
		}
	}
}

// PID is the server process's id (since its last start).
func (s *NATSServer) PID() int { return s.proc.PID() }

// Output is what the server logged so far (since its last start).
func (s *NATSServer) Output() string { return s.proc.Output() }

// Stop stops the server process and waits until it has exited.
func (s *NATSServer) Stop() {
	s.t.Helper()
	_ = s.proc.Stop()
}

// Kill kills the server process (SIGKILL) and waits until it has exited: its
// clients' connections are cut without a goodbye.
func (s *NATSServer) Kill() {
	s.t.Helper()
	s.proc.Kill()
}

// Restart stops the server and starts it again on the same port.
func (s *NATSServer) Restart() {
	s.t.Helper()
	s.Stop()
	s.start()
}

// Start starts a stopped server again on the same port.
func (s *NATSServer) Start() {
	s.t.Helper()
	s.start()
}

// givenPorts are the ports FreePort handed out in this process: free until their
// process binds them, so a second call could get the first's (CI: a hub given one
// port for its clients and its leaves, "bind: address already in use").
var givenPorts sync.Map

// FreePort returns a loopback TCP port that was free a moment ago, below the
// kernel's ephemeral range when it can: the kernel hands ports of that range to
// every ":0" listener and outgoing connection on the machine, and under CI's load
// stage one such port was taken before the nats-server it was for could listen on
// it ("bind: address already in use", TestLeagueNATSServerClusterHubFault).
func FreePort(t testing.TB) int {
	t.Helper()
	if low := ephemeralLow(); low > 10000+1000 {
		for range 100 {
			port := 10000 + rand.IntN(low-10000)
			if _, given := givenPorts.LoadOrStore(port, true); given {
				continue
			}
			if l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port))); err == nil {
				l.Close()
				return port
			}
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// ephemeralLow is the first port of Linux's ephemeral range, 0 when unknown.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	low, _ := strconv.Atoi(f[0])
	return low
}

// WaitTCP waits until addr accepts TCP connections, failing the test after timeout.
func WaitTCP(t testing.TB, addr string, timeout time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var d net.Dialer
	for {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			c.Close()
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s does not accept connections after %v: %v", addr, timeout, err)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// Buffer is a bytes.Buffer safe for concurrent writes (a process's output, a logger)
// and the test's reads.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// CPUTime is the CPU time (user and system) this process has used so far: benchmarks
// report it per op beside the wall time, which on a shared machine says more about
// the other processes than about the code measured.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Gather sends a request on subject that every instance of something answers (a
// NATS micro service's $SRV subjects) and returns the answers: it waits up to
// patience for each of the first want, then a short while for any more; with want
// 0, until the answers stop for that short while.
func Gather(t testing.TB, nc *nats.Conn, subject string, want int, patience time.Duration) [][]byte {
	t.Helper()
	inbox := nats.NewInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := nc.PublishRequest(subject, inbox, nil); err != nil {
		t.Fatal(err)
	}
	var all [][]byte
	for {
		wait := patience
		if len(all) >= want {
			wait = 300 * time.Millisecond
		}
		msg, err := sub.NextMsg(wait)
		if err != nil {
			return all
		}
		all = append(all, msg.Data)
	}
}
