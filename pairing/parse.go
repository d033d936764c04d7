package pairing

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// FileError is one thing wrong in a pairing file: where, what, and what to do.
type FileError struct {
	File string
	Line int // 0: the file as a whole
	Msg  string
}

func (e *FileError) Error() string {
	if e.Line == 0 {
		return e.File + ": " + e.Msg
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

// ErrTooLarge is a file over MaxFile: no pairing file is that large.
var ErrTooLarge = errors.New("over 10 MB")

// maxErrors bounds the errors a file's parse reports: the first ones say enough.
const maxErrors = 20

// errs gathers a file's errors, up to maxErrors.
type errs struct {
	file string
	list []error
	more int
}

func (e *errs) add(line int, format string, args ...any) {
	if len(e.list) >= maxErrors {
		e.more++
		return
	}
	e.list = append(e.list, &FileError{File: e.file, Line: line, Msg: fmt.Sprintf(format, args...)})
}

func (e *errs) err() error {
	if e.more > 0 {
		e.list = append(e.list, &FileError{File: e.file, Msg: fmt.Sprintf("and %d more errors", e.more)})
	}
	return errors.Join(e.list...)
}

// Parse reads a pairing file, an OpenGotha tournament (XML: its first byte,
// after a byte order mark and spaces, is '<') or a CSV, and returns its round
// (0: the latest round that has games). name is the file's name, for the errors.
// Nothing is returned but errors from a file with anything wrong in it: a round
// is loaded whole or not at all.
func Parse(name string, r io.Reader, round int) (Round, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxFile+1))
	if err != nil {
		return Round{}, &FileError{File: name, Msg: fmt.Sprintf("read: %v", err)}
	}
	if len(data) > MaxFile {
		return Round{}, &FileError{File: name, Msg: fmt.Sprintf("%v: no pairing file is that large; export one round, or check that this is the tournament's file", ErrTooLarge)}
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) > 0 && t[0] == '<' {
		return ParseOpenGotha(name, data, round)
	}
	return ParseCSV(name, data, round)
}

// game is a game as read, with its line, before its round is picked.
type game struct {
	Game
	round, line int
}

// pick takes the games of round (0: the latest), checks the tables are each
// one game's, and makes the Round.
func pick(e *errs, info Info, games []game, round int) Round {
	if len(games) == 0 {
		e.add(0, "no games: pair a round in the program and save the file again")
		return Round{}
	}
	rounds := map[int]bool{}
	latest := 0
	for _, g := range games {
		rounds[g.round] = true
		latest = max(latest, g.round)
	}
	if round == 0 {
		round = latest
	}
	if !rounds[round] {
		have := make([]int, 0, len(rounds))
		for n := range rounds {
			have = append(have, n)
		}
		slices.Sort(have)
		e.add(0, "round %d has no games (the file has games in rounds %s): pair it first, or give --round one of those", round, intList(have))
		return Round{}
	}
	info.Round = round
	r := Round{Info: info}
	at := map[int]int{}
	for _, g := range games {
		if g.round != round {
			continue
		}
		if first, ok := at[g.Table]; ok {
			e.add(g.line, "round %d: table %d has a second game (the first on line %d): give each game its own table", round, g.Table, first)
			continue
		}
		at[g.Table] = g.line
		r.Games = append(r.Games, g.Game)
	}
	if len(r.Games) > MaxGames {
		e.add(0, "round %d has %d games, over %d", round, len(r.Games), MaxGames)
	}
	slices.SortFunc(r.Games, func(a, b Game) int { return a.Table - b.Table })
	return r
}

func intList(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ", ")
}

// rank is a rank as a tile shows it: "2D" and " 2d" are "2d".
func rank(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// text is a file's text as kept: trimmed, and checked (checkText) with its line.
func text(e *errs, line int, what, s string) string {
	s = strings.TrimSpace(s)
	if err := checkText(s); err != nil {
		e.add(line, "%s %v: shorten it in the program", what, err)
		return ""
	}
	return s
}
