package main

// STUB: a stand-in for the CLI branch's `completion` and `manpage` commands, only so
// the packaging (make dist) can be built and tested before that branch merges. Drop
// this file when merging it.

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

func init() {
	register(command{name: "completion", summary: "prints a shell's completion script (bash, zsh, fish)", run: runStubCompletion})
	register(command{name: "manpage", summary: "writes the man pages into --directory", run: runStubManpage})
}

func runStubCompletion(_ context.Context, args []string, io stdio) error {
	names := strings.Join(slices.Sorted(maps.Keys(commands)), " ") + " version"
	switch {
	case len(args) == 1 && args[0] == "bash":
		fmt.Fprintf(io.out, "complete -W %q scoreboard\n", names)
	case len(args) == 1 && args[0] == "zsh":
		fmt.Fprintf(io.out, "#compdef scoreboard\n_arguments '1:command:(%s)'\n", names)
	case len(args) == 1 && args[0] == "fish":
		fmt.Fprintf(io.out, "complete -c scoreboard -f -n __fish_use_subcommand -a %q\n", names)
	default:
		return fmt.Errorf("want one of bash, zsh, fish")
	}
	return nil
}

func runStubManpage(_ context.Context, args []string, io stdio) error {
	if len(args) != 2 || args[0] != "--directory" {
		return fmt.Errorf("want --directory DIR")
	}
	page := func(name, summary string) error {
		title := strings.ToUpper(name)
		body := fmt.Sprintf(".TH %s 1 \"\" \"scoreboard\" \"User Commands\"\n.SH NAME\n%s \\- %s\n", title, name, summary)
		return os.WriteFile(filepath.Join(args[1], name+".1"), []byte(body), 0o644)
	}
	if err := page("scoreboard", "Go club scoreboard daemon and its tools"); err != nil {
		return err
	}
	for _, n := range slices.Sorted(maps.Keys(commands)) {
		if err := page("scoreboard-"+n, commands[n].summary); err != nil {
			return err
		}
	}
	return nil
}
