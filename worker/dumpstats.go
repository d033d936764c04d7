package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/goclub/scoreboard/bus"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"github.com/nats-io/nuid"
)

// The dumps are an instance of the scoreboard micro service of their own, answered
// here rather than by nats.go's micro package: micro counts a request around a
// handler that returns once the work is done, on its endpoint's one subscription
// goroutine. The dumps are taken by a callback that never waits and solved by a
// pool behind per-port queues (dumpqueue.go), which that model cannot see: solving
// inside micro's handler would solve one dump at a time and give up the ports'
// fairness, and a handler that only queues would count microseconds of intake and
// no bad unit. So the workers count (dumpCounts) and this instance reports those
// counts in micro's own types, on micro's subjects, for `nats micro stats`.

// dumpsEndpoint is the name of the dumps' endpoint in $SRV.INFO and $SRV.STATS.
const dumpsEndpoint = "dumps"

// Metadata keys linking a process's two instances of the service.
const (
	// MetaDumps, on the solve endpoints' instance: the id of its dumps' instance.
	MetaDumps = "dumps"
	// MetaWorker, on the dumps' instance: the id of the solve endpoints' instance,
	// which is the worker field of the results.
	MetaWorker = "worker"
)

// dumpService answers $SRV.PING, $SRV.INFO and $SRV.STATS (every form: all services,
// the service, the instance) for the dumps' instance.
type dumpService struct {
	id       string
	ident    micro.ServiceIdentity
	endpoint micro.EndpointInfo
	started  time.Time
	counts   *dumpCounts
	ping     []byte
	info     []byte
	subs     []*nats.Subscription
}

// newDumpServiceID is the id of a dumps' instance, in the form micro gives its own.
func newDumpServiceID() string { return nuid.Next() }

func startDumpService(nc *nats.Conn, id, version, worker string, subj bus.Subjects, counts *dumpCounts) (*dumpService, error) {
	d := &dumpService{
		id: id,
		ident: micro.ServiceIdentity{
			Name: bus.ServiceName, ID: id, Version: version,
			Metadata: map[string]string{MetaWorker: worker},
		},
		endpoint: micro.EndpointInfo{Name: dumpsEndpoint, Subject: subj.AllDumps(), QueueGroup: bus.QueueGroup},
		started:  time.Now().UTC(),
		counts:   counts,
	}
	var err error
	if d.ping, err = json.Marshal(micro.Ping{ServiceIdentity: d.ident, Type: micro.PingResponseType}); err != nil {
		return nil, err
	}
	if d.info, err = json.Marshal(micro.Info{
		ServiceIdentity: d.ident, Type: micro.InfoResponseType,
		Description: "Go club scoreboard: the ports' dumps, solved by the workers of instance " + worker,
		Endpoints:   []micro.EndpointInfo{d.endpoint},
	}); err != nil {
		return nil, err
	}
	// Every instance answers (no queue group), as micro's do.
	for _, s := range []string{micro.APIPrefix + ".*", micro.APIPrefix + ".*." + bus.ServiceName, micro.APIPrefix + ".*." + bus.ServiceName + "." + id} {
		sub, err := nc.Subscribe(s, d.answer)
		if err != nil {
			d.stop()
			return nil, fmt.Errorf("subscribe to %s: %w", s, err)
		}
		d.subs = append(d.subs, sub)
	}
	return d, nil
}

func (d *dumpService) answer(msg *nats.Msg) {
	if msg.Reply == "" {
		return
	}
	verb := strings.Split(msg.Subject, ".")[1]
	var data []byte
	switch verb {
	case micro.PingVerb.String():
		data = d.ping
	case micro.InfoVerb.String():
		data = d.info
	case micro.StatsVerb.String():
		data, _ = json.Marshal(d.stats())
	default:
		return // a verb of a later protocol: micro's own instances ignore it too
	}
	_ = msg.Respond(data) // the requester times out, as with a lost reply
}

// stats are the dumps' endpoint's stats: a request is a dump answered (or dropped
// when its port's queue was full), an error one answered with an error result (a
// bad unit, an oversize dump, one dropped or not solved before a stop), and the
// processing time the solvers' time on them.
func (d *dumpService) stats() micro.Stats {
	c := d.counts
	counts := c.load()
	errs := counts.Bad + counts.Oversize + counts.Shed + counts.Stopping
	e := &micro.EndpointStats{
		Name: d.endpoint.Name, Subject: d.endpoint.Subject, QueueGroup: d.endpoint.QueueGroup,
		NumRequests:    int(counts.Solved + errs),
		NumErrors:      int(errs),
		ProcessingTime: time.Duration(c.solveNanos.Load()),
	}
	if e.NumRequests > 0 {
		e.AverageProcessingTime = e.ProcessingTime / time.Duration(e.NumRequests)
	}
	if last := c.lastError.Load(); last != nil {
		e.LastError = *last
	}
	e.Data, _ = json.Marshal(counts)
	return micro.Stats{ServiceIdentity: d.ident, Type: micro.StatsResponseType, Started: d.started, Endpoints: []*micro.EndpointStats{e}}
}

func (d *dumpService) stop() error {
	var errs []error
	for _, sub := range d.subs {
		if err := sub.Unsubscribe(); err != nil && !errors.Is(err, nats.ErrConnectionClosed) && !errors.Is(err, nats.ErrBadSubscription) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// PingSolver sends a ping on subject ($SRV.PING.scoreboard, or an instance's) and
// waits until a solve endpoints' instance answers it, or ctx ends. A dumps' instance
// answering is not enough: it answers on a connection of its own, which can be up
// while the worker's connection, the one that takes the dumps, is not.
func PingSolver(ctx context.Context, nc *nats.Conn, subject string) error {
	inbox := nc.NewInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		return err
	}
	defer sub.Unsubscribe()
	if err := nc.PublishRequest(subject, inbox, nil); err != nil {
		return err
	}
	for {
		m, err := sub.NextMsgWithContext(ctx)
		if err != nil {
			return err
		}
		var p micro.Ping
		if json.Unmarshal(m.Data, &p) == nil && p.Name == bus.ServiceName && p.Metadata[MetaWorker] == "" {
			return nil
		}
	}
}
