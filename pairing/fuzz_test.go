package pairing_test

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/goclub/scoreboard/pairing"
)

// checkParsed holds what either parser returns to the model's rules: a round it
// gives passes Check, and each game kept in a bucket decodes back to itself.
func checkParsed(t *testing.T, r pairing.Round, err error) {
	if err != nil {
		return
	}
	if cerr := pairing.Check(r); cerr != nil {
		t.Fatalf("a parsed round fails Check: %v\n%+v", cerr, r)
	}
	for _, g := range r.Games {
		c := pairing.Current{Info: r.Info, Game: g, Loaded: time.Unix(1, 0).UTC()}
		back, err := pairing.Decode(c.Encode())
		if err != nil || back != c {
			t.Fatalf("game %+v does not come back from the bucket: %+v, %v", c, back, err)
		}
		if len(c.Encode()) > pairing.MaxValue {
			t.Fatalf("a value of %d bytes", len(c.Encode()))
		}
	}
}

func FuzzParseOpenGotha(f *testing.F) {
	evry, err := os.ReadFile("testdata/evry.xml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(evry, 0)
	f.Add(evry, 1)
	f.Add(evry[:len(evry)/2], 0)
	f.Add([]byte(`<?xml version="1.0" encoding="ISO-8859-1"?><Tournament><Players><Player name="`+"\xe9"+`" firstName="a"/></Players>`+
		`<Games><Game blackPlayer="`+"\xe9"+`A" whitePlayer="`+"\xe9"+`A" roundNumber="1" tableNumber="1"/></Games></Tournament>`), 0)
	f.Add([]byte("<!DOCTYPE t [<!ENTITY a \"b\">]><Tournament>&a;</Tournament>"), 0)
	f.Fuzz(func(t *testing.T, data []byte, round int) {
		r, err := pairing.ParseOpenGotha("f.xml", data, round)
		checkParsed(t, r, err)
	})
}

func FuzzParseCSV(f *testing.F) {
	csv, err := os.ReadFile("testdata/round.csv")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(csv, 0)
	f.Add(csv, 1)
	f.Add([]byte("1;2;a;1d;b;2k;3;W+2.5\n"), 0)
	f.Add([]byte("round,table,black,black rank,white,white rank\n1,1,\"a\"\"b\",1d,b,2k\n1,1,c,1d,d,2k\n"), 0)
	f.Fuzz(func(t *testing.T, data []byte, round int) {
		r, err := pairing.Parse("f.csv", bytes.NewReader(data), round)
		checkParsed(t, r, err)
	})
}
