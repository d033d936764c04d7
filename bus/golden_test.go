package bus_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/goclub/scoreboard/result"
)

var updateGolden = flag.Bool("update", false, "write the golden messages of testdata/golden from the code (review the diff before committing it)")

// goldenResults are results as the workers, the daemon and the history publish them;
// testdata/golden/result-<name>.json holds each one's bytes on the wire.
var goldenResults = map[string]result.Record{
	// A goscore unit a port's dump asked for, solved by a worker.
	"solved": {Problem: "goscore", Port: "hall", Seq: 1234, Line: 24661, Answer: "177 175\n",
		Result: json.RawMessage(`{"black":177,"white":175}`), SolveMicros: 1.234,
		Origin: "9f86d081884c7d65", UnitDigest: "5ff8ec1e4b2cbd5a0aa2d6f6b1c4d1a9", Worker: "Edl2cd5MmB7cXiLlfPBmpe"},
	// A unit that does not parse: the worker's error result.
	"error": {Problem: "replay", Port: "lab", Seq: 8, Line: 40,
		Error: "replay: line 42: bad move \"B(99,1)\": off the 19x19 board", SolveMicros: 12.5,
		Origin: "0a1b2c3d4e5f6071", UnitDigest: "00112233445566778899aabbccddeeff", Worker: "Edl2cd5MmB7cXiLlfPBmpe"},
	// A unit the daemon gave up when its drain bound ended.
	"stopped": {Problem: "othello", Port: "tv", Seq: 77, Line: 700,
		Error: "daemon stopping: no answer within the drain bound", Origin: "0a1b2c3d4e5f6071",
		Worker: "daemon", Outcome: result.OutcomeStopped},
	// A dump sent by hand (scoreboard publish): no origin, no line, seq 0.
	"byhand": {Problem: "capture", Port: "desk", Answer: "2\n", Result: json.RawMessage(`{"captured":2}`),
		SolveMicros: 0.5, UnitDigest: "ffeeddccbbaa99887766554433221100", Worker: "w2"},
	// A unit the port reader refused before any worker saw it.
	"reader": {Problem: "territory", Port: "hall", Seq: 3, Line: 9,
		Error: "unit of 1048577 bytes, over --max-unit-bytes", Origin: "9f86d081884c7d65", Worker: "reader"},
	// Every optional field, and text that JSON escapes: an answer of several lines,
	// HTML characters, a tab, U+2028 and a byte that is not UTF-8.
	"full": {Problem: "othello", Port: "p-1_x", Seq: 18446744073709551615, Line: 2147483647,
		Answer:      "(3,4) (4,3)\nBlack -  1 White -  4\n\"<&>\"\t\\ \u2028 \xff\n",
		Error:       "partial: <b>&amp;</b>",
		Result:      json.RawMessage(`{"moves":[[3,4],[4,3]],"note":"a } in \"a string\" ]","u":"\u003c\u2028"}`),
		SolveMicros: 1e-7, Origin: "o", UnitDigest: "d", Worker: "w", Outcome: "stopped"},
}

// The result JSON on the wire stays byte for byte what the committed golden messages
// hold, from the fast encoder and from encoding/json, and reads back as it was: older
// tools, which read it with encoding/json, keep reading it.
func TestResultGolden(t *testing.T) {
	for name, r := range goldenResults {
		path := filepath.Join("..", "testdata", "golden", "result-"+name+".json")
		got := r.AppendJSON(nil)
		if *updateGolden {
			if err := os.WriteFile(path, append(got, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		file, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		want := bytes.TrimSuffix(file, []byte("\n"))
		if !bytes.Equal(got, want) {
			t.Errorf("%s: AppendJSON\n got %s\nwant %s", name, got, want)
		}
		if std, err := json.Marshal(r); err != nil || !bytes.Equal(std, want) {
			t.Errorf("%s: json.Marshal\n got %s, %v\nwant %s", name, std, err, want)
		}
		var back result.Record
		if err := json.Unmarshal(want, &back); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// Invalid UTF-8 reads back as U+FFFD, as encoding/json writes it.
		r.Answer = string(bytes.ToValidUTF8([]byte(r.Answer), []byte("\uFFFD")))
		if !reflect.DeepEqual(back, r) {
			t.Errorf("%s: read back\n got %+v\nwant %+v", name, back, r)
		}
	}
}
