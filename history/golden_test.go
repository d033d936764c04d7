package history_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/goclub/scoreboard/history"
)

var updateGolden = flag.Bool("update", false, "write the golden records of testdata/golden from the code (review the diff before committing it)")

// The history's records stay byte for byte what the committed golden files hold: a
// bucket's value (the page's tile), and `history --json`'s line of a unit answered
// and of one never answered. Each is built on a result's golden wire bytes.
func TestRecordGolden(t *testing.T) {
	dir := filepath.Join("..", "testdata", "golden")
	read := func(name string) []byte {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return bytes.TrimSuffix(b, []byte("\n"))
	}
	at := time.Date(2026, 11, 25, 10, 41, 10, 123456789, time.UTC)
	othello := []byte("M\n- - - - - - - -\n- - - - - - - -\n- - - - - - - -\n- - - W B - - -\n- - - B W - - -\n- - - - - - - -\n- - - - - - - -\n- - - - - - - -\n")
	board := []string{"--------", "--------", "--------", "---WB---", "---BW---", "--------", "--------", "--------"}
	for name, got := range map[string][]byte{
		"kept-value.json":       history.AppendStreamSeq(history.AppendRecord(nil, read("result-solved.json"), []byte("9\nB 3 3\n"), at, nil, false), 4321),
		"kept-value-board.json": history.AppendStreamSeq(history.AppendRecord(nil, read("result-stopped.json"), othello, at, board, false), 18),
		"kept-answered.json": (&history.Entry{Problem: "replay", Port: "lab", Seq: 8, Result: read("result-error.json"),
			Unit: []byte("19\nB(99,1)\n"), Time: at, UnitSeq: 7}).JSON(nil),
		"kept-unanswered.json": (&history.Entry{Problem: "goscore", Port: "hall", Seq: 1, Result: []byte(`{}`),
			Unit: []byte("<&>\n"), Time: at, Unanswered: true}).JSON(nil),
	} {
		if *updateGolden {
			if err := os.WriteFile(filepath.Join(dir, name), append(got, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if want := read(name); !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
}
