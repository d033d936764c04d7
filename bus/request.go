package bus

import (
	"strings"

	"github.com/nats-io/nats.go"
)

// RequestRefusal says why a request that an endpoint serves with its own (the
// daemon's, the hub's) rights must be neither applied nor answered, or "" when it
// may be. Only a requester's literal inbox (ReplyInbox) is answered: any other reply
// subject would have the endpoint publish, with its rights, wherever the requester
// names ($KV, $JS, the results and repair subjects). A message JetStream delivered
// is refused too, whatever its subject: a tool may have JetStream deliver a stored
// message (a unit a port read, which a cable controls) onto any subject, by a pull
// whose reply is that subject or a push consumer delivering there, and nats-server
// checks no permission for it. Such a delivery's reply is under $JS. (the ack
// subject), or absent, and a direct get or a republish carries Nats-Stream.
func RequestRefusal(m *nats.Msg) string {
	switch {
	case m.Header.Get(nats.JSStream) != "" || m.Header.Get(nats.JSSequence) != "":
		return "a message JetStream delivered (Nats-Stream header)"
	case strings.HasPrefix(m.Reply, "$JS."):
		return "a message JetStream delivered (its reply is under $JS.)"
	case m.Reply == "":
		return "no reply subject"
	case !ReplyInbox(m.Reply):
		return "a reply subject that is no inbox (_INBOX.>)"
	}
	return ""
}
