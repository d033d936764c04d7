package pairing

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// The plain CSV for pairing programs other than OpenGotha: one game a line,
//
//	round,table,black,black rank,white,white rank[,handicap[,result]]
//
// comma- or semicolon-separated (the first line tells which), quoted as RFC 4180
// says. A first line whose first field is "round" is the header; it must then name
// these columns in this order. The result, if any, is SGF's RE: B+, W+, B+R,
// W+3.5, B+F, 0 (a draw), Void; empty while the game is on.

// CSVColumns are the CSV's columns, as its header names them.
var CSVColumns = []string{"round", "table", "black", "black rank", "white", "white rank", "handicap", "result"}

// csvMin is how many columns a line has at least: up to white rank.
const csvMin = 6

var csvResult = regexp.MustCompile(`^([BW]\+([0-9]{1,3}(\.5)?|R|T|F)?|0|Void|\?)$`)

// ParseCSV reads a CSV's round (0: the latest).
func ParseCSV(name string, data []byte, round int) (Round, error) {
	e := &errs{file: name}
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	r.ReuseRecord = true
	if first, _, _ := bytes.Cut(data, []byte("\n")); bytes.Count(first, []byte(";")) >= csvMin-1 && !bytes.Contains(first, []byte(",")) {
		r.Comma = ';'
	}
	var games []game
	header := true // the first line may be one
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			line := 0
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				line, err = pe.Line, pe.Err
			}
			e.add(line, "not CSV as far as it goes (%v): put a field with a comma or a quote in double quotes, a quote in it doubled", err)
			return Round{}, e.err()
		}
		line, _ := r.FieldPos(0)
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue // an empty line
		}
		if header {
			header = false
			if strings.EqualFold(strings.TrimSpace(rec[0]), "round") {
				checkHeader(e, line, rec)
				continue
			}
		}
		if len(rec) < csvMin || len(rec) > len(CSVColumns) {
			e.add(line, "%d columns: want %d to %d, %s", len(rec), csvMin, len(CSVColumns), strings.Join(CSVColumns, ","))
			continue
		}
		games = append(games, csvGame(e, line, rec))
	}
	rd := pick(e, Info{}, games, round)
	if err := e.err(); err != nil {
		return Round{}, err
	}
	return rd, nil
}

func checkHeader(e *errs, line int, rec []string) {
	if len(rec) < csvMin || len(rec) > len(CSVColumns) {
		e.add(line, "the header has %d columns: want %d to %d, %s", len(rec), csvMin, len(CSVColumns), strings.Join(CSVColumns, ","))
		return
	}
	for i, f := range rec {
		if !strings.EqualFold(strings.Join(strings.Fields(f), " "), CSVColumns[i]) {
			e.add(line, "the header's column %d is %.40q, want %q: the columns are %s, in this order", i+1, f, CSVColumns[i], strings.Join(CSVColumns, ","))
			return
		}
	}
}

func csvGame(e *errs, line int, rec []string) game {
	num := func(col int, lo, hi int) int {
		n, err := strconv.Atoi(strings.TrimSpace(rec[col]))
		if err != nil || n < lo || n > hi {
			e.add(line, "%s %.20q: want a number from %d to %d", CSVColumns[col], rec[col], lo, hi)
			return 0
		}
		return n
	}
	g := game{line: line}
	g.round = num(0, 1, MaxRound)
	g.Table = num(1, 1, MaxTable)
	g.Black = Player{Name: text(e, line, "black", rec[2]), Rank: rank(text(e, line, "black rank", rec[3]))}
	g.White = Player{Name: text(e, line, "white", rec[4]), Rank: rank(text(e, line, "white rank", rec[5]))}
	if g.Black.Name == "" || g.White.Name == "" {
		e.add(line, "a game without its two players' names: fill in black and white")
	}
	if len(rec) > 6 && strings.TrimSpace(rec[6]) != "" {
		g.Handicap = num(6, 0, maxHandi)
	}
	if len(rec) > 7 {
		res := strings.TrimSpace(rec[7])
		if res != "" && !csvResult.MatchString(res) {
			e.add(line, "result %.20q: want B+, W+ (B+R, W+3.5, B+F), 0 for a draw, Void, or nothing while the game is on", res)
		}
		if res != "?" {
			g.Result = res
		}
	}
	return g
}
