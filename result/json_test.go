package result_test

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"github.com/goclub/scoreboard/result"
)

// resultJSONAgrees fails t unless AppendJSON writes what json.Marshal does.
func resultJSONAgrees(t *testing.T, r result.Record) {
	t.Helper()
	want, err := json.Marshal(r)
	if err != nil {
		t.Fatalf("json.Marshal(%+v): %v", r, err)
	}
	prefix := []byte("kept")
	got := r.AppendJSON(append([]byte(nil), prefix...))
	if !bytes.HasPrefix(got, prefix) || !bytes.Equal(got[len(prefix):], want) {
		t.Fatalf("AppendJSON(%+v)\n got %s\nwant %s", r, got, want)
	}
}

func TestResultAppendJSON(t *testing.T) {
	answer, _ := json.Marshal(map[string]any{"black": 5, "white": 3, "note": "<&> \u2028"})
	for _, r := range []result.Record{
		{},
		{Problem: "goscore", Port: "hall", Seq: 7, Line: 12, Answer: "5 3\n", Result: answer, SolveMicros: 1.25, Origin: "9f86d081884c7d65", UnitDigest: "00ff", Worker: "w1"},
		{Problem: "replay", Port: "p", Seq: math.MaxUint64, Line: -3, Error: "replay: line 2: bad move \"B(99,1)\"\t<x>&", Worker: "daemon"},
		{Problem: "goscore", Port: "hall", Seq: 9, Error: "daemon stopping", Origin: "o", Worker: "daemon", Outcome: result.OutcomeStopped},
		{Answer: "\x00\x01\x1f\x7f\b\f\n\r\t\\\"/", SolveMicros: 1e21},
		{Answer: "caf\xc3\xa9 \xff\xfe bad \xe2\x80 cut \u2029 \U0001F600", SolveMicros: 1e-7},
		{SolveMicros: 123456789.125},
		{SolveMicros: -0.5e-9},
		{SolveMicros: 999999999999999999999.0},
		{SolveMicros: 0.000001},
	} {
		resultJSONAgrees(t, r)
	}
}

func FuzzResultAppendJSON(f *testing.F) {
	f.Add("goscore", "hall", uint64(3), int64(21), "5 3\n", "", 1.5, "origin", "worker")
	f.Add("othello", "p", uint64(0), int64(0), "", "othello: line 9: \"<bad>\" & \u2028", 1e-9, "", "")
	f.Add("x", "\xff", uint64(1), int64(-1), "\x00\x1f\x7f", "\xe2\x80", 1e300, "\u2029", "\\")
	f.Add("capture", "hall", uint64(7), int64(1)<<40, "3\n", "", 2.0, "o", "w") // past 2^31 lines
	f.Fuzz(func(t *testing.T, problem, port string, seq uint64, line int64, answer, errText string, us float64, origin, worker string) {
		if math.IsNaN(us) || math.IsInf(us, 0) {
			return // json.Marshal refuses them; a solve time is neither
		}
		raw, _ := json.Marshal(map[string]string{"a": answer, "e": errText})
		resultJSONAgrees(t, result.Record{
			Problem: problem, Port: port, Seq: seq, Line: line, Answer: answer, Error: errText,
			Result: raw, SolveMicros: us, Origin: origin, UnitDigest: origin, Worker: worker,
		})
	})
}

// The encoder beside encoding/json, on a goscore result.
func BenchmarkResultJSON(b *testing.B) {
	r := result.Record{Problem: "goscore", Port: "hall", Seq: 1234, Line: 24661, Answer: "177 175\n",
		Result: json.RawMessage(`{"black":177,"white":175}`), SolveMicros: 1.234, Origin: "9f86d081884c7d65", Worker: "Edl2cd5MmB7cXiLlfPBmpe"}
	b.Run("AppendJSON", func(b *testing.B) {
		var buf []byte
		for b.Loop() {
			buf = r.AppendJSON(buf[:0])
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			if _, err := json.Marshal(r); err != nil {
				b.Fatal(err)
			}
		}
	})
}
