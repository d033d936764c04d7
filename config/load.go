package config

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

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
