package bus_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nats.go/micro"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/proctest"
	"github.com/goclub/scoreboard/worker"
)

const confFile = "../configs/nats-server.conf"

// setConfEnv sets the passwords configs/nats-server.conf takes from the environment.
func setConfEnv(t *testing.T) (daemonPW, workerPW string) {
	daemonPW, workerPW = "daemon-pw-"+bus.NewOrigin(), "worker-pw-"+bus.NewOrigin()
	t.Setenv("SCOREBOARD_DAEMON_PASSWORD", daemonPW)
	t.Setenv("SCOREBOARD_WORKER_PASSWORD", workerPW)
	t.Setenv("SCOREBOARD_ORGANISER_PASSWORD", "organiser-pw-"+bus.NewOrigin())
	return daemonPW, workerPW
}

// The example configuration for an external server gives exactly the rights the
// embedded server gives: they cannot drift apart.
func TestRolesConfMatchesBuilder(t *testing.T) {
	setConfEnv(t)
	opts, err := server.ProcessConfigFile(confFile)
	if err != nil {
		t.Fatal(err)
	}
	if opts.NoAuthUser != bus.RoleTool {
		t.Errorf("no_auth_user %q, want %q", opts.NoAuthUser, bus.RoleTool)
	}
	if !opts.JetStream {
		t.Error("jetstream is not enabled")
	}
	s := bus.Subjects{Prefix: bus.DefaultPrefix}
	want := map[string]*server.Permissions{
		bus.RoleDaemon:    nil,
		bus.RoleWorker:    bus.WorkerPermissions(s),
		bus.RoleTool:      bus.ToolPermissions(s),
		bus.RoleOrganiser: bus.OrganiserPermissions(s),
	}
	var users []string
	for _, u := range opts.Users {
		users = append(users, u.Username)
		w, ok := want[u.Username]
		if !ok {
			t.Errorf("user %q is no role", u.Username)
			continue
		}
		if d := permsDiff(u.Permissions, w); d != "" {
			t.Errorf("user %s: the file and bus/roles.go differ: %s", u.Username, d)
		}
	}
	if slices.Sort(users); !slices.Equal(users, []string{bus.RoleDaemon, bus.RoleOrganiser, bus.RoleTool, bus.RoleWorker}) {
		t.Errorf("users %v, want daemon, organiser, tool and worker", users)
	}
}

func permsDiff(got, want *server.Permissions) string {
	if got == nil || want == nil {
		if got != want {
			return "one has no permissions (every right), the other has some"
		}
		return ""
	}
	var d []string
	set := func(name string, g, w *server.SubjectPermission) {
		var ga, gd, wa, wd []string
		if g != nil {
			ga, gd = g.Allow, g.Deny
		}
		if w != nil {
			wa, wd = w.Allow, w.Deny
		}
		for _, c := range []struct {
			what string
			g, w []string
		}{{name + " allow", ga, wa}, {name + " deny", gd, wd}} {
			g, w := slices.Sorted(slices.Values(c.g)), slices.Sorted(slices.Values(c.w))
			if !slices.Equal(g, w) {
				d = append(d, c.what+": file "+strings.Join(g, ", ")+"; roles.go "+strings.Join(w, ", "))
			}
		}
	}
	set("publish", got.Publish, want.Publish)
	set("subscribe", got.Subscribe, want.Subscribe)
	switch g, w := got.Response, want.Response; {
	case (g == nil) != (w == nil):
		d = append(d, "allow_responses in one only")
	case g != nil && (g.MaxMsgs != w.MaxMsgs || g.Expires != w.Expires):
		d = append(d, "allow_responses differ")
	}
	return strings.Join(d, "; ")
}

// roleConn connects with opts, collecting the server's asynchronous errors
// (permission violations) on the returned channel.
func roleConn(t *testing.T, url string, opts ...nats.Option) (*nats.Conn, chan error) {
	t.Helper()
	errs := make(chan error, 64)
	opts = append(opts, nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		select {
		case errs <- err:
		default:
		}
	}))
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc, errs
}

// refused waits for the server to report a permission violation naming subject.
func refused(t *testing.T, errs chan error, what, subject string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case err := <-errs:
			if strings.Contains(strings.ToLower(err.Error()), "permissions violation") && strings.Contains(err.Error(), subject) {
				return
			}
		case <-deadline:
			t.Errorf("%s: no permissions violation for %q within 10s", what, subject)
			return
		}
	}
}

// recv subscribes sub on nc and returns its channel, once the server has it.
func recv(t *testing.T, nc *nats.Conn, subject string) chan *nats.Msg {
	t.Helper()
	ch := make(chan *nats.Msg, 64)
	if _, err := nc.ChanSubscribe(subject, ch); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return ch
}

// next waits for the next message on ch, or fails.
func next(t *testing.T, ch chan *nats.Msg, what string) *nats.Msg {
	t.Helper()
	select {
	case m := <-ch:
		return m
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: nothing came within 10s", what)
		return nil
	}
}

// checkCoreRoles runs what a tool and a worker may and may not do on the core
// subjects, watched by the daemon's connection, which has every right.
func checkCoreRoles(t *testing.T, daemon, worker, tool *nats.Conn, workerErrs, toolErrs chan error) {
	t.Helper()
	s := bus.Subjects{Prefix: bus.DefaultPrefix}
	dumps := recv(t, daemon, s.AllDumps())
	results := recv(t, daemon, s.AllResults())
	inbox := nats.NewInbox()
	answers := recv(t, daemon, inbox+".*")

	// A tool publishes a dump: the daemon gets it.
	if err := tool.Publish(s.Dump("goscore", "desk"), []byte("unit")); err != nil {
		t.Fatal(err)
	}
	if m := next(t, dumps, "a tool's dump"); string(m.Data) != "unit" {
		t.Errorf("dump %q", m.Data)
	}

	// A tool publishes a result, one for a replicated history's repair, and on an
	// inbox: refused; the daemon sees none, only the dump published after them.
	for _, subj := range []string{s.Result("goscore", "desk"), s.Repair(s.Result("goscore", "desk")), inbox + ".1"} {
		if err := tool.Publish(subj, []byte("5 3\n")); err != nil {
			t.Fatal(err)
		}
		refused(t, toolErrs, "a tool publishing on "+subj, subj)
	}
	if err := tool.Publish(s.Dump("goscore", "desk"), []byte("after")); err != nil {
		t.Fatal(err)
	}
	if m := next(t, dumps, "a tool's dump"); string(m.Data) != "after" {
		t.Errorf("dump %q", m.Data)
	}
	if len(results) != 0 || len(answers) != 0 {
		t.Errorf("a tool's forbidden result reached the daemon: %d results, %d answers", len(results), len(answers))
	}

	// A tool joining the workers' queue group, on the dumps or a solve endpoint, or on
	// everything: refused.
	for _, subj := range []string{s.AllDumps(), s.Solve("goscore"), ">"} {
		if _, err := tool.QueueSubscribe(subj, bus.QueueGroup, func(*nats.Msg) {}); err != nil {
			t.Fatal(err)
		}
		refused(t, toolErrs, "a tool joining "+bus.QueueGroup+" on "+subj, subj)
	}

	// A worker takes the dumps in the queue group, one subscription a problem as the
	// workers subscribe (within the role's scoreboard.dump.*.*), and answers on their
	// reply subject; it publishes results; a tool reads them.
	toolResults := recv(t, tool, s.AllResults())
	wsub, err := worker.QueueSubscribe(s.Dump("goscore", "*"), bus.QueueGroup, func(m *nats.Msg) {
		_ = worker.Publish(s.Result("goscore", "desk"), []byte("result"))
		_ = m.Respond([]byte("answer"))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := worker.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := daemon.PublishRequest(s.Dump("goscore", "desk"), inbox+".7", []byte("unit")); err != nil {
		t.Fatal(err)
	}
	if m := next(t, answers, "the worker's answer"); string(m.Data) != "answer" || m.Subject != inbox+".7" {
		t.Errorf("answer %q on %s", m.Data, m.Subject)
	}
	next(t, results, "the worker's result")
	if m := next(t, toolResults, "a result, read by a tool"); string(m.Data) != "result" {
		t.Errorf("result %q", m.Data)
	}
	_ = wsub.Unsubscribe()

	// A worker answering a dump whose reply subject is one of the daemon's own (a
	// tool names it): refused by the server, though it received the dump (no
	// allow_responses: it would let it through, the deny lists notwithstanding).
	// An inbox it may publish on: the display's checks (origin, seq, digest) stand
	// there.
	for _, reply := range []string{"$KV.SCOREBOARD_BOARDS.desk", "$JS.API.STREAM.PURGE.SCOREBOARD", s.Repair(s.Result("goscore", "desk")), s.Dump("goscore", "desk")} {
		got := make(chan error, 1)
		wsub, err := worker.QueueSubscribe(s.Dump("goscore", "*"), bus.QueueGroup, func(m *nats.Msg) { got <- m.Respond([]byte("forged")) })
		if err != nil {
			t.Fatal(err)
		}
		if err := worker.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := tool.PublishRequest(s.Dump("goscore", "desk"), reply, []byte("unit")); err != nil {
			t.Fatal(err)
		}
		select {
		case <-got:
		case <-time.After(10 * time.Second):
			t.Fatalf("the worker took no dump with reply %s", reply)
		}
		refused(t, workerErrs, "a worker answering on "+reply, reply)
		_ = wsub.Unsubscribe()
	}

	// A tool's solve request is answered by the worker of the queue group.
	if _, err := worker.QueueSubscribe(s.Solve("goscore"), bus.QueueGroup, func(m *nats.Msg) { _ = m.Respond([]byte("5 3\n")) }); err != nil {
		t.Fatal(err)
	}
	if err := worker.Flush(); err != nil {
		t.Fatal(err)
	}
	if m, err := tool.Request(s.Solve("goscore"), []byte("board"), 10*time.Second); err != nil || string(m.Data) != "5 3\n" {
		t.Errorf("a tool's solve request: %v", err)
	}
	if len(answers) != 0 {
		t.Errorf("%d forbidden answers reached the daemon's inbox", len(answers))
	}
}

// The embedded server: in-process clients have every right, a listener's client
// with the worker credentials is a worker, one without is a tool.
func TestRolesEmbedded(t *testing.T) {
	srv := bustest.Start(t, bustest.Options{Workers: true})
	daemon, _ := roleConn(t, "", nats.InProcessServer(srv.NATS()))
	worker, workerErrs := roleConn(t, srv.ClientURL(), nats.Token(bustest.WorkerToken))
	tool, toolErrs := roleConn(t, srv.ClientURL())
	checkCoreRoles(t, daemon, worker, tool, workerErrs, toolErrs)
}

// Beyond loopback the embedded listener lets in no client without credentials: a
// tool's rights are for the machine's own users.
func TestRolesEmbeddedBeyondLoopback(t *testing.T) {
	srv := bustest.Start(t, bustest.Options{Listen: "0.0.0.0:0", Workers: true})
	url := strings.Replace(srv.ClientURL(), "0.0.0.0", "127.0.0.1", 1)
	if nc, err := nats.Connect(url); err == nil {
		nc.Close()
		t.Fatal("a client without credentials was let in on a listener beyond loopback")
	} else if !errors.Is(err, nats.ErrAuthorization) {
		t.Errorf("refused with %v, want an authorization violation", err)
	}
	nc, err := nats.Connect(url, nats.Token(bustest.WorkerToken))
	if err != nil {
		t.Fatalf("the worker credentials: %v", err)
	}
	nc.Close()
}

// A real nats-server with configs/nats-server.conf: the same roles, and a tool reads
// the history (stream and bucket) the daemon writes, and cannot write it.
func TestRolesExternalConf(t *testing.T) {
	daemonPW, workerPW := setConfEnv(t)
	// The file as shipped, but for where JetStream keeps its store.
	data, err := os.ReadFile(confFile)
	if err != nil {
		t.Fatal(err)
	}
	const store = `store_dir: "/var/lib/nats"`
	if !bytes.Contains(data, []byte(store)) {
		t.Fatalf("%s has no %s line", confFile, store)
	}
	conf := filepath.Join(t.TempDir(), "nats-server.conf")
	data = bytes.Replace(data, []byte(store), fmt.Appendf(nil, "store_dir: %q", t.TempDir()), 1)
	if err := os.WriteFile(conf, data, 0o600); err != nil {
		t.Fatal(err)
	}
	ns := proctest.StartNATS(t, proctest.NATSOptions{Config: conf})
	daemon, _ := roleConn(t, ns.URL(), nats.UserInfo(bus.RoleDaemon, daemonPW))
	worker, workerErrs := roleConn(t, ns.URL(), nats.UserInfo(bus.RoleWorker, workerPW))
	tool, toolErrs := roleConn(t, ns.URL())
	if _, err := nats.Connect(ns.URL(), nats.UserInfo(bus.RoleWorker, "wrong")); err == nil {
		t.Error("a worker with a wrong password was let in")
	}
	checkCoreRoles(t, daemon, worker, tool, workerErrs, toolErrs)
	od, _ := roleConn(t, ns.URL(), nats.UserInfo(bus.RoleDaemon, daemonPW))
	checkOrganiserRole(t, od, ns.URL(), nats.UserInfo(bus.RoleOrganiser, os.Getenv("SCOREBOARD_ORGANISER_PASSWORD")))

	// The daemon writes the history.
	s := bus.Subjects{Prefix: bus.DefaultPrefix}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	djs, err := jetstream.New(daemon)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := djs.CreateStream(ctx, jetstream.StreamConfig{
		Name: s.Stream(), Subjects: []string{s.AllResults()}, AllowDirect: true,
	}); err != nil {
		t.Fatal(err)
	}
	dkv, err := djs.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: s.Boards()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := djs.Publish(ctx, s.Result("goscore", "hall"), []byte(`{"answer":"5 3\n"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := dkv.Put(ctx, "hall", []byte(`{"answer":"5 3\n"}`)); err != nil {
		t.Fatal(err)
	}

	// The tool reads it: stream info, a message, an ordered consumer; the bucket's
	// key, and a watch.
	tjs, err := jetstream.New(tool)
	if err != nil {
		t.Fatal(err)
	}
	st, err := tjs.Stream(ctx, s.Stream())
	if err != nil {
		t.Fatalf("a tool's stream info: %v", err)
	}
	if m, err := st.GetMsg(ctx, 1); err != nil || !strings.Contains(string(m.Data), "5 3") {
		t.Errorf("a tool's message get: %v", err)
	}
	if m, err := st.GetLastMsgForSubject(ctx, s.Result("goscore", "hall")); err != nil || !strings.Contains(string(m.Data), "5 3") {
		t.Errorf("a tool's direct get: %v", err)
	}
	oc, err := st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatalf("a tool's ordered consumer: %v", err)
	}
	if m, err := oc.Next(jetstream.FetchMaxWait(10 * time.Second)); err != nil || !strings.Contains(string(m.Data()), "5 3") {
		t.Errorf("a tool's ordered consumer's first message: %v", err)
	}
	tkv, err := tjs.KeyValue(ctx, s.Boards())
	if err != nil {
		t.Fatalf("a tool's bucket: %v", err)
	}
	if e, err := tkv.Get(ctx, "hall"); err != nil || !strings.Contains(string(e.Value()), "5 3") {
		t.Errorf("a tool's kv get: %v", err)
	}
	w, err := tkv.Watch(ctx, "hall")
	if err != nil {
		t.Fatalf("a tool's kv watch: %v", err)
	}
	select {
	case e := <-w.Updates():
		if e == nil || !strings.Contains(string(e.Value()), "5 3") {
			t.Errorf("a tool's kv watch: %v", e)
		}
	case <-time.After(10 * time.Second):
		t.Error("a tool's kv watch: nothing within 10s")
	}
	_ = w.Stop()

	// The tool cannot write it: each attempt fails, and the history is unchanged.
	short := func() (context.Context, context.CancelFunc) { return context.WithTimeout(ctx, 2*time.Second) }
	for _, c := range []struct {
		what string
		do   func(context.Context) error
	}{
		{"create a stream", func(ctx context.Context) error {
			_, err := tjs.CreateStream(ctx, jetstream.StreamConfig{Name: "ROGUE", Subjects: []string{"rogue.>"}})
			return err
		}},
		{"update the stream", func(ctx context.Context) error {
			_, err := tjs.UpdateStream(ctx, jetstream.StreamConfig{Name: s.Stream(), Subjects: []string{">"}})
			return err
		}},
		{"purge the stream", func(ctx context.Context) error { return st.Purge(ctx) }},
		{"delete a message", func(ctx context.Context) error { return st.DeleteMsg(ctx, 1) }},
		{"delete the stream", func(ctx context.Context) error { return tjs.DeleteStream(ctx, s.Stream()) }},
		{"put a key", func(ctx context.Context) error { _, err := tkv.Put(ctx, "hall", []byte("forged")); return err }},
		{"delete a key", func(ctx context.Context) error { return tkv.Delete(ctx, "hall") }},
		{"delete the bucket", func(ctx context.Context) error { return tjs.DeleteKeyValue(ctx, s.Boards()) }},
	} {
		sctx, scancel := short()
		if err := c.do(sctx); err == nil {
			t.Errorf("a tool could %s", c.what)
		}
		scancel()
	}
	if info, err := djs.Stream(ctx, s.Stream()); err != nil || info.CachedInfo().State.Msgs != 1 {
		t.Errorf("the stream after the tool's attempts: %v", err)
	}
	if e, err := dkv.Get(ctx, "hall"); err != nil || !strings.Contains(string(e.Value()), "5 3") {
		t.Errorf("the bucket after the tool's attempts: %v", err)
	}
}

// Under the worker role a connection answers a message once: the workers are one
// instance of the service, on the one connection that takes the dumps, and it
// answers every $SRV request once, with the dumps in its stats.
func TestRolesWorkerServesItsInstance(t *testing.T) {
	srv, err := bus.StartServerWith(bus.ServerOptions{Listen: "127.0.0.1:0", Token: "worker-t0ken"}, bustest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	wnc, workerErrs := roleConn(t, srv.ClientURL(), nats.Token("worker-t0ken"))
	tool, _ := roleConn(t, srv.ClientURL())
	w := bustest.StartWorkers(t, wnc, worker.Options{}, bustest.Logger(t))
	for _, verb := range []string{"PING", "INFO", "STATS"} {
		var ids []string
		// Gather waits a moment for a second answer, which must not come.
		for _, data := range proctest.Gather(t, tool, "$SRV."+verb+".scoreboard", 1, 10*time.Second) {
			var id micro.ServiceIdentity
			if err := json.Unmarshal(data, &id); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id.ID)
		}
		if len(ids) != 1 || ids[0] != w.ID() {
			t.Errorf("$SRV.%s.scoreboard answered by %v, want %s once", verb, ids, w.ID())
		}
	}
	select {
	case err := <-workerErrs:
		t.Errorf("the worker's connection was refused: %v", err)
	default:
	}
}
