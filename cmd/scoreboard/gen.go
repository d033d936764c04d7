package main

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// The references made from the command tree and the settings' declarations:
// docs/cli.md, the man pages (docs/man, and `scoreboard manpage`), and the example
// configs/scoreboard.toml. TestGenerated keeps the committed ones true; this
// regenerates them:
//
//go:generate go test -run ^TestGenerated$ -update .

// manDate is the man pages' date, unless $SOURCE_DATE_EPOCH says otherwise: a fixed
// one, so that the pages are the same from one build to the next.
var manDate = time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)

// writeManPages writes scoreboard.1 and a page per command (scoreboard-run.1...) in
// dir.
func writeManPages(root *cobra.Command, dir string) error {
	date := manDate
	if epoch := os.Getenv("SOURCE_DATE_EPOCH"); epoch != "" {
		sec, err := strconv.ParseInt(epoch, 10, 64)
		if err != nil {
			return fmt.Errorf("$SOURCE_DATE_EPOCH %q: want seconds since 1970", epoch)
		}
		date = time.Unix(sec, 0).UTC()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return doc.GenManTree(root, &doc.GenManHeader{
		Title: "SCOREBOARD", Section: "1", Source: "scoreboard", Manual: "scoreboard manual", Date: &date,
	}, dir)
}

// markdown is docs/cli.md: the settings, then every command with its flags.
func markdown(root *cobra.Command) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("<!-- Generated from cmd/scoreboard (settings.go and the commands): " +
		"go generate ./cmd/scoreboard. Do not edit. -->\n\n")
	b.WriteString("# The scoreboard command line\n\n")
	b.WriteString("`scoreboard COMMAND --help` (or `scoreboard help COMMAND`) prints the same on stdout.\n" +
		"Flags may go anywhere among the arguments; after `--` everything is an argument.\n\n" +
		"Exit status: 0 done; 1 a failure (a unit that failed, a bus that cannot be reached, a\n" +
		"bad config file); 2 a mistake on the command line, said on one line with a hint:\n\n" +
		"    scoreboard run: unknown flag --prot; did you mean --port-device? ('scoreboard run --help' shows the usage)\n" +
		"    scoreboard watch: --problem: unknown problem \"gocsore\"; did you mean goscore? (problems: capture, goscore, othello, replay, territory) ('scoreboard watch --help' shows the usage)\n\n")
	b.WriteString("## Settings\n\n" +
		"Each setting of `run` (and those of `work` and the tools that share them) is a key\n" +
		"of the config file (`run --config FILE`, TOML), a flag and an environment\n" +
		"variable, named by one rule: key `history.max_bytes`, flag `--history-max-bytes`,\n" +
		"`$SCOREBOARD_HISTORY_MAX_BYTES`; a `[[port]]` table's key `baud` is `port.baud`,\n" +
		"`--port-baud`, `$SCOREBOARD_PORT_BAUD`. A flag given on the command line wins\n" +
		"over the environment, the environment over the file, the file over the default.\n" +
		"The port flags (and variables) make the one port, or override the file's only\n" +
		"`[[port]]`. [`configs/scoreboard.toml`](../configs/scoreboard.toml) shows every key.\n\n" +
		"| key | flag | environment | default | meaning |\n|---|---|---|---|---|\n")
	var former []string
	for _, s := range settings {
		def := fmt.Sprint(s.def)
		if s.def == "" {
			def = ""
		} else {
			def = "`" + def + "`"
		}
		fmt.Fprintf(&b, "| `%s` | `--%s` | `%s` | %s | %s |\n", s.key, s.flag(), s.env(), def,
			strings.ReplaceAll(strings.ReplaceAll(s.help, "|", "\\|"), "`", ""))
		if s.alias != "" {
			former = append(former, fmt.Sprintf("`--%s` (`--%s`)", s.alias, s.flag()))
		}
	}
	fmt.Fprintf(&b, "\nFormer flag names, still accepted and not listed by `--help`: %s.\n\n", strings.Join(former, ", "))
	link := func(name string) string {
		return "#" + strings.ReplaceAll(strings.TrimSuffix(name, ".md"), "_", "-")
	}
	cmds := []*cobra.Command{root}
	for _, c := range root.Commands() {
		if c.IsAvailableCommand() && !c.IsAdditionalHelpTopicCommand() {
			cmds = append(cmds, c)
		}
	}
	slices.SortStableFunc(cmds[1:], func(a, b *cobra.Command) int { return strings.Compare(a.Name(), b.Name()) })
	for _, c := range cmds {
		var cb bytes.Buffer
		if err := doc.GenMarkdownCustom(c, &cb, link); err != nil {
			return nil, err
		}
		b.Write(cb.Bytes())
	}
	return b.Bytes(), nil
}

// exampleConfig is configs/scoreboard.toml: every key, with its doc, its default (or
// an example, commented out), its flag and its environment variable.
func exampleConfig() []byte {
	var b bytes.Buffer
	b.WriteString(`# scoreboard configuration: scoreboard run --config /etc/scoreboard/scoreboard.toml
# Generated from cmd/scoreboard/settings.go (go generate ./cmd/scoreboard): edit there.
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
		fmt.Fprintf(&b, "%-47s # --%s, $%s\n", line, s.flag(), s.env())
	}
	b.WriteString("\n# A second scoreboard, on a USB modem-class board, at the defaults.\n" +
		"[[port]]\nname = \"hall\"\ndevice = \"/dev/ttyACM0\"\nproblem = \"othello\"\n")
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
