package bus

import (
	"github.com/nats-io/nats-server/v2/server"
)

// The roles on the bus, enforced by the NATS server itself (the embedded one, or an
// external one configured as configs/nats-server.conf says):
//
//   - the daemon: every right. Its parts connect in-process to the embedded server.
//   - a worker (`scoreboard work`, with the worker credentials, and the daemon's own
//     workers on its embedded server): takes dumps and solve requests in QueueGroup,
//     publishes results, answers on an inbox (_INBOX.>, where every requester of the
//     project waits), and serves $SRV. Not allow_responses: nats-server lets a
//     client answer on any reply subject of a message it received, its deny list
//     notwithstanding (pubAllowedFullCheck in v2.15.2's server/client.go), so a tool
//     could name the history's subjects ($KV, $JS, the repair and results subjects)
//     as a dump's reply subject and have a worker write there.
//   - a tool (no credentials, on a loopback listener): sends solve requests, publishes
//     dumps, reads everything under the prefix, $SRV and the history (JetStream, read
//     only). It may not publish results, answer anything, join QueueGroup, write
//     the history (nor on the Repair subjects, which a replicated history stores),
//     or load pairings.
//   - the organiser (the password of the daemon's organiser file, organiser.go, from
//     loopback): requests a pairings load and takes its answer on an inbox; nothing
//     else.
//
// A port's display writer takes its answers only from the reply subjects of its own
// dumps, under an inbox of its own: a tool cannot publish there, and a worker can
// only answer a message it received.

// QueueGroup is the queue group every worker joins, on the solve endpoints and on the
// dumps, so that each request or dump is served by one worker among all processes.
const QueueGroup = "scoreboard-workers"

// Role names: the users of configs/nats-server.conf, and the user names the embedded
// server gives its clients.
const (
	RoleDaemon = "daemon"
	RoleWorker = "worker"
	RoleTool   = "tool"
	// RoleOrganiser loads the club's pairings (scoreboard pairings load).
	RoleOrganiser = "organiser"
)

// WorkerPermissions are the rights of a worker under the prefix of s.
func WorkerPermissions(s Subjects) *server.Permissions {
	return &server.Permissions{
		Publish: &server.SubjectPermission{
			Allow: []string{s.AllResults(), "$SRV.>", InboxPrefix + ">"},
		},
		Subscribe: &server.SubjectPermission{
			Allow: []string{
				s.AllDumps() + " " + QueueGroup,
				s.Prefix + ".solve.* " + QueueGroup,
				"$SRV.>",
				"_INBOX.>",
			},
		},
	}
}

// ToolPermissions are the rights of a client without credentials under the prefix of
// s: request solve endpoints, publish dumps, read everything under the prefix and
// $SRV, and read the history stream and the boards and pairings buckets (JetStream's
// read-only API: stream info, message and direct gets, ephemeral consumers and their
// flow control). It may not ask the daemon to load a round of pairings: that puts
// names on the club's TV, the organiser's alone (OrganiserPermissions).
func ToolPermissions(s Subjects) *server.Permissions {
	pub := []string{
		s.Prefix + ".solve.*",
		s.Prefix + ".dump.>",
		"$SRV.>",
		"$JS.API.INFO",
		"$JS.API.STREAM.NAMES",
		"$JS.API.STREAM.LIST",
	}
	for _, stream := range []string{s.Stream(), "KV_" + s.Boards(), "KV_" + s.Pairings()} {
		pub = append(pub,
			"$JS.API.STREAM.INFO."+stream,
			"$JS.API.STREAM.MSG.GET."+stream,
			"$JS.API.DIRECT.GET."+stream,
			"$JS.API.DIRECT.GET."+stream+".>",
			"$JS.API.CONSUMER.CREATE."+stream,
			"$JS.API.CONSUMER.CREATE."+stream+".>",
			"$JS.API.CONSUMER.INFO."+stream+".*",
			"$JS.API.CONSUMER.DELETE."+stream+".*",
			"$JS.API.CONSUMER.MSG.NEXT."+stream+".*",
			"$JS.API.CONSUMER.NAMES."+stream,
			"$JS.API.CONSUMER.LIST."+stream,
			"$JS.FC."+stream+".>",
		)
	}
	return &server.Permissions{
		Publish: &server.SubjectPermission{
			Allow: pub,
			// Outside the allow list anyway; said again so that a broader allow list
			// can never let a tool answer a port, or put a result in the history.
			Deny: []string{s.AllResults(), s.AllRepairs(), "_INBOX.>"},
		},
		Subscribe: &server.SubjectPermission{
			Allow: []string{s.Prefix + ".>", "_INBOX.>", "$SRV.>"},
			Deny:  []string{"> " + QueueGroup},
		},
	}
}

// OrganiserPermissions are the organiser's rights: request a pairings load
// (PairingsLoad; the daemon checks the round and writes its bucket) and take the
// answer on an inbox. What a tool reads, the organiser reads as a tool.
func OrganiserPermissions(s Subjects) *server.Permissions {
	return &server.Permissions{
		Publish: &server.SubjectPermission{
			Allow: []string{s.PairingsLoad()},
			Deny:  []string{s.AllResults(), s.AllRepairs(), "_INBOX.>"},
		},
		Subscribe: &server.SubjectPermission{Allow: []string{"_INBOX.>"}},
	}
}
