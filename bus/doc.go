// Package bus is the scoreboard's NATS side: the embedded server and its options,
// connections with their reconnect and credentials, the subjects and headers of
// dumps, results and solve requests (docs/bus.md), the roles and their rights
// (daemon, worker, tool), and a club's link to a league hub.
//
// It knows the wire, not the work: the workers (package worker), the ports (package
// daemon) and the history (package history) use it.
package bus
