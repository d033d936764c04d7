// Package config declares the settings of the scoreboard's commands once, and lays
// them from the flags given, the environment and the config file, checked.
//
// A setting is declared once, in settings below: its key in the config file, its
// default, its help and its check. The rest is derived from the key by one rule:
// key history.max_bytes ↔ flag --history-max-bytes ↔ $SCOREBOARD_HISTORY_MAX_BYTES
// (a [[port]] table's keys are port.KEY: port.baud ↔ --port-baud). The flags, the
// environment, the file's keys, --help, docs/cli.md, the man pages, the completions
// and configs/scoreboard.toml all come from here. Precedence: a flag on the command
// line, then the environment, then the file, then the default (load.go).
package config

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/daemon"
	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/history"
	"github.com/goclub/scoreboard/internal/memlimit"
	"github.com/goclub/scoreboard/logging"
	"github.com/goclub/scoreboard/pairing"
	"github.com/goclub/scoreboard/serialio"
	"github.com/goclub/scoreboard/web"
)

// Setting is one setting, declared once: the rest of its life (flag, environment
// variable, file key, help) is derived from its key.
type Setting struct {
	key   string
	group string // the heading it is listed under in --help
	def   any    // string, int, bool or time.Duration: the setting's type
	// help is one line for --help; a `word` in it names the value (pflag's rule).
	help string
	// doc is the example config's comment above the key, if any.
	doc string
	// example is the example config's value, when it is not the default (then the
	// key is shown commented out, but in a [[port]] table).
	example any
	// also is a second value the example config shows commented out under the first,
	// with alsoNote beside it: the one line a user uncomments to change it.
	also     any
	alsoNote string
	// alias is the flag's former name, still accepted and not shown; "no-NAME" for
	// a bool is its negation (--no-workers is --daemon-workers=false).
	alias string
	// hub marks a setting of `scoreboard hub` alone (a league hub's [league]): run
	// does not take it, and configs/league-hub.toml shows it, not scoreboard.toml.
	hub bool
	// check says what is wrong with a value on its own, or "". Checks across
	// settings are in load.go.
	check func(v any) string
	// Where the value lives: in the config, or in a port's.
	global func(*Config) any
	port   func(*daemon.PortConfig) any
}

// config is the settings of run, work and the tools, layered.
type Config struct {
	NATS struct {
		Listen, ListenToken, ListenUser, ListenPassword string
		URL, User, Password, Token, NKey, Creds         string
		TLSCA, TLSCert, TLSKey, Prefix                  string
	}
	Log    struct{ Level, Format string }
	Daemon struct {
		RequestTimeout, Drain time.Duration
		StateDir              string
		Workers               bool
	}
	// Memory is the process's budget (memlimit): a size, or "" for a share of
	// the machine's.
	Memory  struct{ Budget string }
	History struct {
		Enabled          bool
		MaxAge, MaxBytes string
		// Sync is "always" or an interval: the embedded server's store sync.
		Sync     string
		Replicas int
	}
	HTTP struct {
		Listen string
		// Delay holds every unit back from the page (web.Delays).
		Delay time.Duration
		// Metrics, EmbedOrigins, TrustedProxies and the viewer bounds are the
		// page's guard for the internet (web.Guard).
		Metrics, EmbedOrigins, TrustedProxies string
		MaxViewers, MaxViewersPerAddress      int
	}
	// Hub is a club's link to a league hub (bus.HubLink): run's [hub].
	Hub struct{ URL, Club, Token, SeedFile, TLSCA, TLSCert, TLSKey string }
	// League is a league hub's own listeners and store: scoreboard hub's [league].
	League struct {
		Listen, LeafListen, HTTP, StateDir string
		LeafTLSCert, LeafTLSKey            string
		LeafTLSClientCA                    string
		HTTPTLSCert, HTTPTLSKey            string
		HTTPDelay                          time.Duration
		Replicas                           int
		// Metrics, EmbedOrigins, TrustedProxies and the viewer bounds are the
		// league page's guard (web.Guard), as [http]'s are a club's.
		Metrics, EmbedOrigins, TrustedProxies string
		MaxViewers, MaxViewersPerAddress      int
		// ClubMaxBytes and ClubMaxAge are each club's share of the hub's store,
		// unless its [[club]] table says (league.WithDefaults).
		ClubMaxBytes, ClubMaxAge string
	}
	Ports []daemon.PortConfig
}

// The groups of --help, in their order there; "options" are a command's own.
const (
	GroupOptions = "options"
	GroupPort    = "port"
	GroupDaemon  = "daemon"
	GroupNATS    = "NATS"
	GroupHistory = "history"
	GroupWeb     = "web"
	GroupLeague  = "league"
	GroupLog     = "logging"
)

var Groups = []string{GroupOptions, GroupPort, GroupDaemon, GroupNATS, GroupHistory, GroupWeb, GroupLeague, GroupLog}

// Defaults of a league hub's listeners: its tools on loopback, beside a club
// daemon's 4222; the clubs on NATS's leaf-node port, on every interface.
const (
	DefaultLeagueListen     = "127.0.0.1:4322"
	DefaultLeagueLeafListen = "0.0.0.0:7422"
	DefaultLeagueHTTP       = "127.0.0.1:8090"
)

// HTTPOff turns the page's listener off.
const HTTPOff = "off"

// DefaultHTTP is where run serves the page unless told otherwise: loopback only, so
// a TV sees it only when the user says so.
const DefaultHTTP = "127.0.0.1:8080"

var settings = []*Setting{
	// [nats]: the embedded server's listener.
	{key: "nats.listen", group: GroupNATS, def: bus.DefaultListen,
		help:   "the embedded NATS server's listener, `HOST:PORT` (port 0: any free one), or \"off\"",
		global: func(c *Config) any { return &c.NATS.Listen },
		doc: "By default the daemon embeds a NATS server, and its own parts connect in-process.\n" +
			"The embedded server's TCP listener, for local tools (scoreboard send, watch, work,\n" +
			"any NATS client): HOST:PORT, port 0 for any free one, or \"off\" for none.",
		check: func(v any) string {
			if s := v.(string); s != bus.ListenOff {
				if _, _, err := bus.ParseListen(s); err != nil {
					return err.Error()
				}
			}
			return ""
		}},
	{key: "nats.listen_token", group: GroupNATS, def: "", example: "",
		help:   "the `token` clients of the embedded listener must present to be workers; needed beyond loopback, or a user",
		global: func(c *Config) any { return &c.NATS.ListenToken },
		doc: "The worker credentials: a token, or a user and password. A client of the listener\n" +
			"that presents them is a worker (`scoreboard work` on another machine: it may take\n" +
			"dumps and publish results); a client without credentials is a tool (send, watch,\n" +
			"the nats CLI: it may publish dumps and read results, never answer), on a loopback\n" +
			"listener only. Beyond loopback (0.0.0.0:4222, say) the listener needs them, or the\n" +
			"daemon refuses to start. The daemon's own parts connect in-process and need none.\n" +
			"Put the secrets in the environment (a flag shows in `ps`). README, \"Trust\"."},
	{key: "nats.listen_user", group: GroupNATS, def: "", example: "club",
		help:   "the user `name` clients of the embedded listener must present, with --nats-listen-password",
		global: func(c *Config) any { return &c.NATS.ListenUser }},
	{key: "nats.listen_password", group: GroupNATS, def: "", example: "",
		help:   "the `password` of --nats-listen-user",
		global: func(c *Config) any { return &c.NATS.ListenPassword }},
	// [nats]: the connection to a server.
	{key: "nats.url", group: GroupNATS, def: "", example: "nats://nats1.club.lan:4222,nats://nats2.club.lan:4222",
		help:   "NATS server `URLs`, comma-separated; empty: run embeds a server, the other commands use $NATS_URL or nats://" + bus.DefaultListen,
		global: func(c *Config) any { return &c.NATS.URL },
		doc: "Or use an existing NATS server or cluster instead of embedding one (then `listen`\n" +
			"must go): one or more URLs, comma-separated. nats://, tls://, ws:// or wss://."},
	{key: "nats.user", group: GroupNATS, def: "", example: "scoreboard",
		help:   "NATS user `name`",
		global: func(c *Config) any { return &c.NATS.User },
		doc: "Credentials for `url`, at most one way: a user and password, a token, an nkey seed\n" +
			"file, or a creds file (a user JWT and its nkey seed). Rather than writing a password\n" +
			"or a token here, put it in the environment (with systemd, in\n" +
			"/etc/scoreboard/scoreboard.env, mode 0640). The daemon logs in as the `daemon` user\n" +
			"of configs/nats-server.conf; `scoreboard work --config` with this file presents the\n" +
			"worker credentials: user \"worker\" there, or the token set as listen_token on the\n" +
			"daemon whose embedded server it joins."},
	{key: "nats.password", group: GroupNATS, def: "", example: "",
		help:   "NATS `password`",
		global: func(c *Config) any { return &c.NATS.Password }},
	{key: "nats.token", group: GroupNATS, def: "", example: "",
		help:   "NATS authentication `token`",
		global: func(c *Config) any { return &c.NATS.Token }},
	{key: "nats.nkey", group: GroupNATS, def: "", example: "/etc/scoreboard/scoreboard.nk",
		help:   "`file` holding an nkey seed to authenticate with",
		global: func(c *Config) any { return &c.NATS.NKey }},
	{key: "nats.creds", group: GroupNATS, def: "", example: "/etc/scoreboard/scoreboard.creds",
		help:   "NATS credentials `file` (user JWT and nkey seed)",
		global: func(c *Config) any { return &c.NATS.Creds }},
	{key: "nats.tls_ca", group: GroupNATS, def: "", example: "/etc/scoreboard/ca.pem",
		help:   "PEM `file` of CAs to trust for the server's certificate",
		global: func(c *Config) any { return &c.NATS.TLSCA },
		doc: "TLS to the server: a CA to trust beside the system's, and a client certificate and\n" +
			"its key for servers that verify clients (both or neither). PEM files."},
	{key: "nats.tls_cert", group: GroupNATS, def: "", example: "/etc/scoreboard/client.pem",
		help:   "client certificate PEM `file`, for TLS client authentication",
		global: func(c *Config) any { return &c.NATS.TLSCert }},
	{key: "nats.tls_key", group: GroupNATS, def: "", example: "/etc/scoreboard/client-key.pem",
		help:   "client certificate's private key PEM `file`",
		global: func(c *Config) any { return &c.NATS.TLSKey }},
	{key: "nats.prefix", group: GroupNATS, def: bus.DefaultPrefix,
		help:   "first `token`(s) of every subject",
		global: func(c *Config) any { return &c.NATS.Prefix },
		doc: "The first token(s) of every subject: <prefix>.solve.<problem>,\n" +
			"<prefix>.dump.<problem>.<port>, <prefix>.result.<problem>.<port>. Lowercase letters,\n" +
			"digits, '-' and '_', dot-separated.",
		check: func(v any) string {
			if !bus.ValidPrefix(v.(string)) {
				return fmt.Sprintf("%q: want dot-separated tokens of lowercase letters, digits, '-' and '_'", v)
			}
			return ""
		}},

	// [log]
	{key: "log.level", group: GroupLog, def: "info",
		help:   "log `level`: trace, debug, info, warn or error",
		global: func(c *Config) any { return &c.Log.Level },
		doc: "trace, debug (a line per unit), info (a line per state change), warn (a line per\n" +
			"bad unit, sampled when they flood), error.",
		check: func(v any) string { return errString(logging.ParseLevel(v.(string))) }},
	{key: "log.format", group: GroupLog, def: "", example: "json",
		help:   "log `format`: json (lines on stderr), console or journald; empty: journald under systemd, console on a terminal, json otherwise",
		global: func(c *Config) any { return &c.Log.Format },
		doc: "json (JSON lines on stderr), console (for humans), or journald (systemd's journal,\n" +
			"with each field searchable: journalctl -u scoreboard PORT=lobby). Left out, it is\n" +
			"picked from where stderr goes: journald under systemd, console on a terminal, json\n" +
			"otherwise.",
		check: func(v any) string { return errString(logging.ParseFormat(v.(string))) }},

	// [daemon]
	{key: "daemon.request_timeout", group: GroupDaemon, def: 2 * time.Second, alias: "request-timeout",
		help:   "how long a unit waits for a worker before it is sent again (3 attempts)",
		global: func(c *Config) any { return &c.Daemon.RequestTimeout },
		doc: "How long a unit waits for a worker's answer before it is published again; after\n" +
			"three attempts it gets an error result and the port moves on.",
		check: durationIn(MinRequestTimeout, MaxRequestTimeout, "above the slowest unit's solving on a small board, "+
			"and at most 20s: the display writer's turn must stay well inside the watchdog's 10s health bound")},
	{key: "daemon.drain", group: GroupDaemon, def: 5 * time.Second, alias: "drain",
		help:   "on SIGINT or SIGTERM, how long the units (dumps) read may still be answered; the rest get the outcome stopped (a worker's: handed back to the port's next attempt)",
		global: func(c *Config) any { return &c.Daemon.Drain },
		doc: "On SIGINT or SIGTERM, how long the units read may still be answered, in order (each\n" +
			"one left then gets the outcome \"stopped\"); the workers stop within the same bound,\n" +
			"handing a port's dumps back for its next attempt.",
		check: durationIn(MinDrain, MaxDrain, "a stop must end, with its last writes, within the service's TimeoutStopSec=30s")},
	{key: "daemon.state_dir", group: GroupHistory, def: "", example: "/var/lib/scoreboard", alias: "state-dir",
		help:   "the embedded server's store `directory` (the history); empty: $STATE_DIRECTORY, else $XDG_STATE_HOME/scoreboard, else ~/.local/state/scoreboard",
		global: func(c *Config) any { return &c.Daemon.StateDir },
		doc: "Where the embedded NATS server keeps the history (JetStream's store). Left out:\n" +
			"$STATE_DIRECTORY (systemd's StateDirectory=, /var/lib/scoreboard), else\n" +
			"$XDG_STATE_HOME/scoreboard, else ~/.local/state/scoreboard. One daemon a directory."},
	{key: "daemon.workers", group: GroupDaemon, def: true, example: false, alias: "no-workers",
		help:   "solve here; false: serve the ports and leave the units to 'scoreboard work' processes on the bus",
		global: func(c *Config) any { return &c.Daemon.Workers },
		doc: "Solve here (the default), or leave every unit to `scoreboard work` processes on\n" +
			"other machines, joined to the same NATS (nats.url, or this daemon's listener with\n" +
			"worker credentials): the shape for a small board computer that only bridges its\n" +
			"serial ports. The watchdog's health check then pings any worker of the service.\n" +
			"README, \"Scaling out\"."},

	// [memory]: run's and the hub's (HubKeys).
	{key: "memory.budget", group: GroupDaemon, def: "", example: "512MiB",
		help:   "the process's memory budget, a `size` (64MiB, 1GiB): Go's soft limit is 7/8 of it (less the program's own file on a small one) unless $GOMEMLIMIT is set; empty: a quarter of the machine's memory for run (at most 128MiB), half for hub",
		global: func(c *Config) any { return &c.Memory.Budget },
		doc: "The process's memory budget, the embedded NATS server's stores included: Go's soft\n" +
			"memory limit is set to 7/8 of it, or to the budget less the program's own file\n" +
			"(some 27 MiB) where that is less (unless $GOMEMLIMIT is set, which wins), and the\n" +
			"collector hands back the stores' idle block buffers to stay within it. Left out: a\n" +
			"quarter of the machine's memory (the cgroup's memory.max if lower, else MemTotal)\n" +
			"for run, at most 128MiB; half of it for scoreboard hub. docs/operations.md,\n" +
			"\"Memory budget\".",
		check: func(v any) string {
			if v.(string) == "" {
				return ""
			}
			n, err := history.ParseSize(v.(string))
			if err != nil {
				return err.Error()
			}
			return memlimit.Check(n)
		}},

	// [history]
	{key: "history.enabled", group: GroupHistory, def: true, alias: "history",
		help:   "keep every unit and its result in JetStream, and each port's latest in a KV bucket",
		global: func(c *Config) any { return &c.History.Enabled },
		doc: "Every unit and its result kept in the JetStream stream SCOREBOARD, and each port's\n" +
			"latest result (with its unit, and for othello the board) in the KV bucket\n" +
			"SCOREBOARD_BOARDS: `scoreboard history`, `scoreboard watch --since`,\n" +
			"`nats kv watch SCOREBOARD_BOARDS`. With nats.url, on that server if it has JetStream."},
	{key: "history.max_age", group: GroupHistory, def: "90d",
		help:   "drop units older than this `duration` (90d, 36h)",
		global: func(c *Config) any { return &c.History.MaxAge },
		doc: "Units older than this, or beyond this size, are dropped, oldest first. Days (\"90d\")\n" +
			"or Go durations (\"36h\"); sizes in KiB, MiB, GiB (binary) or KB, MB, GB.",
		check: checkAge},
	{key: "history.max_bytes", group: GroupHistory, def: "1GiB",
		help:   "drop the oldest units beyond this `size` (1GiB, 512MiB)",
		global: func(c *Config) any { return &c.History.MaxBytes },
		check:  checkSize},
	{key: "history.sync", group: GroupHistory, def: history.DefaultSync,
		help:   "how often the embedded server syncs the history to disk: \"always\" (every write) or an `interval` (2m, 10s); a power cut loses what was not synced",
		global: func(c *Config) any { return &c.History.Sync },
		doc: "How often the embedded server syncs the store to disk: \"always\" (every write) or an\n" +
			"interval; a power cut loses what was not synced (docs/history.md). An external\n" +
			"server (nats.url) syncs as its own sync_interval says.",
		check: checkSync},
	{key: "history.replicas", group: GroupHistory, def: 1,
		help:   "copies of the history on a NATS cluster (`N`, 1 to 5)",
		global: func(c *Config) any { return &c.History.Replicas },
		doc:    "Copies of the stream and the bucket on a NATS cluster (nats.url): 3 on a 3-node one.",
		check: func(v any) string {
			if n := v.(int); n < 1 || n > 5 {
				return fmt.Sprintf("%d: want 1 to 5 (JetStream's limit): 1 on one server, 3 on a 3-node cluster", n)
			}
			return ""
		}},

	// [http]
	{key: "http.listen", group: GroupWeb, def: DefaultHTTP, alias: "http",
		help:   "the live page's listener (and /metrics', unless http.metrics says), `HOST:PORT` (0.0.0.0:8080 for the whole LAN), or \"off\"",
		global: func(c *Config) any { return &c.HTTP.Listen },
		doc: "The live page of every board (docs/page.md), and Prometheus's /metrics beside it\n" +
			"(docs/operations.md): HOST:PORT, or \"off\" for none. By default only this computer\n" +
			"sees it. To show it on the club's TV (a browser on the LAN), listen on every\n" +
			"interface: uncomment the second line, and open the address the daemon logs at start\n" +
			"(http://<this machine>:8080/) on the TV. The page only reads, so it needs no\n" +
			"password; /metrics shows the same counts.",
		also: "0.0.0.0:8080", alsoNote: "the TV can reach it",
		check: checkHTTP},
	{key: "http.delay", group: GroupWeb, def: time.Duration(0), example: 15 * time.Minute,
		help:   "hold every unit back from the page (its API, events, pictures, game records, history) for this `duration` (15m), against cheating; 0: live",
		global: func(c *Config) any { return &c.HTTP.Delay },
		doc: "A tournament's broadcast delay, against cheating: a unit is on the page, in its\n" +
			"/api, its events, its pictures and game records, and its history only once it was\n" +
			"stored this long ago (docs/page.md, \"A delayed broadcast\"). 0 is live. The bus,\n" +
			"watch, history and the tools stay live, for the arbiters. At most 24h.",
		check: checkDelay},
	{key: "http.metrics", group: GroupWeb, def: web.MetricsBeside, example: "127.0.0.1:9090",
		help:   "Prometheus's /metrics: \"page\" (beside the page, on http.listen), \"off\", or a listener of its own, `HOST:PORT`",
		global: func(c *Config) any { return &c.HTTP.Metrics },
		doc: "/metrics (docs/operations.md): \"page\" serves it beside the page, on its listener;\n" +
			"\"off\" serves it nowhere; HOST:PORT on a listener of its own, which works also with\n" +
			"the page off. A page that faces the internet (docs/page.md, \"On the internet\")\n" +
			"keeps its metrics on loopback, or off.",
		check: checkMetrics},
	{key: "http.embed_origins", group: GroupWeb, def: "", example: "https://club.example.org",
		help:   "the sites that may frame /embed/<port> in an iframe: `origins` (https://club.example.org), space-separated",
		global: func(c *Config) any { return &c.HTTP.EmbedOrigins },
		doc: "The sites that may show a board of the page in an iframe (/embed/<port>,\n" +
			"docs/page.md): their origins, scheme://host[:port], separated by spaces. The page's\n" +
			"own origin always may; no other site may frame any other page.",
		check: checkOrigins},
	{key: "http.max_viewers", group: GroupWeb, def: web.DefaultMaxViewers,
		help:   "the page's live streams (viewers) in all, `N`; beyond, 503 (0: no bound)",
		global: func(c *Config) any { return &c.HTTP.MaxViewers },
		doc: "Bounds on the page's live streams (one per open page): in all, and from one\n" +
			"address (behind a trusted proxy, the address it names). Beyond, a viewer is\n" +
			"answered 503 or 429 and tries again. 0: no bound.",
		check: nonNegative},
	{key: "http.max_viewers_per_address", group: GroupWeb, def: web.DefaultMaxViewersPerAddress,
		help:   "the page's live streams from one client address, `N` (an IPv6 /64 is one); beyond, 429 (0: no bound)",
		global: func(c *Config) any { return &c.HTTP.MaxViewersPerAddress },
		check:  nonNegative},
	{key: "http.trusted_proxies", group: GroupWeb, def: web.DefaultTrustedProxies,
		help:   "the reverse proxies whose X-Forwarded-For names the viewer, for the bound per address: `addresses` or networks, space-separated",
		global: func(c *Config) any { return &c.HTTP.TrustedProxies },
		doc: "The reverse proxies (caddy, nginx) in front of the page, whose X-Forwarded-For\n" +
			"header names the viewer for max_viewers_per_address: addresses or networks. The\n" +
			"default trusts a proxy on this machine. \"\" trusts none.",
		check: checkProxies},

	// [hub]: a club's link to a league hub (docs/league.md).
	{key: "hub.url", group: GroupLeague, def: "", example: "nats-leaf://hub.example.org:7422", alias: "hub",
		help:   "join a league: the hub's leaf-node `URL` (nats-leaf://HOST:PORT, tls://HOST:PORT), with --hub-club and the club's --hub-seed-file",
		global: func(c *Config) any { return &c.Hub.URL },
		doc: "A league (docs/league.md): the embedded server joins the hub as a leaf node, with\n" +
			"the club's name as its JetStream domain; the hub's LEAGUE stream sources the club's\n" +
			"history. The club goes on whether the link is up: ports, workers, history, page.\n" +
			"nats-leaf://HOST:PORT (tls:// for TLS), comma-separated for a hub cluster.",
		check: func(v any) string {
			if v == "" {
				return ""
			}
			// The URL alone; the club and the credentials are checked with it (load.go).
			return errMsg(bus.CheckHubURL(v.(string)))
		}},
	{key: "hub.club", group: GroupLeague, def: "", example: "north", alias: "club",
		help:   "the club's `name` in the league: its JetStream domain and its user at the hub",
		global: func(c *Config) any { return &c.Hub.Club },
		check: func(v any) string {
			if v != "" && !bus.ValidToken(v.(string)) {
				return fmt.Sprintf("club name %q: want lowercase letters, digits, '-' and '_' (the club's JetStream domain and its user at the hub)", v)
			}
			return ""
		}},
	{key: "hub.seed_file", group: GroupLeague, def: "", example: "/run/credentials/scoreboard.service/hub.seed",
		help:   "the `file` (mode 0600) of the club's nkey seed, its key at the hub (scoreboard hub key makes it)",
		global: func(c *Config) any { return &c.Hub.SeedFile },
		doc: "The club's key at the hub: the file of its nkey seed, which the league's organiser\n" +
			"made with scoreboard hub key (docs/league.md). Mode 0600: a file others may read is\n" +
			"refused. The .deb's place: /etc/scoreboard/hub.seed, given to the service by\n" +
			"LoadCredential=hub.seed:/etc/scoreboard/hub.seed (see scoreboard.service), read here."},
	{key: "hub.token", group: GroupLeague, def: "", example: "",
		help:   "the club's `token` at the hub, instead of a seed file; put it in the environment, not on the command line",
		global: func(c *Config) any { return &c.Hub.Token },
		doc:    "Or the club's token at the hub (in the environment, please): a shared secret that\ncrosses the link and sits in clear in the hub's file; a key is better. Not both."},
	{key: "hub.tls_ca", group: GroupLeague, def: "", example: "/etc/scoreboard/hub-ca.crt",
		help:   "the CA `file` (PEM) that signs the hub's certificate; set, the link is TLS or nothing; empty: the system's roots",
		global: func(c *Config) any { return &c.Hub.TLSCA },
		doc: "The CA that signs the hub's certificate (a self-signed hub's); left out, the\n" +
			"system's roots (a hub with a public CA's certificate: use a tls:// hub.url). With\n" +
			"either, the link is TLS or nothing: the club sends no credentials in clear."},
	{key: "hub.tls_cert", group: GroupLeague, def: "", example: "/etc/scoreboard/club.crt",
		help:   "the club's client certificate `file` (PEM), for a hub that wants one (league.leaf_tls_client_ca); with hub.tls_key",
		global: func(c *Config) any { return &c.Hub.TLSCert },
		doc:    "For a hub that wants client certificates (mutual TLS): the club's, and its key."},
	{key: "hub.tls_key", group: GroupLeague, def: "", example: "/etc/scoreboard/club.key",
		help:   "the club's client certificate's key `file` (PEM); with hub.tls_cert",
		global: func(c *Config) any { return &c.Hub.TLSKey }},

	// [league]: scoreboard hub's own (its [[club]] tables are the league package's).
	{key: "league.listen", group: GroupLeague, def: DefaultLeagueListen, hub: true,
		help:   "the hub's listener for its tools (history, watch, render --club), `HOST:PORT`",
		global: func(c *Config) any { return &c.League.Listen },
		doc:    "The hub's tools (history, watch, render --club): loopback only.",
		check:  checkListen},
	{key: "league.leaf_listen", group: GroupLeague, def: DefaultLeagueLeafListen, hub: true,
		help:   "the leaf-node listener the clubs join, `HOST:PORT`",
		global: func(c *Config) any { return &c.League.LeafListen },
		doc:    "The clubs' leaf connections (scoreboard run --hub-url nats-leaf://HOST:PORT).",
		check:  checkListen},
	{key: "league.leaf_tls_cert", group: GroupLeague, def: "", example: "/etc/scoreboard/hub.crt", hub: true,
		help:   "the leaf listener's TLS certificate `file` (PEM, the chain); with league.leaf_tls_key, the clubs must join in TLS",
		global: func(c *Config) any { return &c.League.LeafTLSCert },
		doc: "TLS on the clubs' listener: its certificate (PEM, with its chain) and key. Then\n" +
			"every club joins in TLS (tls://HOST:PORT); none joins in clear. docs/league.md,\n" +
			"\"On the internet\", makes them."},
	{key: "league.leaf_tls_key", group: GroupLeague, def: "", example: "/etc/scoreboard/hub.key", hub: true,
		help:   "the leaf listener's TLS key `file` (PEM); with league.leaf_tls_cert",
		global: func(c *Config) any { return &c.League.LeafTLSKey }},
	{key: "league.leaf_tls_client_ca", group: GroupLeague, def: "", example: "/etc/scoreboard/clubs-ca.crt", hub: true,
		help:   "the CA `file` (PEM) of the clubs' client certificates: each club needs one it signed (mutual TLS), beside its key",
		global: func(c *Config) any { return &c.League.LeafTLSClientCA },
		doc:    "Optional, with a certificate: each club must show a certificate this CA signed\n(its hub.tls_cert), on top of its key or token."},
	{key: "league.http", group: GroupLeague, def: DefaultLeagueHTTP, hub: true,
		help:   "the league page's listener (and /metrics', unless league.metrics says), `HOST:PORT`, or \"off\"",
		global: func(c *Config) any { return &c.League.HTTP },
		doc:    "The league page (every club's boards, by club) and, unless league.metrics says, /metrics;\nor \"off\".",
		check:  checkHTTP},
	{key: "league.http_tls_cert", group: GroupLeague, def: "", example: "/etc/scoreboard/hub.crt", hub: true,
		help:   "the league page's TLS certificate `file` (PEM, the chain); with league.http_tls_key, the page is served in HTTPS only",
		global: func(c *Config) any { return &c.League.HTTPTLSCert },
		doc:    "HTTPS for the league page and /metrics: its certificate (PEM, with its chain) and key\n(the leaf listener's may serve, for the same name). Then nothing is served in clear."},
	{key: "league.http_tls_key", group: GroupLeague, def: "", example: "/etc/scoreboard/hub.key", hub: true,
		help:   "the league page's TLS key `file` (PEM); with league.http_tls_cert",
		global: func(c *Config) any { return &c.League.HTTPTLSKey }},
	{key: "league.http_delay", group: GroupLeague, def: time.Duration(0), example: 15 * time.Minute, hub: true,
		help:   "hold every club's units back from the league page for this `duration` (15m), against cheating; 0: live; a [[club]]'s delay overrides it",
		global: func(c *Config) any { return &c.League.HTTPDelay },
		doc: "A broadcast delay on the league page, against cheating (docs/page.md, \"A delayed\n" +
			"broadcast\"): a unit is on the page, its API, events, pictures and history only once\n" +
			"the hub stored it this long ago. 0 is live. A [[club]] table's delay overrides it for\n" +
			"that club. The hub's tools (history, watch --club) stay live. At most 24h.",
		check: checkDelay},
	{key: "league.metrics", group: GroupLeague, def: web.MetricsBeside, example: "127.0.0.1:9090", hub: true,
		help:   "the hub's /metrics: \"page\" (beside the league page), \"off\", or a listener of its own, `HOST:PORT`",
		global: func(c *Config) any { return &c.League.Metrics },
		doc: "/metrics: \"page\" beside the league page, \"off\", or HOST:PORT of a listener of\n" +
			"its own (in clear, also with league.http_tls_cert), which works also with the page off.",
		check: checkMetrics},
	{key: "league.embed_origins", group: GroupLeague, def: "", example: "https://league.example.org", hub: true,
		help:   "the sites that may frame the league page's /embed/<club>.<port>: `origins`, space-separated",
		global: func(c *Config) any { return &c.League.EmbedOrigins },
		doc:    "The sites that may frame a board of the league page (/embed/<club>.<port>):\norigins, scheme://host[:port], separated by spaces.",
		check:  checkOrigins},
	{key: "league.max_viewers", group: GroupLeague, def: web.DefaultMaxViewers, hub: true,
		help:   "the league page's live streams in all, `N`; beyond, 503 (0: no bound)",
		global: func(c *Config) any { return &c.League.MaxViewers },
		doc:    "Bounds on the league page's live streams, in all and from one address, as\n[http]'s (docs/page.md). 0: no bound.",
		check:  nonNegative},
	{key: "league.max_viewers_per_address", group: GroupLeague, def: web.DefaultMaxViewersPerAddress, hub: true,
		help:   "the league page's live streams from one client address, `N`; beyond, 429 (0: no bound)",
		global: func(c *Config) any { return &c.League.MaxViewersPerAddress },
		check:  nonNegative},
	{key: "league.trusted_proxies", group: GroupLeague, def: web.DefaultTrustedProxies, hub: true,
		help:   "the reverse proxies whose X-Forwarded-For names the league page's viewer: `addresses` or networks, space-separated",
		global: func(c *Config) any { return &c.League.TrustedProxies },
		doc:    "The reverse proxies in front of the league page whose X-Forwarded-For names the\nviewer. The default trusts a proxy on this machine.",
		check:  checkProxies},
	{key: "league.replicas", group: GroupLeague, def: 1, hub: true,
		help:   "with nats.url, copies of LEAGUE and LEAGUE_BOARDS on the hub's NATS cluster (`N`, 1 to 5)",
		global: func(c *Config) any { return &c.League.Replicas },
		doc:    "With nats.url (a nats-server cluster as the hub, configs/league-hub.conf): the\ncopies of LEAGUE and LEAGUE_BOARDS, 3 on a cluster of three.",
		check: func(v any) string {
			if n := v.(int); n < 1 || n > 5 {
				return fmt.Sprintf("%d: want 1 to 5 (JetStream's limit): 1 on one server, 3 on a 3-node cluster", n)
			}
			return ""
		}},
	{key: "league.state_dir", group: GroupLeague, def: "", example: "/var/lib/scoreboard/hub", hub: true,
		help:   "the LEAGUE stream's store `directory`; empty: $STATE_DIRECTORY/hub, else $XDG_STATE_HOME/scoreboard/hub",
		global: func(c *Config) any { return &c.League.StateDir },
		doc:    "LEAGUE and LEAGUE_BOARDS. Left out: $STATE_DIRECTORY/hub, else\n$XDG_STATE_HOME/scoreboard/hub, else ~/.local/state/scoreboard/hub."},
	{key: "league.club_max_bytes", group: GroupLeague, def: "1GiB", hub: true,
		help:   "each club's share of the hub's store: its oldest units are dropped beyond this `size` (a [[club]]'s max_bytes overrides it)",
		global: func(c *Config) any { return &c.League.ClubMaxBytes },
		doc: "Each club's share of the hub's store (its stream LEAGUE_<CLUB>): beyond this size or\n" +
			"age its oldest units are dropped, its own and never another club's. A [[club]]\n" +
			"table's max_bytes and max_age override them for that club. The shares together\n" +
			"are fitted to half the room of the state dir's filesystem.",
		check: checkSize},
	{key: "league.club_max_age", group: GroupLeague, def: "90d", hub: true,
		help:   "each club's share of the hub's store: its units older than this `duration` are dropped (a [[club]]'s max_age overrides it)",
		global: func(c *Config) any { return &c.League.ClubMaxAge },
		check:  checkAge},

	// [[port]]: one table per scoreboard; the flags make or override the one port.
	{key: "port.name", group: GroupPort, def: "", example: "lobby",
		help: "the port's `name` in subjects; empty: from the device (/dev/ttyUSB0: ttyusb0, -: stdio)",
		port: func(p *daemon.PortConfig) any { return &p.Name },
		doc: "The port's name: the <port> token in subjects, and the `port` field of the logs.\n" +
			"Lowercase letters, digits, '-' and '_'; each port its own. Left out, it is made\n" +
			"from the device's file name: /dev/ttyUSB0 gives \"ttyusb0\", - gives \"stdio\"."},
	{key: "port.device", group: GroupPort, def: "", example: "/dev/serial/by-id/usb-FTDI_FT232R_USB_UART_A50285BI-if00-port0", alias: "port",
		help: "the scoreboard's serial device `PATH`, or - for stdin and stdout; none: workers only",
		port: func(p *daemon.PortConfig) any { return &p.Device },
		doc: "The serial device: replace this one by yours. `scoreboard ports` lists the serial\n" +
			"ports this machine has; prefer their stable /dev/serial/by-id/... path, since\n" +
			"/dev/ttyUSB0 may become /dev/ttyUSB1 after a replug. \"-\" is stdin/stdout. Required.\n" +
			"A path that is no serial port, or that this user may not open (add it to the\n" +
			"dialout group), or a /dev/tty... that does not exist, stops the port at start with\n" +
			"the fix; a by-id path not there yet is an adapter not plugged in, opened when it\n" +
			"comes."},
	{key: "port.problem", group: GroupPort, def: "", example: "goscore", alias: "problem",
		help: "the `problem` the port's dumps are: capture, goscore, othello, replay or territory",
		port: func(p *daemon.PortConfig) any { return &p.Problem },
		doc:  "What the scoreboard dumps: goscore, replay, territory, othello or capture. Required.",
		check: func(v any) string {
			if _, ok := engine.Lookup(v.(string)); !ok && v != "" {
				return ProblemError(v.(string)).Error()
			}
			return ""
		}},
	{key: "port.baud", group: GroupPort, def: 9600, alias: "baud",
		help: "the serial line's speed, in bits per second",
		port: func(p *daemon.PortConfig) any { return &p.Line.Baud },
		doc:  "Line settings. The defaults are 9600 8N1.",
		check: func(v any) string {
			return errMsg(serialio.LineSettings{Baud: v.(int)}.Validate())
		}},
	{key: "port.data_bits", group: GroupPort, def: 8, alias: "data-bits",
		help: "the serial line's data bits, 5 to 8",
		port: func(p *daemon.PortConfig) any { return &p.Line.DataBits },
		check: func(v any) string {
			return errMsg(serialio.LineSettings{DataBits: v.(int)}.Validate())
		}},
	{key: "port.parity", group: GroupPort, def: "none", alias: "parity",
		help: "the serial line's parity: none, odd, even, mark or space",
		port: func(p *daemon.PortConfig) any { return &p.Line.Parity },
		check: func(v any) string {
			return errMsg(serialio.LineSettings{Parity: v.(string)}.Validate())
		}},
	{key: "port.stop_bits", group: GroupPort, def: "1", alias: "stop-bits",
		help: "the serial line's stop bits: 1, 1.5 or 2",
		port: func(p *daemon.PortConfig) any { return &p.Line.StopBits },
		check: func(v any) string {
			return errMsg(serialio.LineSettings{StopBits: v.(string)}.Validate())
		}},
	{key: "port.error_line", group: GroupPort, def: false, alias: "error-line",
		help: "write a one-line error to the port for a unit that gets no answer (the contest protocol has none)",
		port: func(p *daemon.PortConfig) any { return &p.ErrorLine },
		doc: "A unit that cannot be answered (bad input, or no worker in time) is logged and\n" +
			"published as an error result; the scoreboard gets nothing, as the contest protocol\n" +
			"has no error line. true writes a one-line error to the port instead."},
	{key: "port.table", group: GroupPort, def: 0, example: 12,
		help: "the tournament `table` played on the port: the pairings loaded name its players (0: none)",
		port: func(p *daemon.PortConfig) any { return &p.Table },
		doc: "The tournament table played on this scoreboard: `scoreboard pairings load` gives\n" +
			"the port that table's game, whose players the page, the history and the game\n" +
			"records name (docs/pairings.md). 0, or left out: no players shown.",
		check: func(v any) string {
			if n := v.(int); n < 0 || n > pairing.MaxTable {
				return fmt.Sprintf("%d: want 0 (none) to %d", n, pairing.MaxTable)
			}
			return ""
		}},
	{key: "port.on_reopen", group: GroupPort, def: daemon.OnReopenDrop, also: daemon.OnReopenWrite, alsoNote: "a scoreboard that keeps its place",
		help: "an answer whose unit was read before the device went away and came back: \"drop\" it (a scoreboard that rebooted) or \"write\" it (a cable bumped)",
		port: func(p *daemon.PortConfig) any { return &p.OnReopen },
		doc: "An answer whose unit was read before the device went away and came back: \"drop\"\n" +
			"(the default) counts it dropped, for a scoreboard that rebooted would take it for\n" +
			"its first unit's answer, and every later one would be off by one; \"write\" writes\n" +
			"it to the device when it is back, for a cable that was bumped.",
		check: func(v any) string {
			if s := v.(string); s != daemon.OnReopenDrop && s != daemon.OnReopenWrite {
				return fmt.Sprintf("%q: want %q (a scoreboard that rebooted) or %q (a cable bumped)", s, daemon.OnReopenDrop, daemon.OnReopenWrite)
			}
			return ""
		}},
}

// All is every setting, in the order of the help and the example config.
func All() []*Setting { return settings }

// Key is the setting's key in the config file: "history.max_bytes", "port.baud".
func (s *Setting) Key() string { return s.key }

// Default is the setting's default: a string, an int, a bool or a time.Duration.
func (s *Setting) Default() any { return s.def }

// Alias is the flag's former name, or "".
func (s *Setting) Alias() string { return s.alias }

// The name rule: Flag is the key's flag, Env its environment variable.
func (s *Setting) Flag() string { return strings.NewReplacer(".", "-", "_", "-").Replace(s.key) }
func (s *Setting) Env() string {
	return "SCOREBOARD_" + strings.ToUpper(strings.ReplaceAll(s.key, ".", "_"))
}

// table and name split the key: "nats", "url"; a port key is "port", "baud".
func (s *Setting) table() string { t, _, _ := strings.Cut(s.key, "."); return t }
func (s *Setting) name() string  { _, n, _ := strings.Cut(s.key, "."); return n }

// Usage is the flag's help: the help and where else the setting comes from.
func (s *Setting) Usage() string { return s.help + " [$" + s.Env() + "]" }

// Which settings each command takes.
var (
	NATSClientKeys = []string{"nats.url", "nats.user", "nats.password", "nats.token", "nats.nkey", "nats.creds",
		"nats.tls_ca", "nats.tls_cert", "nats.tls_key", "nats.prefix"}
	LogKeys = []string{"log.level", "log.format"}
	// MemoryKey is run's and the hub's memory budget.
	MemoryKey = "memory.budget"
)

// Hub says whether the setting is scoreboard hub's alone (a league hub's [league]).
func (s *Setting) Hub() bool { return s.hub }

// RunKeys are the keys of run's settings: every one but the league hub's own.
func RunKeys() []string {
	var keys []string
	for _, s := range settings {
		if !s.hub {
			keys = append(keys, s.key)
		}
	}
	return keys
}

// HubKeys are scoreboard hub's: its [league], its NATS client's, its log's.
func HubKeys() []string {
	var keys []string
	for _, s := range settings {
		if s.hub {
			keys = append(keys, s.key)
		}
	}
	return append(append(append(keys, NATSClientKeys...), LogKeys...), MemoryKey)
}

// Lookup returns the settings of keys; none is every setting.
func Lookup(keys ...string) []*Setting {
	if len(keys) == 0 {
		return settings
	}
	var out []*Setting
	for _, k := range keys {
		out = append(out, ByKey(k))
	}
	return out
}

func ByKey(key string) *Setting {
	for _, s := range settings {
		if s.key == key {
			return s
		}
	}
	panic("no setting " + key)
}

// GroupAnnotation carries a flag's group to the help (help.go).
const GroupAnnotation = "scoreboard_group"

// Bind defines the flags of ss on fs, storing into c (and a [[port]]'s into
// p): with their defaults, their group, and their former names.
func Bind(fs *pflag.FlagSet, ss []*Setting, c *Config, p *daemon.PortConfig) {
	aliases := map[string]string{}
	for _, s := range ss {
		ptr := s.ptr(c, p)
		name := s.Flag()
		bindValue(fs, name, ptr, s.def, s.Usage())
		_ = fs.SetAnnotation(name, GroupAnnotation, []string{s.group})
		switch {
		case strings.HasPrefix(s.alias, "no-"):
			b := ptr.(*bool)
			fs.Var(&negatedBool{b}, s.alias, "the negation of --"+name)
			fs.Lookup(s.alias).NoOptDefVal = "true"
			_ = fs.MarkHidden(s.alias)
		case s.alias != "":
			aliases[s.alias] = name
		}
	}
	if len(aliases) > 0 {
		fs.SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
			if n, ok := aliases[name]; ok {
				return pflag.NormalizedName(n)
			}
			return pflag.NormalizedName(name)
		})
	}
}

// ptr is where s's value lives in c, or in p for a port's.
func (s *Setting) ptr(c *Config, p *daemon.PortConfig) any {
	if s.port != nil {
		return s.port(p)
	}
	return s.global(c)
}

func bindValue(fs *pflag.FlagSet, name string, ptr, def any, usage string) {
	switch p := ptr.(type) {
	case *string:
		fs.StringVar(p, name, def.(string), usage)
	case *int:
		fs.IntVar(p, name, def.(int), usage)
	case *bool:
		fs.BoolVar(p, name, def.(bool), usage)
	case *time.Duration:
		fs.DurationVar(p, name, def.(time.Duration), usage)
	default:
		panic(fmt.Sprintf("setting %s: unsupported type %T", name, ptr))
	}
}

// negatedBool is a bool flag that stores its negation: --no-workers.
type negatedBool struct{ p *bool }

func (b *negatedBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	*b.p = !v
	return err
}
func (b *negatedBool) String() string {
	if b.p == nil {
		return "false"
	}
	return fmt.Sprint(!*b.p)
}
func (b *negatedBool) Type() string { return "bool" }

// checkHTTP checks a page's listener.
func checkHTTP(v any) string {
	if h := v.(string); h != HTTPOff {
		if _, _, err := net.SplitHostPort(h); err != nil {
			return fmt.Sprintf("%q: want HOST:PORT (127.0.0.1:8080, 0.0.0.0:8080) or \"off\"", h)
		}
	}
	return ""
}

// checkMetrics checks a metrics listener: "page", "off" or HOST:PORT.
func checkMetrics(v any) string { return errMsg(web.CheckMetrics(v.(string))) }

// checkOrigins checks the origins that may frame the embed page.
func checkOrigins(v any) string {
	_, err := web.ParseOrigins(v.(string))
	return errMsg(err)
}

// checkProxies checks the trusted proxies' addresses.
func checkProxies(v any) string {
	_, err := web.ParseProxies(v.(string))
	return errMsg(err)
}

// nonNegative checks a bound, where 0 is none.
func nonNegative(v any) string {
	if n := v.(int); n < 0 {
		return fmt.Sprintf("%d: want 0 (no bound) or more", n)
	}
	return ""
}

// The ranges that work of the duration and size settings. Each bound says why in
// its check's message.
const (
	// A unit's worker must have time to solve it on a small board (capture's worst
	// case, 13 ms on the development machine, some 20 times that on a Pi), and the
	// display writer's busy turn (an eighth of it) must stay well inside the health
	// check's 10 s: at 80 s it passed it, the watchdog's pings stopped and systemd
	// restarted the daemon over and over; at 1 ms every unit failed.
	MinRequestTimeout = 500 * time.Millisecond
	MaxRequestTimeout = 20 * time.Second
	// The drain, the last writes (2 s) and the history's settling (1 s) must end
	// within the service's TimeoutStopSec=30s, or systemd kills the daemon mid-stop.
	// A drain of a millisecond works: each unit in flight gets its outcome, stopped.
	MinDrain = time.Millisecond
	MaxDrain = 25 * time.Second
	// A history's age limit: at least an hour (below the stream's 2-minute
	// deduplication window a unit sent again would be kept twice, and a history of
	// minutes is none); at most 100 years (a duration in nanoseconds ends at 292).
	MinAge = time.Hour
	MaxAge = 36500 * 24 * time.Hour
	// A history's size limit: room for thousands of the largest units and their
	// results, and no more than a disk holds (the store is fitted to its disk below).
	MinSize = 16 << 20
	MaxSize = 64 << 40
	// The store's sync interval: below 100 ms, "always" says it; beyond 10 minutes a
	// power cut loses a tournament's round.
	MinSync = 100 * time.Millisecond
	MaxSync = 10 * time.Minute
)

// durationIn checks a duration against the range that works; why says the range's
// reason in the error.
func durationIn(lo, hi time.Duration, why string) func(any) string {
	return func(v any) string {
		if d := v.(time.Duration); d < lo || d > hi {
			return fmt.Sprintf("%v: want %v to %v (%s)", d, lo, hi, why)
		}
		return ""
	}
}

// checkAge checks a history's age limit: 90d, 36h.
func checkAge(v any) string {
	d, err := history.ParseAge(v.(string))
	if err != nil || d <= 0 {
		return fmt.Sprintf("%q: want 1h to 36500d, such as 90d, 36h or 1d12h", v)
	}
	if d < MinAge || d > MaxAge {
		return fmt.Sprintf("%q: want 1h to 36500d (shorter than an hour the history is none, and a unit sent again "+
			"after the stream's 2-minute deduplication window would be kept twice; longer than 100 years overflows)", v)
	}
	return ""
}

// checkSize checks a history's size limit: 1GiB, 512MiB.
func checkSize(v any) string {
	n, err := history.ParseSize(v.(string))
	if err != nil || n <= 0 {
		return fmt.Sprintf("%q: want 16MiB to 64TiB, such as 1GiB, 512MiB or 100MB", v)
	}
	if n < MinSize || n > MaxSize {
		return fmt.Sprintf("%q: want 16MiB to 64TiB (less holds too few units and results; the store is fitted to its disk anyway)", v)
	}
	return ""
}

// checkSync checks the store's sync: "always" or an interval.
func checkSync(v any) string {
	s, err := history.ParseSync(v.(string))
	if err != nil {
		return err.Error()
	}
	if !s.Always && (s.Interval < MinSync || s.Interval > MaxSync) {
		return fmt.Sprintf("%q: want %q or an interval of %v to %v (below, \"always\" says it; beyond, a power cut loses too much)",
			v, history.SyncAlways, MinSync, MaxSync)
	}
	return ""
}

// checkListen checks a NATS listener, HOST:PORT.
func checkListen(v any) string {
	if _, _, err := bus.ParseListen(v.(string)); err != nil {
		return err.Error()
	}
	return ""
}

// checkDelay checks a page's delay: 0 (live) to web.MaxDelay.
func checkDelay(v any) string { return errMsg(web.CheckDelay(v.(time.Duration))) }

// errMsg is err's message, or "".
func errMsg(err error) string {
	if err != nil {
		return err.Error()
	}
	return ""
}

// errString is the message of the last error, or "": errString(f()) for a function
// that returns a value and an error.
func errString[T any](_ T, err error) string {
	if err != nil {
		return err.Error()
	}
	return ""
}

// Suggest is what the user may have meant by typed among names, by cobra's rule for
// commands (a prefix of it, or two edits away): the same for commands, flags and
// problems.
func Suggest(typed string, names []string) string {
	if typed == "" {
		return ""
	}
	c := &cobra.Command{SuggestionsMinimumDistance: 2}
	for _, n := range names {
		c.AddCommand(&cobra.Command{Use: n, Run: func(*cobra.Command, []string) {}})
	}
	if s := c.SuggestionsFor(typed); len(s) > 0 {
		return s[0]
	}
	return ""
}

// ProblemError says a problem is unknown, and what the user may have meant.
func ProblemError(name string) error {
	return &engine.UnknownProblemError{Name: name, Hint: Suggest(name, engine.Names())}
}
