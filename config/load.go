package config

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/spf13/pflag"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/daemon"
)

// Load lays the settings ss (settings.go) in order: their defaults, the config
// file at path (none if ""), the environment, then the flags given on cmdline (parsed;
// nil for none). Each layer is set through the same flag values, so a value is
// parsed one way wherever it comes from. A configuration that cannot work (an unknown
// key, a wrong type, a port without a device, an unknown problem...) is an error
// listing every *Error found, each naming where: the file, its line and the
// key; the flag; or the environment variable.
func Load(cmdline *pflag.FlagSet, ss []*Setting, path string) (Config, error) {
	var data []byte
	if path != "" {
		var err error
		if data, err = os.ReadFile(path); err != nil {
			return Config{}, fmt.Errorf("config: %w (--config names a TOML file; configs/scoreboard.toml in the source is an example)", err)
		}
	}
	return Parse(cmdline, ss, path, data, os.LookupEnv)
}

// Parse is Load on the file's contents, with the environment from getenv.
func Parse(cmdline *pflag.FlagSet, ss []*Setting, path string, data []byte, getenv func(string) (string, bool)) (Config, error) {
	l := &loader{ss: ss, file: path, from: map[string]string{}, lines: map[string]int{}, failed: map[string]bool{}}
	l.fs = pflag.NewFlagSet("config", pflag.ContinueOnError)
	Bind(l.fs, ss, &l.c, &daemon.PortConfig{})
	if path != "" {
		l.readFile(data)
	}
	l.environment(getenv)
	l.commandLine(cmdline)
	l.applyPort()
	l.validate()
	return l.c, errors.Join(l.errs...)
}

// loader lays the settings and collects every error.
type loader struct {
	c    Config
	ss   []*Setting
	fs   *pflag.FlagSet // bound to c: each layer sets through it
	file string
	// from tells where a setting came from when it was not the file or the default:
	// "--flag" or "$VAR". Keys are the settings', "port.N.KEY" for a port's (N from 0).
	from  map[string]string
	lines map[string]int // the file's line of each key, where TOML says
	// portFS are the file's ports' flag sets, bound to c.Ports.
	portFS []*pflag.FlagSet
	// overrides are the port settings from the environment and the command line, in
	// that order: they make or override the one port.
	overrides   []override
	portFromCmd bool            // the one port was made from them, the file having none
	failed      map[string]bool // keys with an error already: not checked again
	errs        []error
}

type override struct {
	s        *Setting
	v, where string
}

func (l *loader) takes(s *Setting) bool { return slices.Contains(l.ss, s) }

func (l *loader) has(key string) bool {
	return slices.ContainsFunc(l.ss, func(s *Setting) bool { return s.key == key })
}

func portKey(i int, name string) string { return fmt.Sprintf("port.%d.%s", i, name) }

// fail records an error about key, naming where it came from.
func (l *loader) fail(key string, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	l.failed[key] = true
	if src, ok := l.from[key]; ok {
		l.errs = append(l.errs, &Error{Key: src, Msg: msg})
		return
	}
	if name, ok := strings.CutPrefix(key, "port.0."); ok && l.portFromCmd {
		// The port came from the command line: point at the flag to add.
		l.errs = append(l.errs, &Error{Key: "--" + ByKey("port."+name).Flag(), Msg: msg})
		return
	}
	l.errs = append(l.errs, &Error{File: l.file, Line: l.lines[key], Key: l.describeKey(key), Msg: msg})
}

// describeKey turns "port.1.baud" into `[[port]] 2 ("lobby") baud`: the index as a
// reader counts the tables in the file, and the name to find it by.
func (l *loader) describeKey(key string) string {
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

// readFile lays the file over the defaults. Keys of settings the command does not
// take are skipped (work reads run's file); keys of no setting are errors.
func (l *loader) readFile(data []byte) {
	var doc map[string]toml.Primitive
	md, err := toml.Decode(string(data), &doc)
	if err != nil {
		var pe toml.ParseError
		if !errors.As(err, &pe) {
			l.errs = append(l.errs, &Error{File: l.file, Msg: err.Error()})
			return
		}
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
		l.errs = append(l.errs, &Error{File: l.file, Line: line, Msg: msg})
		return
	}
	tables := map[string]bool{}
	for _, s := range settings {
		tables[s.table()] = true
	}
	// In a fixed order, so that the errors are listed the same way every time.
	for _, key := range slices.Sorted(maps.Keys(doc)) {
		v, line := probe(md, doc[key])
		l.lines[key] = line
		switch {
		case key == "port":
			if _, ok := v.([]map[string]any); !ok {
				l.fail(key, "want one [[port]] table per port (double brackets), got %s", describeValue(v))
				continue
			}
			var ports []map[string]toml.Primitive
			if err := md.PrimitiveDecode(doc[key], &ports); err != nil {
				l.fail(key, "%v", err)
				continue
			}
			if l.has("port.device") {
				l.readPorts(md, ports, string(data))
			}
		case tables[key]:
			if _, ok := v.(map[string]any); !ok {
				l.fail(key, "want a table [%s], got %s", key, describeValue(v))
				continue
			}
			var t map[string]toml.Primitive
			if err := md.PrimitiveDecode(doc[key], &t); err != nil {
				l.fail(key, "%v", err)
				continue
			}
			for _, k := range slices.Sorted(maps.Keys(t)) {
				full := key + "." + k
				v, line := probe(md, t[k])
				l.lines[full] = line
				i := slices.IndexFunc(settings, func(s *Setting) bool { return s.key == full })
				switch {
				case i < 0 && removedKeys[full] != "":
					l.fail(full, "removed: %s", removedKeys[full])
				case i < 0:
					l.fail(full, "unknown key (known in [%s]: %s)", key, knownKeys(key))
				case l.takes(settings[i]):
					l.setFile(l.fs, settings[i], full, v)
				}
			}
		case key == "club":
			// A league hub's clubs: the league package reads them (and again on
			// SIGHUP). In a club's file they are a mistake.
			if !l.has("league.listen") {
				l.fail(key, "[[club]] tables are a league hub's (scoreboard hub --config); a club joins one with [hub] url and club")
			}
		default:
			l.fail(key, "unknown key (known: the tables [nats], [log], [daemon], [history], [http], [hub], [league] and [[port]], and a hub's [[club]])")
		}
	}
}

// readPorts makes a port of each [[port]] table, over the port settings' defaults.
// TOML keeps one position per key path, so with several [[port]] tables a key's
// line is found in the text (portKeyLine); the error names the table's number too.
func (l *loader) readPorts(md toml.MetaData, tables []map[string]toml.Primitive, text string) {
	l.c.Ports = make([]daemon.PortConfig, len(tables))
	l.portFS = make([]*pflag.FlagSet, len(tables))
	for i, t := range tables {
		l.portFS[i] = l.portFlags(&l.c.Ports[i])
		// The name first, so that errors about the other keys can show it.
		if v, _ := probe(md, t["name"]); v != nil {
			if name, ok := v.(string); ok {
				l.c.Ports[i].Name = name
			}
		}
		for _, k := range slices.Sorted(maps.Keys(t)) {
			full := portKey(i, k)
			v, line := probe(md, t[k])
			if len(tables) > 1 {
				line = portKeyLine(text, i, k)
			}
			l.lines[full] = line
			j := slices.IndexFunc(settings, func(s *Setting) bool { return s.key == "port."+k })
			if j < 0 {
				l.fail(full, "unknown key (known in [[port]]: %s)", knownKeys("port"))
				continue
			}
			l.setFile(l.portFS[i], settings[j], full, v)
		}
	}
}

// portKeyLine is the line (from 1) of key in the i-th (from 0) [[port]] table of a
// file TOML has parsed, or 0: the table's header is the i-th line that is one, and
// the key is the first line of that table that sets it.
func portKeyLine(text string, i int, key string) int {
	table := -1
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "[["):
			if strings.HasPrefix(strings.ReplaceAll(line, " ", ""), "[[port]]") {
				table++
			} else if table == i {
				return 0
			}
		case strings.HasPrefix(line, "["):
			if table == i {
				return 0
			}
		case table == i:
			k, _, ok := strings.Cut(line, "=")
			if ok && strings.Trim(strings.TrimSpace(k), `"'`) == key {
				return n + 1
			}
		}
	}
	return 0
}

// portFlags binds the port settings to p, with their defaults.
func (l *loader) portFlags(p *daemon.PortConfig) *pflag.FlagSet {
	fs := pflag.NewFlagSet("port", pflag.ContinueOnError)
	var ports []*Setting
	for _, s := range l.ss {
		if s.port != nil {
			ports = append(ports, s)
		}
	}
	Bind(fs, ports, nil, p)
	return fs
}

// setFile sets s from the file's value v, checking its TOML type.
func (l *loader) setFile(fs *pflag.FlagSet, s *Setting, key string, v any) {
	str, msg := tomlString(s.def, v)
	if msg != "" {
		l.fail(key, "%s", msg)
		return
	}
	if err := fs.Set(s.Flag(), str); err != nil {
		l.fail(key, "%q: want %s", str, wantType(s.def))
	}
}

// environment lays $SCOREBOARD_... over the file.
func (l *loader) environment(getenv func(string) (string, bool)) {
	for _, key := range RemovedKeys() {
		env := (&Setting{key: key}).Env()
		if v, ok := getenv(env); ok && v != "" && l.has("hub.url") {
			l.errs = append(l.errs, &Error{Key: "$" + env, Msg: "removed: " + removedKeys[key]})
		}
	}
	for _, s := range l.ss {
		v, ok := getenv(s.Env())
		if !ok || v == "" {
			continue
		}
		where := "$" + s.Env()
		if s.port != nil {
			l.overrides = append(l.overrides, override{s, v, where})
			continue
		}
		l.from[s.key] = where
		if err := l.fs.Set(s.Flag(), v); err != nil {
			l.fail(s.key, "%q: want %s", v, wantType(s.def))
		}
	}
}

// commandLine lays the flags given on the command line over the rest. The flag
// parser has checked their syntax.
func (l *loader) commandLine(cmdline *pflag.FlagSet) {
	if cmdline == nil {
		return
	}
	byFlag := map[string]*Setting{}
	for _, s := range l.ss {
		byFlag[s.Flag()] = s
		if strings.HasPrefix(s.alias, "no-") {
			byFlag[s.alias] = s
		}
	}
	cmdline.Visit(func(f *pflag.Flag) {
		s := byFlag[f.Name]
		if s == nil {
			return
		}
		if s.port != nil {
			l.overrides = append(l.overrides, override{s, f.Value.String(), "--" + f.Name})
			return
		}
		if err := l.fs.Set(f.Name, f.Value.String()); err != nil {
			l.errs = append(l.errs, &Error{Key: "--" + f.Name, Msg: err.Error()})
		}
		l.from[s.key] = "--" + f.Name
	})
}

// applyPort lays the port settings of the environment and the command line on the
// one port: the file's only [[port]], or a port of their own when the file has none
// (then a device is needed). With several ports in the file they would be ambiguous.
func (l *loader) applyPort() {
	if len(l.overrides) == 0 {
		return
	}
	first := l.overrides[0].where
	switch len(l.c.Ports) {
	case 0:
		if !slices.ContainsFunc(l.overrides, func(o override) bool { return o.s.key == "port.device" }) {
			l.errs = append(l.errs, &Error{Key: first,
				Msg: "no port to apply it to: give --port-device too, or a [[port]] in the config file"})
			return
		}
		l.c.Ports = []daemon.PortConfig{{}}
		l.portFS = []*pflag.FlagSet{l.portFlags(&l.c.Ports[0])}
		l.portFromCmd = true
	case 1:
	default:
		l.errs = append(l.errs, &Error{Key: first,
			Msg: fmt.Sprintf("the config file %s has %d ports: set it in each one's [[port]] table", l.file, len(l.c.Ports))})
		return
	}
	for _, o := range l.overrides {
		key := portKey(0, o.s.name())
		l.from[key] = o.where
		if err := l.portFS[0].Set(o.s.Flag(), o.v); err != nil {
			l.fail(key, "%q: want %s", o.v, wantType(o.s.def))
		}
	}
}

// validate checks what can be checked before anything starts: each setting on its
// own (its check), then the settings that go together.
func (l *loader) validate() {
	for i := range l.c.Ports {
		if p := &l.c.Ports[i]; p.Name == "" {
			p.Name = daemon.DefaultName(p.Device)
		}
	}
	for _, s := range l.ss {
		if s.check == nil {
			continue
		}
		if s.port == nil {
			if l.failed[s.key] {
				continue
			}
			if msg := s.check(reflect.ValueOf(s.global(&l.c)).Elem().Interface()); msg != "" {
				l.fail(s.key, "%s", msg)
			}
			continue
		}
		for i := range l.c.Ports {
			if l.failed[portKey(i, s.name())] {
				continue
			}
			if msg := s.check(reflect.ValueOf(s.port(&l.c.Ports[i])).Elem().Interface()); msg != "" {
				l.fail(portKey(i, s.name()), "%s", msg)
			}
		}
	}

	l.validateHub()
	if l.has("league.replicas") && l.c.League.Replicas > 1 && l.c.NATS.URL == "" && !l.failed["league.replicas"] {
		l.fail("league.replicas", "%d copies need a NATS cluster as the hub (nats.url, configs/league-hub-cluster.conf); the hub's embedded server is one", l.c.League.Replicas)
	}
	if lg := l.c.League; l.has("league.leaf_tls_cert") {
		switch {
		case (lg.LeafTLSCert == "") != (lg.LeafTLSKey == ""):
			l.fail("league.leaf_tls_cert", "league.leaf_tls_cert and league.leaf_tls_key go together")
		case lg.LeafTLSClientCA != "" && lg.LeafTLSCert == "":
			l.fail("league.leaf_tls_client_ca", "the clubs' certificates are asked for in TLS: give the hub its own, league.leaf_tls_cert and league.leaf_tls_key")
		case lg.LeafTLSCert != "" && l.c.NATS.URL != "":
			l.fail("league.leaf_tls_cert", "with nats.url the hub is that nats-server: give its leafnodes block a tls {} block (configs/league-hub.conf)")
		}
		for _, f := range []struct{ key, file string }{{"league.leaf_tls_cert", lg.LeafTLSCert}, {"league.leaf_tls_key", lg.LeafTLSKey},
			{"league.leaf_tls_client_ca", lg.LeafTLSClientCA}} {
			if _, err := os.Stat(f.file); f.file != "" && err != nil && !l.failed[f.key] {
				l.fail(f.key, "%v", err)
			}
		}
	}
	if lg := l.c.League; l.has("league.http_tls_cert") {
		if (lg.HTTPTLSCert == "") != (lg.HTTPTLSKey == "") {
			l.fail("league.http_tls_cert", "league.http_tls_cert and league.http_tls_key go together")
		}
		for _, f := range []struct{ key, file string }{{"league.http_tls_cert", lg.HTTPTLSCert}, {"league.http_tls_key", lg.HTTPTLSKey}} {
			if _, err := os.Stat(f.file); f.file != "" && err != nil && !l.failed[f.key] {
				l.fail(f.key, "%v", err)
			}
		}
	}
	// /metrics on a listener of its own cannot be the page's.
	for _, m := range []struct{ key, metrics, page string }{{"http.metrics", l.c.HTTP.Metrics, l.c.HTTP.Listen},
		{"league.metrics", l.c.League.Metrics, l.c.League.HTTP}} {
		if l.has(m.key) && !l.failed[m.key] && m.metrics == m.page {
			l.fail(m.key, "%s is the page's listener too: say \"page\" to serve /metrics beside the page, or give it another HOST:PORT", m.metrics)
		}
	}
	n := &l.c.NATS
	if n.URL == "" && l.has("nats.listen") {
		if n.Listen != bus.ListenOff {
			if host, _, err := bus.ParseListen(n.Listen); err == nil && !bus.Loopback(host) && n.ListenToken == "" && n.ListenUser == "" {
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
	} else if n.URL != "" {
		// A URL from a layer above the listener's wins over it (--nats-url over the
		// file's listener); from the same layer, or below it, they contradict.
		if l.has("nats.listen") {
			if r := l.rank("nats.listen"); r > 0 && r >= l.rank("nats.url") {
				l.fail("nats.listen", "the embedded server's listener cannot go with nats.url (an existing server)")
			}
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
		if f.file == "" {
			continue
		}
		if fi, err := os.Stat(f.file); err != nil {
			l.fail(f.key, "%v", err)
		} else if fi.IsDir() {
			l.fail(f.key, "%s is a directory, want a file", f.file)
		}
	}

	for _, e := range daemon.CheckPorts(l.c.Ports) {
		if key := portKey(e.Index, e.Key); !l.failed[key] {
			l.fail(key, "%s", e.Msg)
		}
	}
}

// validateHub checks a club's link to a league hub ([hub]) across settings: each
// key's own check has been done.
func (l *loader) validateHub() {
	h := l.c.Hub
	if !l.has("hub.url") || (h.URL == "" && h.Club == "" && h.Token == "" && h.SeedFile == "" && h.TLSCA == "" && h.TLSCert == "" && h.TLSKey == "") {
		return
	}
	switch {
	case l.failed["hub.url"] || l.failed["hub.club"]:
	case h.URL == "":
		key := "hub.club"
		for _, k := range []struct{ key, v string }{{"hub.tls_key", h.TLSKey}, {"hub.tls_cert", h.TLSCert}, {"hub.tls_ca", h.TLSCA},
			{"hub.seed_file", h.SeedFile}, {"hub.token", h.Token}, {"hub.club", h.Club}} {
			if k.v != "" {
				key = k.key
			}
		}
		l.fail(key, "the club's link needs the hub's URL (--hub-url, $SCOREBOARD_HUB_URL, hub.url)")
	case h.Club == "":
		l.fail("hub.url", "the hub needs the club's name (--hub-club, $SCOREBOARD_HUB_CLUB, hub.club)")
	case h.Token != "" && h.SeedFile != "":
		l.fail("hub.seed_file", "give the hub the club's seed file or a token, not both")
	case h.Token == "" && h.SeedFile == "":
		l.fail("hub.url", "the hub needs the club's credentials: a seed file (--hub-seed-file, $SCOREBOARD_HUB_SEED_FILE, hub.seed_file; scoreboard hub key makes it at the hub) or a token ($SCOREBOARD_HUB_TOKEN, hub.token)")
	case l.c.NATS.URL != "":
		l.fail("hub.url", "a club's link to the hub is its embedded server's: it cannot go with nats.url (an existing server)")
	case l.has("history.enabled") && !l.c.History.Enabled:
		l.fail("hub.url", "the hub reads the club's history: it cannot go with the history off")
	}
	if h.SeedFile != "" && !l.failed["hub.seed_file"] {
		if _, err := bus.ReadSeedFile(h.SeedFile); err != nil {
			l.fail("hub.seed_file", "%s", strings.TrimPrefix(err.Error(), "hub link: "))
		}
	}
	if h.TLSCA != "" || h.TLSCert != "" || h.TLSKey != "" {
		key := "hub.tls_ca"
		if h.TLSCert != "" || h.TLSKey != "" {
			key = "hub.tls_cert"
		}
		if err := (&bus.HubLink{TLSCA: h.TLSCA, TLSCert: h.TLSCert, TLSKey: h.TLSKey}).CheckTLS(); err != nil {
			l.fail(key, "%s", strings.TrimPrefix(err.Error(), "hub link: "))
		}
	}
}

// removedKeys are settings taken out, with what to use instead: a file, a variable
// or a flag that still names one is an error that says so.
var removedKeys = map[string]string{
	"hub.creds": "operator mode (a creds file) is no longer taken: give the club its own key, a seed file in " +
		"hub.seed_file (--hub-seed-file); scoreboard hub key NAME --out FILE at the hub makes it and prints the hub's [[club]] table",
}

// RemovedKeys lists the keys of the settings taken out, for the checks that no
// text names them as current.
func RemovedKeys() []string { return slices.Sorted(maps.Keys(removedKeys)) }

// RemovedFlag says what to use instead of a removed setting's flag ("hub-creds"),
// or "" for a flag that never was one.
func RemovedFlag(flag string) string {
	for key, msg := range removedKeys {
		if (&Setting{key: key}).Flag() == flag {
			return msg
		}
	}
	return ""
}

// rank is the layer a setting came from: 0 the default, 1 the file, 2 the
// environment, 3 the command line.
func (l *loader) rank(key string) int {
	switch src := l.from[key]; {
	case strings.HasPrefix(src, "--"):
		return 3
	case strings.HasPrefix(src, "$"):
		return 2
	}
	if _, ok := l.lines[key]; ok {
		return 1
	}
	return 0
}

// probe returns a TOML value as decoded (string, int64, bool, map[string]any...) and
// the line of its key. TOML gives a key's position only in an error, so probe's
// Unmarshaler takes the value and always fails.
func probe(md toml.MetaData, p toml.Primitive) (any, int) {
	var v any
	err := md.PrimitiveDecode(p, prober{&v})
	var pe toml.ParseError
	if errors.As(err, &pe) {
		return v, pe.Position.Line
	}
	return v, 0
}

type prober struct{ v *any }

var errProbed = errors.New("probed")

func (p prober) UnmarshalTOML(v any) error { *p.v = v; return errProbed }

// tomlString checks a file value's TOML type against the setting's, and returns it
// as a flag would give it.
func tomlString(def, v any) (string, string) {
	switch def.(type) {
	case int:
		n, ok := v.(int64)
		if !ok {
			return "", fmt.Sprintf("want %s, got %s", wantType(def), describeValue(v))
		}
		if n < 0 || n > 1<<31-1 {
			return "", fmt.Sprintf("%d is out of range", n)
		}
		return strconv.FormatInt(n, 10), ""
	case bool:
		b, ok := v.(bool)
		if !ok {
			return "", fmt.Sprintf("want %s, got %s", wantType(def), describeValue(v))
		}
		return strconv.FormatBool(b), ""
	default:
		s, ok := v.(string)
		if !ok {
			return "", fmt.Sprintf("want %s, got %s", wantType(def), describeValue(v))
		}
		return s, ""
	}
}

// wantType says what a setting of def's type takes.
func wantType(def any) string {
	switch def.(type) {
	case int:
		return "an integer"
	case bool:
		return "true or false"
	case time.Duration:
		return "a duration such as 2s or 500ms"
	}
	return "a string"
}

// describeValue names a decoded TOML value's type, with the value when it is short.
func describeValue(v any) string {
	switch v := v.(type) {
	case string:
		if len(v) > 40 {
			return "a string"
		}
		return fmt.Sprintf("the string %q", v)
	case int64:
		return fmt.Sprintf("the integer %d", v)
	case float64:
		return fmt.Sprintf("the float %v", v)
	case bool:
		return fmt.Sprintf("%v", v)
	case time.Time:
		return "a date or time"
	case []any, []map[string]any:
		return "an array"
	case map[string]any:
		return "a table"
	}
	return fmt.Sprintf("a %T", v)
}

func knownKeys(table string) string {
	var keys []string
	for _, s := range settings {
		if s.table() == table {
			keys = append(keys, s.name())
		}
	}
	return strings.Join(keys, ", ")
}

// Error is one thing wrong with the configuration: where (the file and the key,
// with its line; or the flag, or the environment variable) and what.
type Error struct {
	File string // the config file, when the setting came from it
	Line int    // from 1, when known
	Key  string // the key in the file ("nats.url", "[[port]] 2 (\"lobby\") baud"), or "--flag", or "$VAR"
	Msg  string
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		fmt.Fprintf(&b, "config %s: ", e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, "line %d: ", e.Line)
		}
		if e.Key != "" {
			fmt.Fprintf(&b, "key %s: ", e.Key)
		}
	} else if e.Key != "" {
		b.WriteString(e.Key + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// FromCommandLine says whether every error in err is about a flag given: a usage
// error, which exits 2.
func FromCommandLine(err error) bool {
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		var ce *Error
		if !errors.As(e, &ce) || ce.File != "" || !strings.HasPrefix(ce.Key, "--") {
			return false
		}
	}
	return len(errs) > 0
}

// Changed lists the keys of the settings other than a port's whose values differ
// between was and now, in the settings' order: what a reload of `run` cannot apply
// (it applies the ports'), named as the file names them ("hub.url"). Derived from
// the settings themselves, so that a setting declared is a setting compared.
func Changed(was, now Config) []string {
	var keys []string
	for _, s := range settings {
		if s.global == nil {
			continue
		}
		if value(s.global(&was)) != value(s.global(&now)) {
			keys = append(keys, s.key)
		}
	}
	return keys
}

// value is what a setting's pointer points at, comparable.
func value(p any) any {
	switch p := p.(type) {
	case *string:
		return *p
	case *int:
		return *p
	case *bool:
		return *p
	case *time.Duration:
		return *p
	}
	panic(fmt.Sprintf("config: a setting of unsupported type %T", p))
}
