package config

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Example is configs/scoreboard.toml: every key of run, with its doc, its default
// (or an example, commented out), its flag and its environment variable.
func Example() []byte {
	var b bytes.Buffer
	b.WriteString(exampleHead)
	writeKeys(&b, func(s *Setting) bool { return !s.hub })
	b.WriteString("\n# A second scoreboard: uncomment, with its own name and device, at the defaults.\n" +
		"#  [[port]]\n#  name = \"hall\"\n#  device = \"/dev/serial/by-id/usb-Arduino_Uno_95530343834351A0C1E1-if00\"\n#  problem = \"othello\"\n")
	return b.Bytes()
}

// ExampleHub is configs/league-hub.toml: a league hub's [league] keys, its memory
// budget, and its [[club]] tables (read by the league package, reloaded on SIGHUP).
func ExampleHub() []byte {
	var b bytes.Buffer
	b.WriteString(`# scoreboard hub --config /etc/scoreboard/league-hub.toml
# Generated from config/settings.go (go generate ./cmd/scoreboard): edit there.
#
# The league's hub: the clubs' daemons join it as leaf nodes (scoreboard run
# --hub-url tls://hub.example.org:7422 --hub-club north --hub-seed-file FILE), and
# a stream per club keeps the club's history. Each
# [league] key is also a flag and an environment variable, by the same rule as
# scoreboard.toml's; [nats] (nats.url: an existing nats-server as the hub,
# configs/league-hub.conf), [log] and [memory] are taken too. SIGHUP reads the [[club]] tables
# again: clubs added are let in, clubs removed are refused and their links closed; a
# bad file is logged and the running clubs kept. docs/league.md says what each side
# trusts.
`)
	writeKeys(&b, func(s *Setting) bool { return s.hub || s.key == MemoryKey })
	b.WriteString(`
# One table per club. name: the club's --hub-club (lowercase letters, digits, '-',
# '_'), its JetStream domain and its user here. nkey: its public key, which
# scoreboard hub key NAME --out FILE prints with the table (the club keeps the seed
# file); or token: a secret of its own, in clear here. prefix: the club daemon's
# --nats-prefix, if not the default.
[[club]]
name = "north"
nkey = "UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4"

[[club]]
name = "south"
token = "change-me-south"
# prefix = "scoreboard"
# Its share of the hub's store, if not club_max_bytes and club_max_age above:
# max_bytes = "2GiB"
# max_age = "30d"
# Its broadcast delay on the league page, if not http_delay above (SIGHUP applies
# a change at once):
# delay = "15m"

# The tournament's tables, for the organiser's pairings (scoreboard pairings load
# --league FILE, docs/pairings.md): each table's club.port. SIGHUP reads them again.
# [tables]
# 1 = "north.table1"
# 2 = "south.lobby"
`)
	return b.Bytes()
}

const exampleHead = `# scoreboard configuration: scoreboard run --config /etc/scoreboard/scoreboard.toml
# Generated from config/settings.go (go generate ./cmd/scoreboard): edit there.
#
# Every key is optional but a port's device and problem. Each key is also a flag and
# an environment variable, by one rule (shown beside it): history.max_bytes is
# --history-max-bytes and $SCOREBOARD_HISTORY_MAX_BYTES. A flag given on the command
# line wins over the environment, the environment over this file, and the file over
# the defaults shown here. Put secrets (passwords, tokens) in the environment: with
# systemd, in /etc/scoreboard/scoreboard.env, mode 0600. A mistake (an unknown key, a
# wrong type, a port without a device, an unknown problem) stops the daemon before it
# starts, naming this file, the line, the key and what is wrong.
`

// writeKeys writes the keys of the settings that take, table by table.
func writeKeys(b *bytes.Buffer, take func(*Setting) bool) {
	table := ""
	for _, s := range settings {
		if !take(s) {
			continue
		}
		if s.table() != table {
			table = s.table()
			if s.port != nil {
				b.WriteString("\n# One [[port]] table per scoreboard. With a single port, the port flags override\n" +
					"# its keys; with several, set them here.\n[[port]]\n")
			} else {
				fmt.Fprintf(b, "\n[%s]\n", table)
			}
		}
		if s.doc != "" {
			if !strings.HasSuffix(b.String(), "]\n") {
				b.WriteString("\n")
			}
			for line := range strings.SplitSeq(s.doc, "\n") {
				b.WriteString(strings.TrimRight("# "+line, " ") + "\n")
			}
		}
		v, commented := s.def, false
		if s.example != nil {
			v, commented = s.example, s.port == nil
		}
		if s.port == nil && s.def == "" {
			commented = true
		}
		line := s.name() + " = " + tomlValue(v)
		if commented {
			line = "# " + line
		}
		fmt.Fprintf(b, "%-47s # --%s, $%s\n", line, s.Flag(), s.Env())
		if s.also != nil {
			fmt.Fprintf(b, "%-47s # --%s %v: %s\n", "# "+s.name()+" = "+tomlValue(s.also), s.Flag(), s.also, s.alsoNote)
		}
	}
}

func tomlValue(v any) string {
	switch v := v.(type) {
	case string:
		return strconv.Quote(v)
	case time.Duration:
		return strconv.Quote(v.String())
	}
	return fmt.Sprint(v)
}

// MarkdownTable is docs/cli.md's table of the settings.
func MarkdownTable() string {
	var b strings.Builder
	b.WriteString("| key | flag | environment | default | meaning |\n|---|---|---|---|---|\n")
	var former []string
	for _, s := range settings {
		def := fmt.Sprint(s.def)
		if s.def == "" {
			def = ""
		} else {
			def = "`" + def + "`"
		}
		fmt.Fprintf(&b, "| `%s` | `--%s` | `%s` | %s | %s |\n", s.key, s.Flag(), s.Env(), def,
			strings.ReplaceAll(strings.ReplaceAll(s.help, "|", "\\|"), "`", ""))
		if s.alias != "" {
			former = append(former, fmt.Sprintf("`--%s` (`--%s`)", s.alias, s.Flag()))
		}
	}
	fmt.Fprintf(&b, "\nFormer flag names, still accepted and not listed by `--help`: %s.\n\n", strings.Join(former, ", "))
	return b.String()
}
