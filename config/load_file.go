package config

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/spf13/pflag"

	"github.com/goclub/scoreboard/daemon"
)

// The config file's layer: its keys, [[port]] tables, and TOML's types as a flag
// would give them.

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
		case key == "tables":
			// A league hub's tournament tables (club.port), as [[club]].
			if !l.has("league.listen") {
				l.fail(key, "[tables] is a league hub's (scoreboard hub --config); a club names a port's table with [[port]] table")
			}
		default:
			l.fail(key, "unknown key (known: the tables [nats], [log], [daemon], [history], [http], [hub], [league] and [[port]], and a hub's [[club]] and [tables])")
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
