package result

import (
	"encoding/json"
	"strings"
)

// DecodeKept reads a kept result's JSON (a bucket's value, history's) as
// encoding/json reads it into a Kept, with the same answer and the same errors: the
// hub's page reads one for each of its 1,600 boards' changes a second, where
// encoding/json's reflection was a tenth of the hub's time. What the fast path does
// not expect goes to encoding/json, as Decode's does.
func DecodeKept(data []byte) (Kept, error) {
	var k Kept
	if walk(data, &k.Record, k.field) {
		return k, nil
	}
	k = Kept{}
	err := json.Unmarshal(data, &k)
	return k, err
}

// field reads Kept's own keys for walk.
func (k *Kept) field(key, d []byte, i int) (end int, handled, ok bool) {
	var err error
	switch string(key) {
	case "unit":
		k.Unit, end, err = readString(d, i)
	case "time":
		k.Time, end, err = readString(d, i)
	case "stream_seq":
		k.StreamSeq, end, ok = readUint(d, i)
		return end, true, ok
	case "unanswered":
		switch {
		case len(d)-i >= 4 && string(d[i:i+4]) == "true":
			k.Unanswered, end = true, i+4
		case len(d)-i >= 5 && string(d[i:i+5]) == "false":
			k.Unanswered, end = false, i+5
		default:
			return 0, true, false
		}
	case "board":
		k.Board, end, ok = readStrings(d, i)
		return end, true, ok
	default:
		return 0, false, false
	}
	return end, true, err == nil
}

// readStrings reads the array of strings at d[i]; null and anything else go to
// encoding/json.
func readStrings(d []byte, i int) (out []string, end int, ok bool) {
	if i >= len(d) || d[i] != '[' {
		return nil, 0, false
	}
	out = []string{}
	i = skipSpace(d, i+1)
	if i < len(d) && d[i] == ']' {
		return out, i + 1, true
	}
	for {
		s, end, err := readString(d, i)
		if err != nil {
			return nil, 0, false
		}
		out = append(out, s)
		i = skipSpace(d, end)
		switch {
		case i < len(d) && d[i] == ',':
			i = skipSpace(d, i+1)
		case i < len(d) && d[i] == ']':
			return out, i + 1, true
		default:
			return nil, 0, false
		}
	}
}

// foldsToKept says whether key is one of Kept's own in another case, which
// encoding/json would take.
func foldsToKept(key []byte) bool {
	for _, f := range [...]string{"unit", "time", "board", "unanswered", "stream_seq"} {
		if len(key) == len(f) && string(key) != f && strings.EqualFold(string(key), f) {
			return true
		}
	}
	return false
}
