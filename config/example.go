package config

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Example is configs/scoreboard.toml: every key, with its doc, its default (or
// an example, commented out), its flag and its environment variable.
func Example() []byte {
	var b bytes.Buffer
	b.WriteString(`# scoreboard configuration: scoreboard run --config /etc/scoreboard/scoreboard.toml
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
`)
	table := ""
	for _, s := range settings {
		if s.table() != table {
			table = s.table()
			if s.port != nil {
				b.WriteString("\n# One [[port]] table per scoreboard. With a single port, the port flags override\n" +
					"# its keys; with several, set them here.\n[[port]]\n")
			} else {
				fmt.Fprintf(&b, "\n[%s]\n", table)
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
		fmt.Fprintf(&b, "%-47s # --%s, $%s\n", line, s.Flag(), s.Env())
		if s.also != nil {
			fmt.Fprintf(&b, "%-47s # --%s %v: %s\n", "# "+s.name()+" = "+tomlValue(s.also), s.Flag(), s.also, s.alsoNote)
		}
	}
	b.WriteString("\n# A second scoreboard: uncomment, with its own name and device, at the defaults.\n" +
		"#  [[port]]\n#  name = \"hall\"\n#  device = \"/dev/serial/by-id/usb-Arduino_Uno_95530343834351A0C1E1-if00\"\n#  problem = \"othello\"\n")
	return b.Bytes()
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
