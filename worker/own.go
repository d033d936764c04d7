package worker

import "github.com/nats-io/nats.go"

// TakeOwn takes a dump of this process's own ports that did not come through the
// queue group: a port's last attempt (daemon.Config.Own). A client with the worker
// credentials may hold any number of subscriptions in the group on a port's dump
// subject, and the server hands each dump to one of them: it could take every
// attempt of every unit of the port and answer none (review F13). Taken here, the
// dump is queued, solved and answered (on its reply subject, from the workers'
// connection) as one from the bus, its result published the same. It reports false
// for a dump of a problem these workers do not serve.
func (w *Workers) TakeOwn(m *nats.Msg) bool {
	problem, _, err := w.subj.ParseDump(m.Subject)
	sub := w.dumpOf[problem]
	if err != nil || sub == nil {
		return false
	}
	m.Sub = sub // its reply goes out on the subscription's connection, the workers'
	w.takeDump(m)
	return true
}
