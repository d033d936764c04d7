package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/internal/bustest"
	"github.com/goclub/scoreboard/internal/faulttest"
	"github.com/goclub/scoreboard/league"
	"github.com/goclub/scoreboard/pairing"
	"github.com/goclub/scoreboard/result"
	"github.com/goclub/scoreboard/web"
)

// leaguePage is a league hub's page as the hub serves it (prefix league, the
// hub's bucket LEAGUE_BOARDS, a stream LEAGUE_<CLUB> a club, the club's name in
// its subjects), on a real server with JetStream; the test writes what the hub
// would, through the hub's own connection (the daemon's role).
type leaguePage struct {
	b    *bustest.Bus
	nc   *nats.Conn // the hub's own connection, as the hub publishes link states
	js   jetstream.JetStream
	kv   jetstream.KeyValue
	base string
	// pairings is the hub's LEAGUE_PAIRINGS, keyed <club>.<port>.
	pairings jetstream.KeyValue
}

// leagueClubs are the test hub's [[club]] tables: a-b delayed an hour (a name
// with '-', which its stream's name spells '_'), north and south live.
var leagueClubs = map[string]time.Duration{"a-b": time.Hour, "north": 0, "south": 0}

// leagueDelays are the page's delays as the hub gives them: live but for a-b.
func leagueDelays() *web.Delays {
	d := web.NewDelays(0, nil)
	var names []string
	own := map[string]time.Duration{}
	for c, v := range leagueClubs {
		names = append(names, c)
		if v != 0 {
			own[c] = v
		}
	}
	d.SetLeague(names, own)
	return d
}

func startLeaguePage(t *testing.T, d *web.Delays) *leaguePage {
	t.Helper()
	b := bustest.Start(t, bustest.Options{JetStream: true, Prefix: league.SubjectPrefix})
	p := &leaguePage{b: b, nc: b.Daemon()}
	var err error
	if p.js, err = jetstream.New(b.Daemon()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), bustest.Long)
	defer cancel()
	if p.kv, err = p.js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: league.Bucket, History: 1, Storage: jetstream.FileStorage}); err != nil {
		t.Fatal(err)
	}
	for club := range leagueClubs {
		if _, err := p.js.CreateStream(ctx, jetstream.StreamConfig{Name: league.ClubStream(club), Subjects: []string{league.ClubSubjects(club)}}); err != nil {
			t.Fatal(err)
		}
	}
	if p.pairings, err = pairing.Setup(ctx, p.js, league.SubjectPrefix, 1); err != nil {
		t.Fatal(err)
	}
	// The hub serves its page through its own connection (hub.Conn()).
	p.base, _ = serveTestPage(t, b.Daemon(), pageOpts{prefix: league.SubjectPrefix, delays: d, pairings: true})
	// The page follows the states once it has subscribed: a first state, told
	// again until shown (as the hub repeats them), says it has.
	bustest.Wait(t, "the page follows the port states", func() (bool, string) {
		p.state(t, "south.t0", "south.t0", "linked")
		got := p.boards(t)
		return len(got) > 0, fmt.Sprint(got)
	})
	return p
}

// dump keeps a goscore unit of club's port in the club's stream, as the hub's
// sourcing does: its stream sequence and the stream's life (the id of the
// /history/<club>.<seq>-<id>.svg address).
func (p *leaguePage) dump(t *testing.T, club, port string, k int) (uint64, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), bustest.Long)
	defer cancel()
	unit, _ := faulttest.GoscoreBoard(k)
	ack, err := p.js.Publish(ctx, league.Subject(club, "dump.goscore."+port), []byte(unit))
	if err != nil {
		t.Fatal(err)
	}
	st, err := p.js.Stream(ctx, league.ClubStream(club))
	if err != nil {
		t.Fatal(err)
	}
	return ack.Sequence, web.StreamID(st.CachedInfo())
}

// board puts port key's board (<club>.<port>) in the hub's bucket.
func (p *leaguePage) board(t *testing.T, key string, seq uint64) {
	t.Helper()
	unit, answer := faulttest.GoscoreBoard(int(seq))
	v, _ := json.Marshal(result.Kept{
		Record: result.Record{Problem: "goscore", Port: key, Seq: seq, Answer: answer, Worker: "test"},
		Unit:   unit, Time: time.Now().UTC().Format(time.RFC3339Nano),
	})
	if _, err := p.kv.Put(context.Background(), key, v); err != nil {
		t.Fatal(err)
	}
}

// state publishes a link state on subject league.port.<subjKey> whose payload
// names the port payloadKey, through the hub's own connection.
func (p *leaguePage) state(t *testing.T, subjKey, payloadKey, state string) {
	t.Helper()
	data, _ := json.Marshal(bus.PortState{Port: payloadKey, State: state, Since: time.Now().UTC().Truncate(time.Second)})
	if err := p.nc.Publish(league.SubjectPrefix+".port."+subjKey, data); err != nil {
		t.Fatal(err)
	}
	if err := p.nc.Flush(); err != nil {
		t.Fatal(err)
	}
}

// apiBoard is a board of /api/boards as the tests here read it.
type apiBoard struct {
	Port  string `json:"port"`
	Seq   uint64 `json:"seq"`
	State *struct {
		Port  string `json:"port"`
		State string `json:"state"`
	} `json:"state"`
}

func (b apiBoard) String() string {
	if b.State == nil {
		return fmt.Sprintf("%s seq %d", b.Port, b.Seq)
	}
	return fmt.Sprintf("%s seq %d state %s=%q", b.Port, b.Seq, b.State.Port, b.State.State)
}

func (p *leaguePage) boards(t *testing.T) []apiBoard {
	t.Helper()
	code, _, body := get(t, p.base+"/api/boards")
	var out []apiBoard
	if code != http.StatusOK || json.Unmarshal([]byte(body), &out) != nil {
		t.Fatalf("/api/boards: %d %s", code, body)
	}
	return out
}

// waitBoard waits until /api/boards shows port with that state ("" for any).
func (p *leaguePage) waitBoard(t *testing.T, port, state string) []apiBoard {
	t.Helper()
	var got []apiBoard
	bustest.Wait(t, "/api/boards shows "+port+" "+state, func() (bool, string) {
		got = p.boards(t)
		for _, b := range got {
			if b.Port == port && (state == "" || b.State != nil && b.State.State == state) {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d boards: %v", len(got), got)
	})
	return got
}

// eventPorts reads the whole page's event stream until the test ends: the ports
// of every board event, in order.
func eventPorts(t *testing.T, base string) func() []string {
	t.Helper()
	events := readEvents(t, base)
	return func() []string {
		var ports []string
		for _, ev := range events() {
			ports = append(ports, ev.Port)
		}
		return ports
	}
}

// TestLeagueClubAliasDelay (review F6): club a-b is delayed an hour, the page
// live. Its unit, kept now, is not on any address of the page, whatever the
// spelling of the club: a_b (its stream's name, LEAGUE_A_B, is the same) is no
// club of the hub, and a message is shown only under its own club's name and
// delay. A live club's unit is served (the test's control).
func TestLeagueClubAliasDelay(t *testing.T) {
	p := startLeaguePage(t, leagueDelays())
	seq, id := p.dump(t, "a-b", "t1", 1)
	live, liveID := p.dump(t, "north", "t1", 2)
	p.board(t, "a-b.t1", 1)
	p.board(t, "north.t1", 2)
	p.waitBoard(t, "north.t1", "")
	for _, u := range []string{
		fmt.Sprintf("/history/north.%d.svg", live),
		fmt.Sprintf("/history/north.%d-%s.svg", live, liveID),
	} {
		if code, _, body := get(t, p.base+u); code != http.StatusOK {
			t.Fatalf("control: a live club's %s: %d %s", u, code, body)
		}
	}
	name := web.PictureName("goscore", []byte(mustUnit(1)), 1)
	for _, c := range []struct {
		path string
		want int
	}{
		{fmt.Sprintf("/history/a-b.%d.svg", seq), http.StatusNotFound},
		{fmt.Sprintf("/history/a_b.%d.svg", seq), http.StatusNotFound},
		{fmt.Sprintf("/history/a-b.%d-%s.svg", seq, id), http.StatusNotFound},
		{fmt.Sprintf("/history/a_b.%d-%s.svg", seq, id), http.StatusNotFound},
		// Another configured club's name on a-b's message: not its own.
		{fmt.Sprintf("/history/north.%d-%s.svg", seq, id), http.StatusNotFound},
		{"/boards/a_b.t1.svg", http.StatusNotFound},
		{"/boards/a_b.t1.sgf", http.StatusNotFound},
		{"/boards/a-b.t1.svg", http.StatusNotFound},
		{"/pictures/a_b.t1/" + name + ".svg", http.StatusNotFound},
		{"/pictures/a-b.t1/" + name + ".svg", http.StatusNotFound},
		{"/embed/a_b.t1", http.StatusNotFound},
		{"/api/events?port=a_b.t1", http.StatusBadRequest},
	} {
		code, body := status(t, p.base+c.path)
		if code != c.want {
			t.Errorf("%s: %d, want %d: %.200s", c.path, code, c.want, body)
		}
	}
	for _, port := range []string{"a_b.t1", "a-b.t1"} {
		code, _, body := get(t, p.base+"/api/history?since=168h&port="+url.QueryEscape(port))
		if code == http.StatusOK && strings.Contains(body, "stream_seq") {
			t.Errorf("/api/history?port=%s: %d, lists a unit of a club delayed an hour: %.300s", port, code, body)
		}
	}
}

// status asks for url and reads its status and at most the first KB of its body
// (an event stream's does not end).
func status(t *testing.T, url string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), bustest.Long)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return resp.StatusCode, "(an event stream)"
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	return resp.StatusCode, string(body)
}

func mustUnit(k int) string {
	u, _ := faulttest.GoscoreBoard(k)
	return u
}

// TestLeagueForgedPortStates (review F2, the page's part): a port state whose
// payload names another port than its subject, or a club the hub does not have,
// is not shown, whoever publishes it (here the hub's own connection, which may);
// the states of one club make at most a bounded number of tiles.
func TestLeagueForgedPortStates(t *testing.T) {
	p := startLeaguePage(t, leagueDelays())
	p.state(t, "north.t1", "north.t1", "linked")
	p.waitBoard(t, "north.t1", "linked")
	p.state(t, "north.t1", "north.t2", "link down")                                    // another port of the same club
	p.state(t, "north.t1", "south.t1", "link down")                                    // another club's
	p.state(t, "fake.x", "ghostclub.board9", "league suspended - pay at evil.example") // neither
	p.state(t, "ghost.x", "ghost.x", "league suspended")                               // a club the hub has not
	p.state(t, "south.t1", "south.t1", "linked")                                       // the fence: taken after them
	got := p.waitBoard(t, "south.t1", "linked")
	want := []string{`north.t1 seq 0 state north.t1="linked"`, `south.t0 seq 0 state south.t0="linked"`, `south.t1 seq 0 state south.t1="linked"`}
	if s := fmt.Sprint(got); s != fmt.Sprint(want) {
		t.Fatalf("/api/boards after forged states: %s, want %s", s, fmt.Sprint(want))
	}

	// One club's states: a tile each up to the club's bound, then none more; the
	// other clubs keep theirs.
	n := web.MaxClubStateTiles + 50
	for i := range n {
		key := fmt.Sprintf("north.p%d", i)
		p.state(t, key, key, "linked")
	}
	p.state(t, "south.t2", "south.t2", "linked")
	got = p.waitBoard(t, "south.t2", "linked")
	north := 0
	for _, b := range got {
		if strings.HasPrefix(b.Port, "north.") {
			north++
		}
	}
	if north > web.MaxClubStateTiles {
		t.Errorf("%d states of north's ports: %d tiles of north, bound %d", n+1, north, web.MaxClubStateTiles)
	}
	t.Logf("%d states of north's ports made %d tiles (bound %d); %d boards in all", n+1, north, web.MaxClubStateTiles, len(got))
}

// TestLeagueDelayedClubPortHidden (review F10): club a-b is delayed an hour. Its
// port's link state and its board, both just come, are neither in /api/boards nor
// in /api/events, while a live club's are; once the delay lets the board out (here
// the delay is taken away, as a SIGHUP does), the port shows with the state held.
func TestLeagueDelayedClubPortHidden(t *testing.T) {
	d := leagueDelays()
	p := startLeaguePage(t, d)
	events := eventPorts(t, p.base)
	p.state(t, "a-b.t1", "a-b.t1", "linked")
	p.board(t, "a-b.t1", 1)
	// The fences: a live club's state and board, each after a-b's on its feed.
	p.state(t, "north.t1", "north.t1", "linked")
	p.board(t, "north.t1", 2)
	bustest.Wait(t, "north.t1's board and state", func() (bool, string) {
		got := p.boards(t)
		for _, b := range got {
			if b.Port == "north.t1" && b.Seq == 2 && b.State != nil {
				return true, ""
			}
		}
		return false, fmt.Sprint(got)
	})
	bustest.Wait(t, "north.t1's events", func() (bool, string) {
		ev := events()
		return slices.Contains(ev, "north.t1"), fmt.Sprint(ev)
	})
	for _, b := range p.boards(t) {
		if strings.HasPrefix(b.Port, "a-b.") {
			t.Errorf("/api/boards shows %v of a club delayed an hour", b)
		}
	}
	if ev := events(); slices.Contains(ev, "a-b.t1") {
		t.Errorf("/api/events told a-b.t1 of a club delayed an hour: %v", ev)
	}

	// The delay taken away: the board is let out, with the state it had.
	d.SetLeague(slices.Collect(func(yield func(string) bool) {
		for c := range leagueClubs {
			if !yield(c) {
				return
			}
		}
	}), nil)
	p.waitBoard(t, "a-b.t1", "linked")
}
