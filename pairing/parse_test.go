package pairing_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/goclub/scoreboard/pairing"
)

func parseFile(t *testing.T, path string, round int) (pairing.Round, error) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return pairing.Parse(filepath.Base(path), f, round)
}

// TestOpenGothaFile: the test's own OpenGotha file (CRLF lines, accented, Chinese
// and Arabic names, a name with an apostrophe and one with a space, results of
// each kind) reads its latest round by default, round 1 when asked.
func TestOpenGothaFile(t *testing.T) {
	r, err := parseFile(t, "testdata/evry.xml", 0)
	if err != nil {
		t.Fatal(err)
	}
	if r.Round != 2 || r.Tournament != "Open d'Évry 2026" || r.Place != "Salle des fêtes, Évry" || r.Date != "2026-11-28" || len(r.Games) != 4 {
		t.Fatalf("round %+v, %d games", r.Info, len(r.Games))
	}
	g := r.Games[0]
	if g.Table != 1 || g.Black.FullName() != "Jürgen Müller-Straße" || g.White.FullName() != "王小明" || g.Result != "B+F" ||
		g.Black.Rank != "3k" || g.Black.Club != "Berl" || g.Black.EGFPin != "90000003" || g.White.Country != "CN" {
		t.Fatalf("round 2, table 1: %+v", g)
	}
	if g := r.Games[2]; g.Handicap != 3 || g.Black.FullName() != "ليلى حداد" || g.White.FullName() != "Seán O'Brien" || g.Result != "" {
		t.Fatalf("round 2, table 3: %+v", g)
	}
	r, err = parseFile(t, "testdata/evry.xml", 1)
	if err != nil {
		t.Fatal(err)
	}
	var res []string
	for _, g := range r.Games {
		res = append(res, fmt.Sprintf("%d:%s", g.Table, g.Result))
	}
	if r.Round != 1 || strings.Join(res, " ") != "1:W+ 2:B+ 3:0 4:Void" || r.Games[3].White.FullName() != "Anne Marie van der Berg" {
		t.Fatalf("round 1: %v, %+v", res, r.Games[3])
	}
}

func TestCSVFile(t *testing.T) {
	r, err := parseFile(t, "testdata/round.csv", 0)
	if err != nil {
		t.Fatal(err)
	}
	if r.Round != 2 || len(r.Games) != 2 || r.Games[1].White.Name != `Jürgen "Jo" Müller` || r.Games[0].Black.Name != "ليلى حداد" || r.Games[0].Result != "" {
		t.Fatalf("%+v", r)
	}
	r, err = parseFile(t, "testdata/round.csv", 1)
	if err != nil {
		t.Fatal(err)
	}
	if g := r.Games[1]; g.Black.Name != "Berg, Anne Marie van der" || g.Handicap != 9 || g.Result != "B+R" || g.White.Rank != "30k" {
		t.Fatalf("%+v", g)
	}
	// Semicolons, no header, no handicap or result, a byte order mark.
	r, err = pairing.Parse("x.csv", strings.NewReader("\ufeff3;7;A;1d;B;2k\n"), 0)
	if err != nil || r.Round != 3 || r.Games[0].Table != 7 || r.Games[0].White.Rank != "2k" {
		t.Fatalf("%+v %v", r, err)
	}
}

// TestRealOpenGothaFiles reads OpenGotha's own example files, with their Chinese
// and accented names and CRLF lines: those of its repository's
// distribution/tournamentfiles (CdFO2020.xml, Tournoi de Juvisy.xml,
// TournoiChinois.xml), from $SCOREBOARD_OPENGOTHA_DIR or else shared/opengotha
// beside the repository. They are GPL and name real players, so the repository
// does not carry them, and CI reaches no network but the package registries:
// where neither folder is there, the test says where to put them and skips.
// Every game of every round must find its players, every name must be clean
// text (no CR of the CRLF lines, no entity left, no control character), and the
// files together must hold names beyond ASCII.
func TestRealOpenGothaFiles(t *testing.T) {
	dir := os.Getenv("SCOREBOARD_OPENGOTHA_DIR")
	if dir == "" {
		dir = filepath.Join("..", "..", "shared", "opengotha")
		if _, err := os.Stat(dir); err != nil {
			t.Skip("no OpenGotha tournament files: copy its repository's distribution/tournamentfiles/*.xml " +
				"into shared/opengotha beside this repository, or name their folder in $SCOREBOARD_OPENGOTHA_DIR")
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.xml"))
	if len(files) == 0 {
		t.Fatalf("no .xml in %s", dir)
	}
	var crlf, nonASCII, names int
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(data, []byte("\r\n")) {
			crlf++
		}
		latest, err := pairing.Parse(f, bytes.NewReader(data), 0)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		games := 0
		for n := 1; n <= latest.Round; n++ {
			r, err := pairing.Parse(f, bytes.NewReader(data), n)
			if err != nil {
				t.Errorf("round %d: %v", n, err)
				continue
			}
			for _, g := range r.Games {
				for _, p := range []pairing.Player{g.Black, g.White} {
					names++
					if err := cleanName(p.FullName()); err != nil {
						t.Errorf("%s round %d table %d: %v", filepath.Base(f), n, g.Table, err)
					}
					if strings.IndexFunc(p.FullName(), func(r rune) bool { return r > unicode.MaxASCII }) >= 0 {
						nonASCII++
					}
				}
			}
			games += len(r.Games)
		}
		t.Logf("%s: %q, %d rounds, %d games, round %d's table 1: %s (%s) - %s (%s) %s", filepath.Base(f), latest.Tournament, latest.Round, games,
			latest.Round, latest.Games[0].Black.FullName(), latest.Games[0].Black.Rank, latest.Games[0].White.FullName(), latest.Games[0].White.Rank, latest.Games[0].Result)
	}
	t.Logf("%d files (%d with CRLF lines), %d players' names in games, %d beyond ASCII", len(files), crlf, names, nonASCII)
	if nonASCII == 0 {
		t.Errorf("%d names in games, none beyond ASCII: OpenGotha's examples have accented and Chinese ones; are these its files?", names)
	}
}

// cleanName is nil for a name a tile can show as it is.
func cleanName(s string) error {
	switch {
	case s == "":
		return errors.New("a player without a name")
	case !utf8.ValidString(s):
		return fmt.Errorf("name %q is not UTF-8", s)
	case strings.ContainsAny(s, "&<>"):
		return fmt.Errorf("name %q has markup or an entity left", s)
	case strings.IndexFunc(s, unicode.IsControl) >= 0:
		return fmt.Errorf("name %q has a control character (a CR of a CRLF line?)", s)
	case strings.TrimSpace(s) != s:
		return fmt.Errorf("name %q has spaces around it", s)
	}
	return nil
}

// TestBadFiles: each bad file is refused with its file, its line and what to do.
func TestBadFiles(t *testing.T) {
	gotha := func(games string) string {
		return "<?xml version=\"1.0\"?>\n<Tournament>\n<Players>\n" +
			"<Player name=\"A\" firstName=\"a\" rank=\"1D\"/>\n<Player name=\"B\" firstName=\"b\" rank=\"2K\"/>\n</Players>\n<Games>\n" + games + "</Games>\n</Tournament>\n"
	}
	const ab = `<Game blackPlayer="AA" whitePlayer="BB" roundNumber="1" tableNumber="1"/>` + "\n"
	evry, _ := os.ReadFile("testdata/evry.xml")
	for _, c := range []struct {
		name, file string
		round      int
		want       []string
	}{
		{"truncated.xml", string(evry[:len(evry)*2/3]), 0, []string{"truncated.xml:", "save it again from OpenGotha"}},
		{"truncated-tag.xml", gotha(ab)[:120], 0, []string{"truncated-tag.xml:5:", "not an OpenGotha file"}},
		{"malformed.xml", gotha(`<Game blackPlayer="AA" whitePlayer="BB" roundNumber="1" tableNumber="1">` + "\n"), 0, []string{"malformed.xml:9:", "save it again"}},
		{"noround.xml", gotha(ab), 2, []string{"noround.xml: round 2 has no games (the file has games in rounds 1)"}},
		{"nogames.xml", gotha(""), 0, []string{"nogames.xml: no games: pair a round"}},
		{"nokey.xml", gotha(ab + `<Game blackPlayer="AA" whitePlayer="CC" roundNumber="1" tableNumber="2"/>` + "\n"), 0,
			[]string{"nokey.xml:9: round 1, table 2: the white player \"CC\" is no Player of the file: register the player"}},
		{"dup.xml", gotha(ab + ab), 0, []string{"dup.xml:9: round 1: table 1 has a second game (the first on line 8)"}},
		{"badnum.xml", gotha(`<Game blackPlayer="AA" whitePlayer="BB" roundNumber="x" tableNumber="1"/>` + "\n"), 0, []string{"badnum.xml:8: roundNumber \"x\": want a number"}},
		{"badresult.xml", gotha(`<Game blackPlayer="AA" whitePlayer="BB" roundNumber="1" tableNumber="1" result="NOPE"/>` + "\n"), 0, []string{"badresult.xml:8: result \"NOPE\" is none of OpenGotha's"}},
		{"bomb.xml", "<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [\n <!ENTITY lol \"lol\">\n <!ENTITY lol2 \"&lol;&lol;&lol;&lol;&lol;\">\n]>\n<Tournament>&lol2;</Tournament>\n", 0,
			[]string{"bomb.xml:2: a DOCTYPE that declares entities is refused"}},
		{"external.xml", "<?xml version=\"1.0\"?>\n<!DOCTYPE t [<!ENTITY x SYSTEM \"file:///etc/passwd\">]>\n<Tournament>&x;</Tournament>\n", 0,
			[]string{"external.xml:2: a DOCTYPE that declares entities is refused"}},
		{"undeclared.xml", "<?xml version=\"1.0\"?>\n<Tournament>\n<Players>&x;</Players></Tournament>\n", 0, []string{"undeclared.xml:3:", "entity"}},
		{"other.xml", "<?xml version=\"1.0\"?>\n<html></html>\n", 0, []string{"other.xml: no <Tournament> element"}},
		{"encoding.xml", "<?xml version=\"1.0\" encoding=\"EBCDIC\"?>\n<Tournament/>\n", 0, []string{"encoding.xml:1:", "save the file as UTF-8"}},
		{"columns.csv", "round,table,black,black rank,white\n1,1,a,1d,b\n", 0, []string{"columns.csv:1: the header has 5 columns: want 6 to 8"}},
		{"columns2.csv", "1,1,a,1d,b,2d\n1,2,a,1d,b\n", 0, []string{"columns2.csv:2: 5 columns: want 6 to 8"}},
		{"header.csv", "round,table,white,white rank,black,black rank\n1,1,a,1d,b,2d\n", 0, []string{"header.csv:1: the header's column 3 is \"white\", want \"black\""}},
		{"quote.csv", "1,1,a,1d,b,2d\n1,2,\"a,1d,b,2d\n", 0, []string{"quote.csv:2: not CSV as far as it goes"}},
		{"dup.csv", "1,1,a,1d,b,2d\n1,1,c,1d,d,2d\n", 0, []string{"dup.csv:2: round 1: table 1 has a second game (the first on line 1)"}},
		{"result.csv", "1,1,a,1d,b,2d,0,1-0\n", 0, []string{"result.csv:1: result \"1-0\": want B+, W+"}},
		{"names.csv", "1,1,,1d,b,2d\n", 0, []string{"names.csv:1: a game without its two players' names"}},
		{"empty.csv", "", 0, []string{"empty.csv: no games"}},
		{"control.csv", "1,1,a\x1b[2J,1d,b,2d\n", 0, []string{"control.csv:1: black", "a control character"}},
		{"long.csv", "1,1," + strings.Repeat("é", 150) + ",1d,b,2d\n", 0, []string{"long.csv:1: black", "over 200"}},
	} {
		_, err := pairing.Parse(c.name, strings.NewReader(c.file), c.round)
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %v, want it to say %q", c.name, err, w)
			}
		}
	}
}

// TestTooLarge: a file over 10 MB is refused before it is parsed, whatever it is.
func TestTooLarge(t *testing.T) {
	big := strings.NewReader(strings.Repeat("1,1,a,1d,b,2d\n", pairing.MaxFile/14+2))
	_, err := pairing.Parse("big.csv", big, 0)
	if !errors.Is(err, pairing.ErrTooLarge) && (err == nil || !strings.Contains(err.Error(), "big.csv: over 10 MB")) {
		t.Fatalf("error %v", err)
	}
}
