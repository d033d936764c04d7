package main

import (
	"fmt"
	"io"
	"os"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/goclub/scoreboard/backup"
	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/config"
	"github.com/goclub/scoreboard/history"
	"github.com/goclub/scoreboard/league"
)

func init() { register(backupCommand); register(restoreCommand) }

func backupCommand(stdio stdio) *cobra.Command {
	var hub bool
	cmd := &cobra.Command{
		Use:   "backup FILE",
		Short: "writes the history, its buckets and any other stream of the prefix to FILE, while the daemon runs",
		Long: "Reads every stream of the prefix (" + bus.Subjects{Prefix: bus.DefaultPrefix}.Stream() + ", its buckets KV_" + bus.Subjects{Prefix: bus.DefaultPrefix}.Stream() + "_*,\n" +
			"and any other of its name) from the running daemon's NATS server, with a tool's\n" +
			"read rights: the buckets whole, then the history up to its last message, a\n" +
			"consistent copy with every message's subject, headers, sequence number and\n" +
			"time. FILE is written\n" +
			"whole or not at all (a file beside it, renamed at the end), format version " + fmt.Sprint(backup.Version) + ":\n" +
			"docs/operations.md, \"Backup and restore\". --hub at a league hub\n" +
			"(--nats-url nats://127.0.0.1:4322): every club's stream. --club NAME at a hub:\n" +
			"the hub's copy of that club's history, as the club's own, for a club that lost\n" +
			"its store: restore it as the club's state dir.",
		Example: "  scoreboard backup scoreboard-$(date -u +%F).gz\n" +
			"  scoreboard backup --hub --nats-url nats://127.0.0.1:4322 league.gz\n" +
			"  scoreboard backup --club north --nats-url nats://127.0.0.1:4322 north.gz",
		Args: oneFile("takes the file to write"),
	}
	cmd.Flags().BoolVar(&hub, "hub", false, "at a league hub: back up every club's stream (the prefix "+league.SubjectPrefix+")")
	club := cmd.Flags().String("club", "", "at a league hub (--nats-url nats://127.0.0.1:4322): the hub's copy of this club's history (LEAGUE_<CLUB>) as the club's own, for a club that lost its store")
	load := addSettings(cmd, config.NATSClientKeys...)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := load("")
		if err != nil {
			return err
		}
		o := backup.Options{Prefix: c.NATS.Prefix, Scoreboard: version}
		switch {
		case hub && *club != "":
			return usagef("--hub and --club: give one of them")
		case hub:
			o.Prefix = league.SubjectPrefix
		case *club != "":
			if !bus.ValidToken(*club) {
				return usagef("--club %q: want lowercase letters, digits, '-' and '_', as in the hub's [[club]] name", *club)
			}
			o.Club, o.SourceStream, o.SourcePrefix = *club, league.ClubStream(*club), league.SubjectPrefix+"."+*club
		}
		nc, err := c.Connect("scoreboard backup", quietLogger(stdio.err))
		if err != nil {
			return err
		}
		defer nc.Close()
		js, err := jetstream.New(nc)
		if err != nil {
			return fmt.Errorf("jetstream: %w", err)
		}
		return backup.WriteFile(args[0], func(w io.Writer) error {
			h, counts, err := backup.Write(cmd.Context(), js, o, w)
			if err == nil {
				printCounts(stdio.out, "backed up", args[0], h, counts)
			}
			return err
		})
	}
	return cmd
}

func printCounts(w io.Writer, did, file string, h backup.Header, counts []backup.Count) {
	fmt.Fprintf(w, "%s %s: format %d, prefix %s", did, file, h.Version, h.Prefix)
	if h.From != "" {
		fmt.Fprintf(w, ", from the %s", h.From)
	}
	fmt.Fprintln(w)
	for i, s := range h.Streams {
		fmt.Fprintf(w, "  %s: %d messages, sequence %d to %d\n", s.Name, counts[i].Msgs, s.FirstSeq, s.LastSeq)
	}
	for _, s := range h.Skipped {
		fmt.Fprintf(w, "  %s: in memory only, not backed up (rebuilt at start)\n", s)
	}
}

func restoreCommand(stdio stdio) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "restore FILE",
		Short: "restores a backup into a new state dir, which run (or hub) then goes on from",
		Long: "Checks FILE whole (its format version, every count, its SHA-256) before it\n" +
			"changes anything, then restores every stream in it into the state dir\n" +
			"(--daemon-state-dir; a hub's: --league-state-dir), which must be new: absent or\n" +
			"empty. Every message keeps its sequence number and its time, so the history,\n" +
			"the page and its links are as they were, and a league hub's sources go on from\n" +
			"where the backup left them. Start the daemon on the dir afterwards. A bad file\n" +
			"changes nothing, and its error says where it is bad.",
		Example: "  scoreboard restore history-2026-11-28.gz --daemon-state-dir /var/lib/scoreboard",
		Args:    oneFile("takes the backup file"),
	}
	load := addSettings(cmd, "daemon.state_dir", "league.state_dir")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := load("")
		if err != nil {
			return err
		}
		dir := c.Daemon.StateDir
		if c.League.StateDir != "" {
			if dir != "" {
				return usagef("--daemon-state-dir and --league-state-dir: give one of them")
			}
			dir = c.League.StateDir
		}
		if dir == "" {
			if dir, err = history.DefaultStateDir(os.Getenv); err != nil {
				return err
			}
		}
		h, counts, err := backup.RestoreDir(args[0], dir)
		if err != nil {
			return err
		}
		printCounts(stdio.out, "restored", args[0], h, counts)
		fmt.Fprintf(stdio.out, "into %s: start the daemon on it (--daemon-state-dir, or a hub's --league-state-dir)\n", dir)
		return nil
	}
	return cmd
}

// oneFile takes exactly one argument, the file.
func oneFile(what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != 1 {
			return usagef("%s %s, got %d arguments", cmd.Name(), what, len(args))
		}
		return nil
	}
}
