package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/daemon"
	"github.com/goclub/scoreboard/engine"
	"github.com/goclub/scoreboard/history"
	"github.com/goclub/scoreboard/logging"
	"github.com/goclub/scoreboard/serialio"
)

// config is what run and work are configured with. Each setting comes from, in order
// of precedence: a flag given on the command line, the environment (secrets only), the
// config file (--config), the default. configs/scoreboard.toml documents every key.
type config struct {
	NATS    configNATS
	Log     configLog
	Daemon  configDaemon
	History configHistory
	HTTP    configHTTP
	Ports   []configPort
}

// configHTTP is the page's listener (web.go): HOST:PORT, or "off".
type configHTTP struct {
	Listen string
}

type configNATS struct {
	Listen string // the embedded server's listener, HOST:PORT or "off"; unused with URL
	// What clients of the embedded server's listener must present: a token, or a
	// user and password. Required to listen beyond loopback.
	ListenToken, ListenUser, ListenPassword string
	URL                                     string // an existing server or cluster, comma-separated; "" embeds one

	User, Password string
	Token          string
	NKey           string // a file holding an nkey seed
	Creds          string // a .creds file
	TLSCA          string // PEM files
	TLSCert        string
	TLSKey         string

	Prefix string // the subjects' first token(s)
}

type configLog struct {
	Level  string // trace, debug, info, warn, error
	Format string // json, console, journald; "" picks one from where stderr goes
}

// configDaemon is the daemon's timing, as Go durations ("2s", "500ms").
type configDaemon struct {
	RequestTimeout string // how long a unit waits for a worker before it is sent again
	Drain          string // how long units in flight may still be answered when stopping
	StateDir       string // the history's store (embedded server); "" for the default
	Workers        bool   // solve here; false leaves it to `scoreboard work` elsewhere
}

// configHistory is the history kept in JetStream (history.go).
type configHistory struct {
	Enabled  bool
	MaxAge   string // "90d", "36h"
	MaxBytes string // "1GiB", "512MiB"
	Replicas int    // copies of the stream and bucket on a cluster
	Sync     string // "always" or an interval: the embedded server's store sync
}

type configPort struct {
	Name    string // the <port> token in subjects
	Device  string // a serial device path, or "-" for stdin/stdout
	Problem string
	serialio.LineSettings
	ErrorLine bool // write a one-line error to the port for a unit that failed
}

// Defaults, where the file and the flags leave a setting out. A port's name defaults
// to one made from its device (daemon.DefaultName: /dev/ttyUSB0 is "ttyusb0", - is
// "stdio"), so several ports need not be named; hence no default name here.
const (
	defaultPortName = ""
	defaultLogLevel = "info"

	defaultRequestTimeout = 2 * time.Second
	defaultDrain          = 5 * time.Second

	defaultHistoryMaxAge   = "90d"
	defaultHistoryMaxBytes = "1GiB"
)

func defaultConfig() config {
	return config{
		NATS: configNATS{Listen: bus.DefaultListen, Prefix: bus.DefaultPrefix},
		Log:  configLog{Level: defaultLogLevel},
		HTTP: configHTTP{Listen: defaultHTTP},
		Daemon: configDaemon{
			RequestTimeout: defaultRequestTimeout.String(),
			Drain:          defaultDrain.String(),
			Workers:        true,
		},
		History: configHistory{Enabled: true, MaxAge: defaultHistoryMaxAge, MaxBytes: defaultHistoryMaxBytes, Replicas: 1, Sync: history.DefaultSync},
	}
}

// Environment variables that carry secrets, so they need not be in the file or in the
// process list. The flags' help names them too (natsflags.go).
var configEnv = []struct{ name, key string }{
	{"SCOREBOARD_NATS_PASSWORD", "nats.password"},
	{"SCOREBOARD_NATS_TOKEN", "nats.token"},
	{"SCOREBOARD_NATS_LISTEN_TOKEN", "nats.listen_token"},
	{"SCOREBOARD_NATS_LISTEN_PASSWORD", "nats.listen_password"},
}

var globalSettings = []setting[config]{
	{key: "nats.listen", flag: "nats-listen", str: func(c *config) *string { return &c.NATS.Listen }},
	{key: "nats.url", flag: "nats-url", str: func(c *config) *string { return &c.NATS.URL }},
	{key: "nats.user", flag: "nats-user", str: func(c *config) *string { return &c.NATS.User }},
	{key: "nats.password", flag: "nats-password", str: func(c *config) *string { return &c.NATS.Password }},
	{key: "nats.token", flag: "nats-token", str: func(c *config) *string { return &c.NATS.Token }},
	{key: "nats.nkey", flag: "nats-nkey", str: func(c *config) *string { return &c.NATS.NKey }},
	{key: "nats.creds", flag: "nats-creds", str: func(c *config) *string { return &c.NATS.Creds }},
	{key: "nats.tls_ca", flag: "nats-tls-ca", str: func(c *config) *string { return &c.NATS.TLSCA }},
	{key: "nats.tls_cert", flag: "nats-tls-cert", str: func(c *config) *string { return &c.NATS.TLSCert }},
	{key: "nats.tls_key", flag: "nats-tls-key", str: func(c *config) *string { return &c.NATS.TLSKey }},
	{key: "nats.prefix", flag: "nats-prefix", str: func(c *config) *string { return &c.NATS.Prefix }},
	{key: "nats.listen_token", flag: "nats-listen-token", str: func(c *config) *string { return &c.NATS.ListenToken }},
	{key: "nats.listen_user", flag: "nats-listen-user", str: func(c *config) *string { return &c.NATS.ListenUser }},
	{key: "nats.listen_password", flag: "nats-listen-password", str: func(c *config) *string { return &c.NATS.ListenPassword }},
	{key: "log.level", flag: "log-level", str: func(c *config) *string { return &c.Log.Level }},
	{key: "log.format", flag: "log-format", str: func(c *config) *string { return &c.Log.Format }},
	{key: "daemon.request_timeout", flag: "request-timeout", str: func(c *config) *string { return &c.Daemon.RequestTimeout }},
	{key: "daemon.drain", flag: "drain", str: func(c *config) *string { return &c.Daemon.Drain }},
	{key: "daemon.state_dir", flag: "state-dir", str: func(c *config) *string { return &c.Daemon.StateDir }},
	{key: "daemon.workers", flag: "no-workers", negated: true, boolean: func(c *config) *bool { return &c.Daemon.Workers }},
	{key: "history.enabled", flag: "history", boolean: func(c *config) *bool { return &c.History.Enabled }},
	{key: "history.max_age", flag: "history-max-age", str: func(c *config) *string { return &c.History.MaxAge }},
	{key: "history.max_bytes", flag: "history-max-bytes", str: func(c *config) *string { return &c.History.MaxBytes }},
	{key: "history.sync", flag: "history-sync", str: func(c *config) *string { return &c.History.Sync }},
	{key: "history.replicas", flag: "history-replicas", num: func(c *config) *int { return &c.History.Replicas }},
	{key: "http.listen", flag: "http", str: func(c *config) *string { return &c.HTTP.Listen }},
}

var portSettings = []setting[configPort]{
	{key: "name", flag: "port-name", str: func(p *configPort) *string { return &p.Name }},
	{key: "device", flag: "port", str: func(p *configPort) *string { return &p.Device }},
	{key: "problem", flag: "problem", str: func(p *configPort) *string { return &p.Problem }},
	{key: "baud", flag: "baud", num: func(p *configPort) *int { return &p.Baud }},
	{key: "data_bits", flag: "data-bits", num: func(p *configPort) *int { return &p.DataBits }},
	{key: "parity", flag: "parity", str: func(p *configPort) *string { return &p.Parity }},
	{key: "stop_bits", flag: "stop-bits", str: func(p *configPort) *string { return &p.StopBits }},
	{key: "error_line", flag: "error-line", boolean: func(p *configPort) *bool { return &p.ErrorLine }},
}

// loadConfig builds the configuration from the file at path (none if path is empty),
// the environment and the flags of fs given on the command line. fs must be parsed;
// flags it does not define are skipped, so run and work share this. A configuration
// that cannot work (an unknown key, a wrong type, a port without a device, an unknown
// problem...) is an error listing every *configError found, before anything starts.
func loadConfig(path string, fs *flag.FlagSet) (config, error) {
	var data []byte
	if path != "" {
		var err error
		if data, err = os.ReadFile(path); err != nil {
			return config{}, fmt.Errorf("config: %w (--config names a TOML file; configs/scoreboard.toml in the source is an example)", err)
		}
	}
	return parseConfig(path, data, fs, os.LookupEnv)
}

// parseConfig is loadConfig on the file's contents, with the environment from getenv.
func parseConfig(path string, data []byte, fs *flag.FlagSet, getenv func(string) (string, bool)) (config, error) {
	l := &configLoader{c: defaultConfig(), file: path, src: map[string]string{}, inFile: map[string]bool{}}
	if path != "" {
		l.readFile(data)
	}
	for _, e := range configEnv {
		if v, ok := getenv(e.name); ok && v != "" {
			for _, s := range globalSettings {
				if s.key == e.key {
					*s.str(&l.c) = v
					l.src[e.key] = "$" + e.name
				}
			}
		}
	}
	if fs != nil {
		l.flags(fs)
	}
	l.validate()
	return l.c, errors.Join(l.errs...)
}

// configLoader collects the settings and their sources, and every error.
type configLoader struct {
	c    config
	file string
	// src tells where a setting came from, for error messages: "$VAR", "--flag", or
	// absent for the file or a default. Port keys are "port.N.key", N from 0.
	src    map[string]string
	inFile map[string]bool // keys set by the file
	// portFromFlags: the one port was made from the flags, the file having none.
	portFromFlags bool
	errs          []error
}

// fail records an error about key, which came from the source src says.
func (l *configLoader) fail(key string, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if src, ok := l.src[key]; ok {
		l.errs = append(l.errs, &configError{Key: src, Msg: msg})
		return
	}
	if field, ok := strings.CutPrefix(key, "port.0."); ok && l.portFromFlags {
		// The port came from the command line: point at the flag to add.
		i := slices.IndexFunc(portSettings, func(s setting[configPort]) bool { return s.key == field })
		l.errs = append(l.errs, &configError{Key: "--" + portSettings[i].flag, Msg: msg})
		return
	}
	l.errs = append(l.errs, &configError{File: l.file, Key: l.describeKey(key), Msg: msg})
}

// describeKey turns "port.1.baud" into `[[port]] 2 ("lobby") baud`: the index as a
// reader counts the tables in the file, and the name to find it by.
func (l *configLoader) describeKey(key string) string {
	rest, ok := strings.CutPrefix(key, "port.")
	if !ok {
		return key
	}
	idx, field, _ := strings.Cut(rest, ".")
	i, err := strconv.Atoi(idx)
	if err != nil {
		return key
	}
	s := fmt.Sprintf("[[port]] %d", i+1)
	if i < len(l.c.Ports) && l.c.Ports[i].Name != "" {
		s += fmt.Sprintf(" (%q)", l.c.Ports[i].Name)
	}
	if field != "" {
		s += " " + field
	}
	return s
}

// readFile reads the TOML file over the defaults.
func (l *configLoader) readFile(data []byte) {
	var raw map[string]any
	if _, err := toml.Decode(string(data), &raw); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			// LastKey is the last key TOML parsed, not always the one in error.
			msg := pe.Message
			if pe.LastKey != "" {
				msg += fmt.Sprintf(" (after key %s)", pe.LastKey)
			}
			// TOML counts an error at a line's "\n" on the next line; the byte offset
			// says where it really is.
			line := pe.Position.Line
			if start := pe.Position.Start; start >= 0 && start < len(data) {
				line = 1 + bytes.Count(data[:start], []byte("\n"))
			}
			l.errs = append(l.errs, &configError{File: l.file, Line: line, Msg: msg})
		} else {
			l.errs = append(l.errs, &configError{File: l.file, Msg: err.Error()})
		}
		return
	}
	// In a fixed order, so that the errors are listed the same way every time.
	for _, key := range slices.Sorted(maps.Keys(raw)) {
		v := raw[key]
		switch key {
		case "nats", "log", "daemon", "history", "http":
			t, ok := v.(map[string]any)
			if !ok {
				l.fail(key, "want a table [%s], got %s", key, describeValue(v))
				continue
			}
			for _, k := range slices.Sorted(maps.Keys(t)) {
				v := t[k]
				full := key + "." + k
				i := slices.IndexFunc(globalSettings, func(s setting[config]) bool { return s.key == full })
				if i < 0 {
					l.fail(full, "unknown key (known in [%s]: %s)", key, knownKeys(key))
					continue
				}
				s := globalSettings[i]
				l.set(full, v, ptr(s.str, &l.c), ptr(s.num, &l.c), ptr(s.boolean, &l.c))
			}
		case "port":
			tables, ok := v.([]map[string]any)
			if !ok {
				l.fail(key, "want one [[port]] table per port (double brackets), got %s", describeValue(v))
				continue
			}
			l.c.Ports = make([]configPort, len(tables))
			for i, t := range tables {
				// The name first, so that errors about the other keys can show it.
				if name, ok := t["name"].(string); ok {
					l.c.Ports[i].Name = name
				}
				for _, k := range slices.Sorted(maps.Keys(t)) {
					v := t[k]
					full := fmt.Sprintf("port.%d.%s", i, k)
					j := slices.IndexFunc(portSettings, func(s setting[configPort]) bool { return s.key == k })
					if j < 0 {
						l.fail(full, "unknown key (known in [[port]]: %s)", knownKeys("port"))
						continue
					}
					s, p := portSettings[j], &l.c.Ports[i]
					l.set(full, v, ptr(s.str, p), ptr(s.num, p), ptr(s.boolean, p))
				}
			}
		default:
			l.fail(key, "unknown key (known: the tables [nats], [log], [daemon], [history], [http] and [[port]])")
		}
	}
}

// set stores a file value through storeTOML, remembering that the file set key.
func (l *configLoader) set(key string, v any, str *string, num *int, boolean *bool) {
	l.inFile[key] = true
	if msg := storeTOML(v, str, num, boolean); msg != "" {
		l.fail(key, "%s", msg)
	}
}

func knownKeys(table string) string {
	var keys []string
	if table == "port" {
		for _, s := range portSettings {
			keys = append(keys, s.key)
		}
	} else {
		for _, s := range globalSettings {
			if k, ok := strings.CutPrefix(s.key, table+"."); ok {
				keys = append(keys, k)
			}
		}
	}
	return strings.Join(keys, ", ")
}

// flags applies the flags given on the command line. The port flags apply to the
// one port: the file's only [[port]], or a port of their own when the file has none
// (then --port is needed). With several ports in the file they would be ambiguous.
func (l *configLoader) flags(fs *flag.FlagSet) {
	var portFlags []*flag.Flag
	fs.Visit(func(f *flag.Flag) {
		if i := slices.IndexFunc(globalSettings, func(s setting[config]) bool { return s.flag == f.Name }); i >= 0 {
			s := globalSettings[i]
			l.src[s.key] = "--" + f.Name
			s.applyFlag(&l.c, f.Value.String())
		}
		if slices.ContainsFunc(portSettings, func(s setting[configPort]) bool { return s.flag == f.Name }) {
			portFlags = append(portFlags, f)
		}
	})
	if len(portFlags) == 0 {
		return
	}
	switch len(l.c.Ports) {
	case 0:
		if !slices.ContainsFunc(portFlags, func(f *flag.Flag) bool { return f.Name == "port" }) {
			l.errs = append(l.errs, &configError{Key: "--" + portFlags[0].Name, Msg: "no port to apply it to: give --port too, or a [[port]] in the config file"})
			return
		}
		l.c.Ports = []configPort{{}}
		l.portFromFlags = true
	case 1:
	default:
		l.errs = append(l.errs, &configError{Key: "--" + portFlags[0].Name,
			Msg: fmt.Sprintf("the config file %s has %d ports: set it in each one's [[port]] table", l.file, len(l.c.Ports))})
		return
	}
	p := &l.c.Ports[0]
	for _, f := range portFlags {
		s := portSettings[slices.IndexFunc(portSettings, func(s setting[configPort]) bool { return s.flag == f.Name })]
		key := "port.0." + s.key
		l.src[key] = "--" + f.Name
		if msg := s.parseFlag(p, f.Value.String()); msg != "" {
			l.fail(key, "%s", msg)
		}
	}
}

// validate checks what can be checked before anything starts.
func (l *configLoader) validate() {
	n := &l.c.NATS
	if n.URL == "" {
		if n.Listen != bus.ListenOff {
			if host, _, err := bus.ParseListen(n.Listen); err != nil {
				l.fail("nats.listen", "%v", err)
			} else if !bus.Loopback(host) && n.ListenToken == "" && n.ListenUser == "" {
				l.fail("nats.listen", "%q is beyond loopback, where anyone could publish dumps and read results: "+
					"set --nats-listen-token ($SCOREBOARD_NATS_LISTEN_TOKEN, nats.listen_token), or "+
					"--nats-listen-user and --nats-listen-password ($SCOREBOARD_NATS_LISTEN_PASSWORD, "+
					"nats.listen_user and nats.listen_password)", n.Listen)
			}
		}
		switch {
		case n.ListenToken != "" && n.ListenUser != "":
			l.fail("nats.listen_token", "give the listener either a token or nats.listen_user and a password, not both")
		case (n.ListenUser == "") != (n.ListenPassword == ""):
			l.fail("nats.listen_user", "nats.listen_user and nats.listen_password go together")
		}
	} else {
		// A --nats-url given on the command line wins over the file's listener; from
		// the same place, or a --nats-listen against the file's URL, they contradict
		// each other.
		_, urlFlag := l.src["nats.url"]
		_, listenFlag := l.src["nats.listen"]
		if listenFlag || (l.inFile["nats.listen"] && !urlFlag) {
			l.fail("nats.listen", "the embedded server's listener cannot go with nats.url (an existing server)")
		}
		// The URLs may carry a password or a token: errors show them redacted.
		for u := range strings.SplitSeq(n.URL, ",") {
			u = strings.TrimSpace(u)
			pu, err := url.Parse(u)
			switch {
			case u == "":
				l.fail("nats.url", "empty URL in %q", bus.RedactURL(n.URL))
			case err != nil:
				l.fail("nats.url", "%q is not a URL: want nats://HOST:PORT (or tls://, ws://, wss://)", bus.RedactURL(u))
			case pu.Host == "" || !slices.Contains([]string{"nats", "tls", "ws", "wss"}, pu.Scheme):
				l.fail("nats.url", "%q: want nats://HOST:PORT (or tls://, ws://, wss://)", bus.RedactURL(u))
			}
		}
	}
	if n.Password != "" && n.User == "" {
		l.fail("nats.password", "a password without nats.user")
	}
	if n.Token != "" && n.User != "" {
		l.fail("nats.token", "give either a token or nats.user and a password, not both")
	}
	if (n.TLSCert == "") != (n.TLSKey == "") {
		l.fail("nats.tls_cert", "nats.tls_cert and nats.tls_key go together")
	}
	for _, f := range []struct{ key, file string }{{"nats.nkey", n.NKey}, {"nats.creds", n.Creds},
		{"nats.tls_ca", n.TLSCA}, {"nats.tls_cert", n.TLSCert}, {"nats.tls_key", n.TLSKey}} {
		key, file := f.key, f.file
		if file == "" {
			continue
		}
		if fi, err := os.Stat(file); err != nil {
			l.fail(key, "%v", err)
		} else if fi.IsDir() {
			l.fail(key, "%s is a directory, want a file", file)
		}
	}
	if h := l.c.HTTP.Listen; h != httpOff {
		if _, _, err := net.SplitHostPort(h); err != nil {
			l.fail("http.listen", "%q: want HOST:PORT (127.0.0.1:8080, 0.0.0.0:8080) or \"off\"", h)
		}
	}
	if !bus.ValidPrefix(n.Prefix) {
		l.fail("nats.prefix", "%q: want dot-separated tokens of lowercase letters, digits, '-' and '_'", n.Prefix)
	}
	if _, err := logging.ParseLevel(l.c.Log.Level); err != nil {
		l.fail("log.level", "%v", err)
	}
	if _, err := logging.ParseFormat(l.c.Log.Format); err != nil {
		l.fail("log.format", "%v", err)
	}
	for _, d := range []struct{ key, v string }{
		{"daemon.request_timeout", l.c.Daemon.RequestTimeout},
		{"daemon.drain", l.c.Daemon.Drain},
	} {
		if v, err := time.ParseDuration(d.v); err != nil || v <= 0 {
			l.fail(d.key, "%q: want a positive duration such as 2s or 500ms", d.v)
		}
	}
	if h := l.c.History; h.Enabled {
		if v, err := history.ParseAge(h.MaxAge); err != nil || v <= 0 {
			l.fail("history.max_age", "%q: want a positive duration such as 90d, 36h or 1d12h", h.MaxAge)
		}
		if v, err := history.ParseSize(h.MaxBytes); err != nil || v <= 0 {
			l.fail("history.max_bytes", "%q: want a positive size such as 1GiB, 512MiB or 100MB", h.MaxBytes)
		}
		if _, err := history.ParseSync(h.Sync); err != nil {
			l.fail("history.sync", "%v", err)
		}
		if h.Replicas < 1 || h.Replicas > 5 {
			l.fail("history.replicas", "%d: want 1 to 5 (JetStream's limit): 1 on one server, 3 on a 3-node cluster", h.Replicas)
		}
	}

	names, devices := map[string]int{}, map[string]int{}
	for i := range l.c.Ports {
		p := &l.c.Ports[i]
		key := func(k string) string { return fmt.Sprintf("port.%d.%s", i, k) }
		if p.Name == "" {
			p.Name = daemon.DefaultName(p.Device)
		}
		if !bus.ValidToken(p.Name) {
			l.fail(key("name"), "%q: want lowercase letters, digits, '-' and '_' (it is a subject token)", p.Name)
		} else if j, dup := names[p.Name]; dup {
			l.fail(key("name"), "%q is also the name of [[port]] %d: give each port its own name", p.Name, j+1)
		} else {
			names[p.Name] = i
		}
		switch j, dup := devices[p.Device]; {
		case p.Device == "":
			l.fail(key("device"), "missing: the serial device's path (such as /dev/serial/by-id/...), or - for stdin/stdout")
		case dup:
			l.fail(key("device"), "%s is also the device of [[port]] %d", p.Device, j+1)
		default:
			devices[p.Device] = i
		}
		if p.Problem == "" {
			l.fail(key("problem"), "missing: one of %s", strings.Join(engine.Names(), ", "))
		} else if _, ok := engine.Lookup(p.Problem); !ok {
			l.fail(key("problem"), "unknown problem %q: want one of %s", p.Problem, strings.Join(engine.Names(), ", "))
		}
		// Each setting on its own (the zero values are the defaults), so that an
		// error points at its key.
		for _, ls := range []struct {
			key string
			ls  serialio.LineSettings
		}{{"baud", serialio.LineSettings{Baud: p.Baud}}, {"data_bits", serialio.LineSettings{DataBits: p.DataBits}},
			{"parity", serialio.LineSettings{Parity: p.Parity}}, {"stop_bits", serialio.LineSettings{StopBits: p.StopBits}}} {
			if err := ls.ls.Validate(); err != nil {
				l.fail(key(ls.key), "%v", err)
			}
		}
	}
}
