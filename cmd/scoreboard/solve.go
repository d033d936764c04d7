package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/goclub/scoreboard/engine"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
)

func init() {
	register(command{
		name:    "solve",
		summary: "contest filter: contest input on stdin, contest output on stdout",
		run:     runSolve,
	})
}

func runSolve(ctx context.Context, args []string, io stdio) error {
	about := "Reads a whole contest input of PROBLEM on stdin and writes the contest output\n" +
		"on stdout, computed in-process, or with --nats-url by the 'scoreboard' service.\n" +
		"A unit that cannot be parsed is reported on stderr with its line, and the units\n" +
		"after it are still answered; the exit status is 1 if any unit failed.\n\n" +
		"problems: " + strings.Join(engine.Names(), ", ")
	fs := newFlagSet("solve", "PROBLEM", about, io)
	nf := addNATSFlags(fs, "empty: solve in-process")
	timeout := fs.Duration("timeout", 30*time.Second, "with --nats-url, how long to wait for the service's answer")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageErr(fs, "want one PROBLEM, got %d arguments (problems: %s; the input comes on stdin)", fs.NArg(), strings.Join(engine.Names(), ", "))
	}
	p, err := lookupProblem(fs.Arg(0))
	if err != nil {
		return err
	}
	if nf.url != "" {
		return solveRemote(nf, p.Name(), *timeout, io)
	}
	bad, err := engine.Contest(p, io.in, io.out, func(err error) {
		fmt.Fprintln(io.err, "scoreboard solve:", err)
	})
	if err != nil {
		return err
	}
	if bad > 0 {
		fmt.Fprintf(io.err, "scoreboard solve: %d bad unit(s)\n", bad)
		return errExitQuiet
	}
	return nil
}

// solveRemote sends the whole input to the problem's endpoint of the service in one
// request, and writes its answer.
func solveRemote(nf *natsFlags, problem string, timeout time.Duration, stdio stdio) error {
	nc, err := nf.connect("scoreboard solve", quietLogger(stdio.err))
	if err != nil {
		return err
	}
	defer nc.Close()
	limit := nc.MaxPayload()
	in, err := io.ReadAll(io.LimitReader(stdio.in, limit+1))
	if err != nil {
		return fmt.Errorf("read input: %w", err)
	}
	if int64(len(in)) > limit {
		return fmt.Errorf("input is over the server's limit of %d bytes a message: split it, or solve it in-process", limit)
	}
	subject := nf.subjects().Solve(problem)
	reply, err := nc.Request(subject, in, timeout)
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		return fmt.Errorf("%s: no worker serves it (is 'scoreboard run' or 'scoreboard work' running there?)", subject)
	case err != nil:
		return fmt.Errorf("%s: %w", subject, err)
	}
	if _, err := stdio.out.Write(reply.Data); err != nil {
		return err
	}
	if code := reply.Header.Get(micro.ErrorCodeHeader); code != "" {
		fmt.Fprintf(stdio.err, "scoreboard solve: %s (%s)\n", reply.Header.Get(micro.ErrorHeader), code)
		return errExitQuiet
	}
	return nil
}
