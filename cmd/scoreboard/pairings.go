package main

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/config"
	"github.com/goclub/scoreboard/history"
	"github.com/goclub/scoreboard/logging"
	"github.com/goclub/scoreboard/pairing"
)

func init() { register(pairingsCommand) }

func pairingsCommand(stdio stdio) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pairings",
		Short: "loads a tournament round's pairings: the players on each board",
		Long: "Pairings name the players on each board: the page, the history and the game\n" +
			"records show them. docs/pairings.md says how.",
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(pairingsLoadCommand(stdio))
	return cmd
}

func pairingsLoadCommand(stdio stdio) *cobra.Command {
	var (
		round       int
		hub         bool
		timeout     time.Duration
		credentials string
	)
	cmd := &cobra.Command{
		Use:   "load FILE",
		Short: "loads a round from an OpenGotha tournament file or a CSV into the daemon (or the hub)",
		Long: "Reads FILE, an OpenGotha tournament file (.xml) or a CSV (round,table,black,black\n" +
			"rank,white,white rank[,handicap[,result]]), takes its latest round (or --round),\n" +
			"and has the daemon on --nats-url give each [[port]] whose table is paired its game;\n" +
			"every other port shows no players. With --league, the league hub on --nats-url maps\n" +
			"the tables to club.port by its file's [tables]. Loading again replaces the round.\n" +
			"A file with anything wrong in it changes nothing: each error names its line.\n" +
			"Only the club's organiser may load: the command logs in with the password the\n" +
			"daemon keeps in organiser.password in its state dir (root and the daemon's\n" +
			"user may read it: sudo), or in --credentials FILE, or with --nats-user organiser on an\n" +
			"external server. docs/pairings.md, \"Who may load\".",
		Example: "  scoreboard pairings load tournament.xml\n  scoreboard pairings load --round 3 round.csv\n" +
			"  scoreboard pairings load --league --nats-url nats://127.0.0.1:4322 league.xml",
		Args: cobra.ExactArgs(1),
	}
	cmd.Flags().IntVar(&round, "round", 0, "the round `N` to load; 0: the latest round with games")
	cmd.Flags().BoolVar(&hub, "league", false, "load at a league hub (its --league-listen), for every club's tables")
	cmd.Flags().DurationVar(&timeout, "timeout", 30*time.Second, "how long to wait for the daemon's answer")
	cmd.Flags().StringVar(&credentials, "credentials", "", "the organiser's password `FILE`; default: "+bus.OrganiserFile+
		" in the daemon's state dir (--daemon-state-dir, else the default one, else /var/lib/scoreboard)")
	load := addSettings(cmd, slices.Concat(config.NATSClientKeys, []string{"daemon.state_dir"})...)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if round < 0 || round > pairing.MaxRound {
			return usagef("--round %d: want 1 to %d, or 0 for the latest", round, pairing.MaxRound)
		}
		if err := checkPositive("timeout", timeout, "30s"); err != nil {
			return err
		}
		c, err := load("")
		if err != nil {
			return err
		}
		file, err := organiserLogin(&c, hub, credentials)
		if err != nil {
			return err
		}
		in, err := stdio.input(args, 0)
		if err != nil {
			return err
		}
		defer in.Close()
		r, err := pairing.Parse(args[0], in, round)
		if err != nil {
			return err
		}
		nc, err := c.Connect("scoreboard pairings load", quietLogger(stdio.err))
		if err != nil && file != "" && errors.Is(err, nats.ErrAuthorization) {
			return fmt.Errorf("%w: the daemon refused the organiser's password of %s: is it this daemon's (its --daemon-state-dir)? "+
				"A daemon takes its organiser from this machine only, on 127.0.0.1 (--nats-url nats://127.0.0.1:PORT); one that could not take "+
				"its file said so at its start (no organiser on the NATS listener)", err, file)
		}
		if err != nil {
			return err
		}
		defer nc.Close()
		subject := pairing.LoadSubject(c.NATS.Prefix)
		if hub {
			subject = pairing.LoadSubject(pairing.HubPrefix)
		}
		rep, err := pairing.Request(cmd.Context(), nc, subject, pairing.Load{File: args[0], Round: r}, timeout)
		if err != nil {
			return err
		}
		rep.Print(stdio.out, r)
		return nil
	}
	return cmd
}

// packagedStateDir is the state dir of the packaged service (StateDirectory=).
const packagedStateDir = "/var/lib/scoreboard"

// organiserLogin gives c the organiser's credentials: the password in file, else
// in the daemon's state dir's organiser file; it returns the file read. NATS
// credentials given as settings (an external server's organiser user) are kept as
// they are. A hub's tools log in with none (its listener refuses any): --league
// takes none.
func organiserLogin(c *config.Config, hub bool, file string) (string, error) {
	n := c.NATS
	given := n.User != "" || n.Password != "" || n.Token != "" || n.NKey != "" || n.Creds != "" || strings.Contains(n.URL, "@")
	switch {
	case hub && file != "":
		return "", usagef("--credentials is the club's organiser's: a league hub's tools log in with none (--league)")
	case hub:
		return "", nil
	case given && file != "":
		return "", usagef("--credentials and NATS credentials (--nats-user, --nats-token, ...): give one of them")
	case given:
		return "", nil
	}
	var tried []string
	files := []string{file}
	if file == "" {
		if err := loopbackURLs(n.URL); err != nil {
			return "", err
		}
		files = organiserFiles(c.Daemon.StateDir)
	}
	for _, f := range files {
		read := bus.ReadOrganiserFile
		if file == "" {
			// The daemon's own file, which it never takes through a symlink.
			read = func(p string) (string, error) { return bus.ReadStateOrganiserFile(p, -1) }
		}
		pw, err := read(f)
		if errors.Is(err, bus.ErrNoOrganiserFile) && file == "" {
			tried = append(tried, f)
			continue
		}
		if err != nil {
			return "", err
		}
		c.NATS.User, c.NATS.Password = bus.RoleOrganiser, pw
		return f, nil
	}
	return "", fmt.Errorf("no organiser credentials at %s: the daemon makes %s in its state dir at its first start; "+
		"give the daemon's --daemon-state-dir DIR, or --credentials FILE", strings.Join(tried, " nor "), bus.OrganiserFile)
}

// loopbackURLs refuses, before anything is read or sent, a server list with a
// server beyond loopback: the state dir's password goes in clear in the CONNECT,
// and the daemon takes its organiser on loopback only, so a server elsewhere is
// one that would learn it for nothing (a squatter, a typo, an old
// $SCOREBOARD_NATS_URL). A host name is refused too: what it resolves to is not
// this command's to trust.
func loopbackURLs(urls string) error {
	for u := range strings.SplitSeq(urls, ",") {
		u = strings.TrimSpace(u)
		if u == "" {
			continue
		}
		if !strings.Contains(u, "://") {
			u = "nats://" + u
		}
		p, err := url.Parse(u)
		host := ""
		if err == nil {
			host = p.Hostname()
		}
		if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
			return usagef("--nats-url %s: the organiser's password of the daemon's state dir goes to a server on loopback only "+
				"(nats://127.0.0.1:PORT, the daemon's own listener, which takes its organiser from this machine alone); "+
				"for another server, give the password file yourself with --credentials FILE", logging.Clip(u))
		}
	}
	return nil
}

// organiserFiles are where the daemon's organiser file is looked for: its state
// dir when given; else the default one, then the packaged service's.
func organiserFiles(stateDir string) []string {
	if stateDir != "" {
		return []string{filepath.Join(stateDir, bus.OrganiserFile)}
	}
	var files []string
	if d, err := history.DefaultStateDir(os.Getenv); err == nil && filepath.Clean(d) != packagedStateDir {
		files = append(files, filepath.Join(d, bus.OrganiserFile))
	}
	return append(files, filepath.Join(packagedStateDir, bus.OrganiserFile))
}
