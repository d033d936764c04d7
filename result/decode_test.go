package result

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// same says whether two records are equal, a nil Result and an empty one apart.
func same(a, b Record) bool { return reflect.DeepEqual(a, b) }

func TestDecode(t *testing.T) {
	full, err := json.Marshal(Record{
		Problem: "othello", Port: "hall", Seq: 7, Line: 12,
		Answer: "(3,4) (4,3)\nBlack -  1 White -  4\n\"<&>\"\t\\",
		Result: json.RawMessage(`{"moves":[[3,4],[4,3]],"note":"a } in \"a string\" ]"}`),
		Origin: "a1b2", UnitDigest: "b1f6a3c2", Outcome: OutcomeStopped, SolveMicros: 2.5e-7, Worker: "w1",
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{
		string(full),
		`{"answer":"5 3\n","solve_us":1.5e1,"seq":3,"x":null,"y":true,"z":[{}]}`,
		`{"error":"goscore: line 3: bad row","answer":""}`,
		` { "answer" : "a\u00e9b\n" } `, // \u: the slow path
		`{"Answer":"case"}`,
		`{"answer":"x","answer":"last wins"}`,
		`{}`,
		`{"answer":null}`,
		`{"seq":18446744073709551615,"origin":"o"}`,
		`{"seq":0}`,
		`{"seq":null,"origin":null}`,
		`{"Seq":5}`,
		`{"seq":5,"seq":6}`,
		`{"origin":"x","ORIGIN":"y"}`,
		`{"unit_digest":"ab","Unit_Digest":"cd"}`,
		`{"\u0073eq":5}`,
		`{"x":-0.5e+10,"y":[1E3,true,false,null,"s\"]"],"answer":"a"}`,
		`{"result":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `,"answer":"deep"}`, // past the fast path's depth
		`{"line":-12,"solve_us":-0,"result":[ 1 , {"a" : null} ],"worker":"w","outcome":"stopped"}`,
		`{"line":2147483648,"solve_us":1e300}`, // past an int32: encoding/json decides
		`{"line":0,"solve_us":0.000001,"result":null}`,
		`{"result":"text","Line":3,"WORKER":"x"}`,
		`{"result":{"a":1},"result":[2]}`,
	} {
		var want Record
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		got, err := Decode([]byte(in))
		if err != nil || !same(got, want) {
			t.Errorf("Decode(%s) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{``, `{`, `{"answer":"x"`, `{"answer":"x"}}`, `[]`, `{"answer":1}`, `{"a":[}`,
		`{"seq":-1}`, `{"seq":1.5}`, `{"seq":1e3}`, `{"seq":18446744073709551616}`, `{"seq":01}`, `{"seq":"1"}`,
		`{"x":1.}`, `{"x":-}`, `{"x":tru}`, `{"x":1e}`, `{"line":1.5}`, `{"line":"1"}`, `{"solve_us":"1"}`,
		`{"result":{"a":1 2}}`, `{"result":[1,]}`, `{"solve_us":1e400}`, `{"x":"a` + "\x01" + `"}`} {
		if r, err := Decode([]byte(in)); err == nil {
			t.Errorf("Decode(%s) = %+v, want an error", in, r)
		}
	}
}

// The fast paths (Decode's, and DecodeKept's of a kept result) agree with
// encoding/json on whatever encoding/json accepts, and never panic.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"problem":"goscore","port":"p","seq":1,"answer":"5 3\n","unit":"5 5\n.....\n","time":"2026-11-27T20:00:00.1Z","board":["--B","W--"],"stream_seq":9}`))
	f.Add([]byte(`{"answer":"","unit":"x","time":"t","unanswered":true,"Board":["a"]}`))
	f.Add([]byte(`{"board":[],"unanswered":false,"board":null}`))
	f.Add([]byte(`{"problem":"goscore","port":"p","seq":1,"answer":"5 3\n","result":{"black":5,"white":3},"solve_us":3.5,"worker":"w"}`))
	f.Add([]byte(`{"answer":"","error":"replay: line 2: bad move \"B(99,1)\""}`))
	f.Add([]byte(`{"answer":"a\u2028b\\n","result":[1,[2,{"x":"]"}]]}`))
	f.Add([]byte(`{"answer":"x" , "ANSWER":"y"}`))
	f.Add([]byte(`{"seq":123,"origin":"9f86d081884c7d65","answer":"1 2\n"}`))
	f.Add([]byte(`{"seq":99999999999999999999}`))
	f.Add([]byte(`{"seq":7,"origin":"o","unit_digest":"0123456789abcdef0123456789abcdef","answer":"5 3\n"}`))
	f.Add([]byte(`{"answer":"é","players":{"tournament":"Open d'Évry","round":3,"table":12,"black":"Zoé \"Z\" Lefèvre","black_rank":"2d","white":"王小明","handicap":2,"result":"W+R"}}`))
	f.Add([]byte(`{"players":{},"players":{"Round":1,"round":2.0}}`))
	f.Add([]byte(`{"players":null,"answer":"\xff"}`))
	f.Add([]byte("{\"answer\":\"a\xffb\",\"players\":{\"black\":\"\xc3\"}}"))
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := Decode(in)
		var want Record
		if json.Unmarshal(in, &want) != nil {
			return
		}
		if err != nil || !same(got, want) {
			t.Fatalf("Decode(%q) = %+v, %v; encoding/json says %+v", in, got, err, want)
		}
		gotK, err := DecodeKept(in)
		var wantK Kept
		if json.Unmarshal(in, &wantK) != nil {
			return
		}
		if err != nil || !reflect.DeepEqual(gotK, wantK) {
			t.Fatalf("DecodeKept(%q) = %+v, %v; encoding/json says %+v", in, gotK, err, wantK)
		}
	})
}

// The kept result's parser beside encoding/json, on a bucket's value of a goscore
// board as the hub's boards keeper puts it.
func BenchmarkDecodeKept(b *testing.B) {
	res, _ := json.Marshal(Record{Problem: "goscore", Port: "hall", Seq: 1234, Answer: "177 175\n",
		Result: json.RawMessage(`{"black":177,"white":175}`), SolveMicros: 1.234, Origin: "9f86d081884c7d65", Worker: "Edl2cd5MmB7cXiLlfPBmpe"})
	unit := strings.Repeat(strings.Repeat("B.W", 6)+"B\n", 19)
	data, _ := json.Marshal(Kept{Record: func() Record { r, _ := Decode(res); return r }(), Unit: unit, Time: "2026-11-27T20:00:00.123456789Z"})
	b.Run("DecodeKept", func(b *testing.B) {
		for b.Loop() {
			if _, err := DecodeKept(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			var k Kept
			if err := json.Unmarshal(data, &k); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// The result parser beside encoding/json, on a goscore result as a worker writes it.
func BenchmarkDecode(b *testing.B) {
	data, err := json.Marshal(Record{Problem: "goscore", Port: "hall", Seq: 1234, Line: 24661, Answer: "177 175\n",
		Result: json.RawMessage(`{"black":177,"white":175}`), SolveMicros: 1.234, Origin: "9f86d081884c7d65", Worker: "Edl2cd5MmB7cXiLlfPBmpe"})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("Decode", func(b *testing.B) {
		for b.Loop() {
			if _, err := Decode(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			var r Record
			if err := json.Unmarshal(data, &r); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// Decode reads the golden messages as encoding/json does, and the encoder writes
// what it read back to the same bytes.
func TestDecodeGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "golden", "result-*.json"))
	if err != nil || len(files) < 5 {
		t.Fatalf("golden results: %d files, %v", len(files), err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		wire := bytes.TrimSuffix(b, []byte("\n"))
		var want Record
		if err := json.Unmarshal(wire, &want); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		got, err := Decode(wire)
		if err != nil || !same(got, want) {
			t.Errorf("%s: Decode: %v\n got %+v\nwant %+v", f, err, got, want)
		}
		// Only a \u escape, which the workers write for <, >, & and the like, takes
		// the slow path.
		if _, fast := fastDecode(wire); !fast && !bytes.Contains(wire, []byte(`\u`)) {
			t.Errorf("%s: not read by the fast path", f)
		}
		// A byte that was not UTF-8 comes back as U+FFFD, which is written as it is.
		if again := got.AppendJSON(nil); !bytes.Equal(again, wire) && !bytes.Contains(wire, []byte(`\ufffd`)) {
			t.Errorf("%s: encoded again\n got %s\nwant %s", f, again, wire)
		}
	}
}

// SeqOrigin reads the top-level seq and origin, whatever the order of the fields
// and whatever the structured result holds (the scan it replaced took the first
// "seq": anywhere: 9 here).
func TestSeqOrigin(t *testing.T) {
	for _, c := range []struct {
		in     string
		seq    uint64
		origin string
	}{
		{`{"problem":"replay","result":{"seq":9,"origin":"x"},"seq":3,"origin":"o","answer":"\"seq\":7"}`, 3, "o"},
		{`{"origin":"a\"b","seq":12}`, 12, `a"b`},
		{`{"SEQ":4}`, 4, ""}, // encoding/json's case-insensitive match, by the slow path
		{`{"seq":"1"}`, 0, ""},
		{`not json`, 0, ""},
		{`{}`, 0, ""},
	} {
		seq, origin := SeqOrigin([]byte(c.in))
		if seq != c.seq || origin != c.origin {
			t.Errorf("SeqOrigin(%s) = %d, %q; want %d, %q", c.in, seq, origin, c.seq, c.origin)
		}
	}
}

// SeqOrigin agrees with encoding/json's seq and origin on whatever it accepts, and
// never panics.
func FuzzSeqOrigin(f *testing.F) {
	f.Add([]byte(`{"problem":"goscore","port":"p","seq":1,"answer":"5 3\n","origin":"o"}`))
	f.Add([]byte(`{"result":{"seq":9},"seq":3,"origin":"o"}`))
	f.Add([]byte(`{"Origin":"x","seq":2}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		seq, origin := SeqOrigin(in)
		var want Record
		if json.Unmarshal(in, &want) != nil {
			return
		}
		if seq != want.Seq || origin != want.Origin {
			t.Fatalf("SeqOrigin(%q) = %d, %q; encoding/json says %d, %q", in, seq, origin, want.Seq, want.Origin)
		}
	})
}

// SeqOrigin beside a full Decode and beside the two byte searches it replaced
// (which took the first "seq": anywhere), on a goscore result as a worker writes it.
func BenchmarkSeqOrigin(b *testing.B) {
	data, err := json.Marshal(Record{Problem: "goscore", Port: "hall", Seq: 1234, Line: 24661, Answer: "177 175\n",
		Result: json.RawMessage(`{"black":177,"white":175}`), SolveMicros: 1.234, Origin: "9f86d081884c7d65", Worker: "Edl2cd5MmB7cXiLlfPBmpe"})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("SeqOrigin", func(b *testing.B) {
		for b.Loop() {
			if seq, _ := SeqOrigin(data); seq != 1234 {
				b.Fatal(seq)
			}
		}
	})
	b.Run("Decode", func(b *testing.B) {
		for b.Loop() {
			if r, _ := Decode(data); r.Seq != 1234 {
				b.Fatal(r.Seq)
			}
		}
	})
	b.Run("byte-search", func(b *testing.B) {
		for b.Loop() {
			i := bytes.Index(data, []byte(`"seq":`))
			j := bytes.Index(data, []byte(`"origin":"`))
			if i < 0 || j < 0 {
				b.Fatal("not found")
			}
		}
	})
}
