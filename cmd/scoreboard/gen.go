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

	"github.com/goclub/scoreboard/config"
)

// The references made from the command tree and the settings' declarations:
// docs/cli.md, the man pages (docs/man, and `scoreboard manpage`), and the example
// configs/scoreboard.toml and configs/league-hub.toml. TestGenerated keeps the committed ones true; this
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
		"Two variables are no setting: `$SCOREBOARD_CPUPROFILE=FILE` makes any command write\n" +
		"its CPU profile to FILE until it exits, and `$SCOREBOARD_HEAPPROFILE=FILE` its heap\n" +
		"when it is told to stop (SIGTERM, SIGINT), for `go tool pprof`: how the league's\n" +
		"benchmarks see where a hub's time and memory go (BENCHMARKS.md).\n" +
		"`$SCOREBOARD_HEAPPROFILE_PEAK=FILE` writes its heap at each new peak of the live heap\n" +
		"instead, replacing FILE: a burst's memory, read after it is over.\n\n" +
		"")
	b.WriteString(config.MarkdownTable())
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
