package bus

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/rs/zerolog"
)

// FuzzJudgeAudit: of the consumers made through the link, the guard leaves only
// those that the server's own types read as ephemeral, without a deliver group, on
// the club's history, delivering under $LEAGUE.<club>.
func FuzzJudgeAudit(f *testing.F) {
	audit := func(kind, subject, response string) []byte {
		b, _ := json.Marshal(map[string]any{"client": map[string]string{"kind": kind}, "subject": subject, "response": response})
		return b
	}
	ok := `{"type":"io.nats.jetstream.api.v1.consumer_create_response","stream_name":"SCOREBOARD","name":"JS_SRC_x","config":{"name":"JS_SRC_x","deliver_subject":"$LEAGUE.victim.S.abc","ack_policy":"none"}}`
	f.Add(audit("Leafnode", "$JS.API.CONSUMER.CREATE.SCOREBOARD.JS_SRC_x.scoreboard.>", ok))
	f.Add(audit("Leafnode", "$JS.API.CONSUMER.CREATE.SCOREBOARD.evil.scoreboard.>", `{"stream_name":"SCOREBOARD","name":"evil","config":{"deliver_subject":"scoreboard.solve.goscore","deliver_group":"scoreboard-workers"}}`))
	f.Add(audit("Leafnode", "$JS.API.CONSUMER.CREATE.SCOREBOARD.evil.scoreboard.>", `{"stream_name":"SCOREBOARD","name":"evil","config":{"durable_name":"evil","deliver_subject":"$LEAGUE.victim.S.x"}}`))
	f.Add(audit("Leafnode", "$JS.API.CONSUMER.CREATE.SCOREBOARD.evil.scoreboard.>", `{"stream_name":"SCOREBOARD","name":"evil","config":{"deliver_subject":"$LEAGUE.victim.S.x","Deliver_Group":"g"}}`))
	f.Add(audit("Leafnode", "$JS.API.CONSUMER.CREATE.KV_X.evil.$KV.>", `{"stream_name":"KV_X","name":"evil","config":{"deliver_subject":"$LEAGUE.victim.S.x"}}`))
	f.Add(audit("Client", "$JS.API.CONSUMER.CREATE.SCOREBOARD", `{"stream_name":"SCOREBOARD","name":"mine","config":{}}`))
	f.Add(audit("Leafnode", "$JS.API.CONSUMER.CREATE.SCOREBOARD", `{"error":{"code":400}}`))
	f.Add([]byte(`not json`))
	g := &linkGuard{club: "victim", prefix: "scoreboard", stream: "SCOREBOARD", log: zerolog.Nop()}
	f.Fuzz(func(t *testing.T, data []byte) {
		ci, why := g.judgeAudit(data)
		if why != "" || ci.Name == "" {
			return
		}
		var a struct {
			Response string `json:"response"`
		}
		var resp server.JSApiConsumerCreateResponse
		if json.Unmarshal(data, &a) != nil || json.Unmarshal([]byte(a.Response), &resp) != nil || resp.ConsumerInfo == nil {
			return
		}
		c := resp.Config
		if c == nil {
			return
		}
		if c.Durable != "" || c.DeliverGroup != "" || !strings.HasPrefix(c.DeliverSubject, "$LEAGUE.victim.") || resp.Stream != "SCOREBOARD" {
			t.Fatalf("left %s: the server reads durable %q group %q deliver %q stream %q", data, c.Durable, c.DeliverGroup, c.DeliverSubject, resp.Stream)
		}
	})
}

// TestClubDenyImportsLetTheSourcingThrough: the one create form the sourcing uses
// passes the link's denies, for a prefix of one token and of several; the others
// do not. (A subject with a literal ">" is matched here as a wildcard, unlike the
// server's leaf check: TestLeagueHubConsumerAttack shows those refused by a real
// link.)
func TestClubDenyImportsLetTheSourcingThrough(t *testing.T) {
	for _, prefix := range []string{"scoreboard", "club.south"} {
		deny := ClubDenyImports(prefix, "victim")
		denied := func(subject string) bool {
			for _, d := range deny {
				if server.SubjectMatchesFilter(subject, d) {
					return true
				}
			}
			return false
		}
		api := "$JS.victim.API.CONSUMER.CREATE.SCOREBOARD"
		if s := api + ".JS_SRC_abc." + prefix + ".>"; denied(s) {
			t.Errorf("prefix %s: the sourcing's %s is denied", prefix, s)
		}
		for _, s := range []string{api, api + ".evil", api + ".evil.x", api + ".evil." + prefix + ".dump.goscore", api + ".evil." + prefix + ".dump.goscore.t1",
			"$JS.victim.API.CONSUMER.DURABLE.CREATE.SCOREBOARD.evil", "$JS.victim.API.CONSUMER.RESET.SCOREBOARD.x", "$SYS.REQ.ACCOUNT.PING.CONNZ"} {
			if !denied(s) {
				t.Errorf("prefix %s: %s passes the link", prefix, s)
			}
		}
	}
}
