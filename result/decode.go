package result

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Decode reads a result's JSON as encoding/json reads it into a Record, with the
// same answer and the same errors. It walks the object once and copies each field
// out of it, without encoding/json's reflection: the display writer reads every
// answer a port gets. Anything it does not expect (an escape it does not decode, a
// key in another case, nesting past its depth) goes to encoding/json, whose answer
// and errors are the reference; a fuzz target holds the two to agreeing.
func Decode(data []byte) (Record, error) {
	if r, ok := fastDecode(data); ok {
		return r, nil
	}
	var r Record
	err := json.Unmarshal(data, &r)
	return r, err
}

var errSlow = errors.New("take the slow path")

func fastDecode(d []byte) (r Record, ok bool) {
	return r, walk(d, &r, nil)
}

// field reads the value at d[i] of a key that is not a Record's into what it
// decodes: handled false for a key it does not know, ok false to leave the whole
// object to encoding/json.
type field func(key, d []byte, i int) (end int, handled, ok bool)

// walk reads the object d into r, and the keys that are not a Record's through
// extra (when not nil); false leaves d to encoding/json.
func walk(d []byte, r *Record, extra field) bool {
	i := skipSpace(d, 0)
	if i >= len(d) || d[i] != '{' {
		return false
	}
	i = skipSpace(d, i+1)
	if i < len(d) && d[i] == '}' {
		return skipSpace(d, i+1) == len(d)
	}
	for {
		key, end, ok := readKey(d, i)
		if !ok {
			return false
		}
		i = skipSpace(d, end)
		if i >= len(d) || d[i] != ':' {
			return false
		}
		i = skipSpace(d, i+1)
		var err error
		switch string(key) {
		case "seq":
			r.Seq, end, ok = readUint(d, i)
			if !ok {
				return false
			}
		case "line":
			r.Line, end, ok = readInt(d, i)
			if !ok {
				return false
			}
		case "solve_us":
			r.SolveMicros, end, ok = readFloat(d, i)
			if !ok {
				return false
			}
		case "result":
			// encoding/json hands a RawMessage the value's bytes as they are, null
			// included; the fast path takes objects and arrays that are valid JSON.
			if i >= len(d) || d[i] != '{' && d[i] != '[' {
				return false
			}
			if end, err = skipValue(d, i); err == nil {
				if !json.Valid(d[i:end]) {
					return false
				}
				r.Result = append(json.RawMessage(nil), d[i:end]...)
			}
		case "problem":
			r.Problem, end, err = readString(d, i)
		case "port":
			r.Port, end, err = readString(d, i)
		case "origin":
			r.Origin, end, err = readString(d, i)
		case "answer":
			r.Answer, end, err = readString(d, i)
		case "error":
			r.Error, end, err = readString(d, i)
		case "unit_digest":
			r.UnitDigest, end, err = readString(d, i)
		case "worker":
			r.Worker, end, err = readString(d, i)
		case "outcome":
			r.Outcome, end, err = readString(d, i)
		case "players":
			if r.Players, end, ok = readPlayers(d, i); !ok {
				return false
			}
		default:
			if extra != nil {
				var handled bool
				if end, handled, ok = extra(key, d, i); handled {
					if !ok {
						return false
					}
					break
				}
			}
			if foldsToField(key) || extra != nil && foldsToKept(key) {
				return false // encoding/json matches keys regardless of case
			}
			end, err = skipValue(d, i)
		}
		if err != nil {
			return false
		}
		i = skipSpace(d, end)
		if i >= len(d) {
			return false
		}
		switch d[i] {
		case ',':
			i = skipSpace(d, i+1)
		case '}':
			return skipSpace(d, i+1) == len(d)
		default:
			return false
		}
	}
}

// readKey returns the bytes of the object key at d[i], without copying them; a key
// with an escape or a byte outside printable ASCII is left to encoding/json.
func readKey(d []byte, i int) (key []byte, end int, ok bool) {
	if i >= len(d) || d[i] != '"' {
		return nil, 0, false
	}
	for j := i + 1; j < len(d); j++ {
		switch c := d[j]; {
		case c == '"':
			return d[i+1 : j], j + 1, true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return nil, 0, false
		}
	}
	return nil, 0, false
}

func foldsToField(key []byte) bool {
	for _, f := range [...]string{"problem", "port", "seq", "line", "answer", "error", "result", "solve_us", "origin", "unit_digest", "worker", "outcome", "players"} {
		if len(key) == len(f) && strings.EqualFold(string(key), f) {
			return true
		}
	}
	return false
}

// readUint reads the unsigned integer at d[i]; JSON's other numbers, and null, are
// left to encoding/json.
func readUint(d []byte, i int) (n uint64, end int, ok bool) {
	j := i
	for j < len(d) && d[j] >= '0' && d[j] <= '9' {
		j++
	}
	if j == i || j-i > 19 || (d[i] == '0' && j-i > 1) {
		return 0, 0, false // none, possibly too big, or a leading zero
	}
	if j < len(d) && (d[j] == '.' || d[j] == 'e' || d[j] == 'E') {
		return 0, 0, false
	}
	for _, c := range d[i:j] {
		n = n*10 + uint64(c-'0')
	}
	return n, j, true
}

// readInt reads the integer at d[i] that fits a Line; anything else is left to
// encoding/json.
func readInt(d []byte, i int) (n int, end int, ok bool) {
	neg := i < len(d) && d[i] == '-'
	if neg {
		i++
	}
	u, end, ok := readUint(d, i)
	if !ok || u > 1<<31-1 {
		return 0, 0, false // past what every int holds: encoding/json decides
	}
	if neg {
		return -int(u), end, true
	}
	return int(u), end, true
}

// readFloat reads the number at d[i] as encoding/json does, with strconv.ParseFloat
// on its text.
func readFloat(d []byte, i int) (f float64, end int, ok bool) {
	if i >= len(d) || d[i] != '-' && (d[i] < '0' || d[i] > '9') {
		return 0, 0, false // null, or not a number
	}
	end, err := skipValue(d, i)
	if err != nil {
		return 0, 0, false
	}
	f, err = strconv.ParseFloat(string(d[i:end]), 64)
	return f, end, err == nil
}

func skipSpace(d []byte, i int) int {
	for i < len(d) && (d[i] == ' ' || d[i] == '\t' || d[i] == '\n' || d[i] == '\r') {
		i++
	}
	return i
}

// readString decodes the JSON string at d[i], handling the escapes a result's text
// has (\n, \", \\ and the like); \u escapes and anything odd are left to encoding/json.
func readString(d []byte, i int) (string, int, error) {
	if i >= len(d) || d[i] != '"' {
		return "", 0, errSlow
	}
	i++
	start := i
	var b []byte // the decoded text, once an escape was met
	for i < len(d) {
		// Copy up to the next quote or backslash at once.
		j := i
		wide := false
		for j < len(d) && d[j] != '"' && d[j] != '\\' {
			if d[j] < 0x20 {
				return "", 0, errSlow // control bytes are invalid
			}
			wide = wide || d[j] >= 0x80
			j++
		}
		if wide && !utf8.Valid(d[i:j]) {
			return "", 0, errSlow // encoding/json makes each bad byte U+FFFD
		}
		if b != nil {
			b = append(b, d[i:j]...)
		}
		if j >= len(d) || j+1 >= len(d) && d[j] == '\\' {
			return "", 0, errSlow
		}
		if d[j] == '"' {
			if b == nil {
				return string(d[start:j]), j + 1, nil
			}
			return string(b), j + 1, nil
		}
		if b == nil {
			b = append(make([]byte, 0, len(d)-start), d[start:j]...)
		}
		switch d[j+1] {
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case '"', '\\', '/':
			b = append(b, d[j+1])
		default:
			return "", 0, errSlow
		}
		i = j + 2
	}
	return "", 0, errSlow
}

// skipValue skips the JSON value at d[i]: a string, or an object or array (brackets
// counted outside strings), or a literal. Only the brackets and strings are checked;
// the rest is encoding/json's to refuse if the fast path ever got it wrong.
func skipValue(d []byte, i int) (int, error) {
	if i >= len(d) {
		return 0, errSlow
	}
	switch d[i] {
	case '"':
		return skipString(d, i)
	case '{', '[':
		var opened [32]byte // deeper nesting goes to encoding/json
		stack := opened[:0]
		for i < len(d) {
			switch c := d[i]; c {
			case '"':
				end, err := skipString(d, i)
				if err != nil {
					return 0, err
				}
				i = end
				continue
			case '{', '[':
				if len(stack) == len(opened) {
					return 0, errSlow
				}
				stack = append(stack, c)
			case '}', ']':
				if len(stack) == 0 || (c == '}') != (stack[len(stack)-1] == '{') {
					return 0, errSlow
				}
				stack = stack[:len(stack)-1]
				if len(stack) == 0 {
					return i + 1, nil
				}
			}
			i++
		}
		return 0, errSlow
	default:
		start := i
	literal:
		for ; i < len(d); i++ {
			switch d[i] {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				break literal
			}
		}
		if !validLiteral(d[start:i]) {
			return 0, errSlow
		}
		return i, nil
	}
}

// skipString skips the JSON string at d[i] without decoding it.
func skipString(d []byte, i int) (int, error) {
	for j := i + 1; j < len(d); j++ {
		switch c := d[j]; {
		case c == '"':
			return j + 1, nil
		case c == '\\':
			j++ // the escaped byte; encoding/json checks the escapes if it matters
		case c < 0x20:
			return 0, errSlow
		}
	}
	return 0, errSlow
}

// validLiteral reports whether lit is true, false, null or a JSON number.
func validLiteral(lit []byte) bool {
	switch string(lit) {
	case "true", "false", "null":
		return true
	}
	i := 0
	digits := func() bool {
		start := i
		for i < len(lit) && lit[i] >= '0' && lit[i] <= '9' {
			i++
		}
		return i > start
	}
	if i < len(lit) && lit[i] == '-' {
		i++
	}
	if i < len(lit) && lit[i] == '0' {
		i++
	} else if !digits() {
		return false
	}
	if i < len(lit) && lit[i] == '.' {
		i++
		if !digits() {
			return false
		}
	}
	if i < len(lit) && (lit[i] == 'e' || lit[i] == 'E') {
		i++
		if i < len(lit) && (lit[i] == '+' || lit[i] == '-') {
			i++
		}
		if !digits() {
			return false
		}
	}
	return i == len(lit)
}

// SeqOrigin reads a result's seq and origin without decoding the rest: the
// history's reader of the stream takes them from every result, and decodes only
// those it puts. It walks the object's top-level keys, so neither the encoder's
// field order nor a "seq" inside the structured result can mislead it; what the
// walk cannot take (an escaped key, say) is decoded in full. Zero values when data
// is no result.
func SeqOrigin(data []byte) (seq uint64, origin string) {
	if seq, origin, ok := seqOrigin(data); ok {
		return seq, origin
	}
	r, err := Decode(data)
	if err != nil {
		return 0, ""
	}
	return r.Seq, r.Origin
}

func seqOrigin(d []byte) (seq uint64, origin string, ok bool) {
	i := skipSpace(d, 0)
	if i >= len(d) || d[i] != '{' {
		return 0, "", false
	}
	i = skipSpace(d, i+1)
	if i < len(d) && d[i] == '}' {
		return 0, "", true
	}
	for {
		key, end, ok := readKey(d, i)
		if !ok {
			return 0, "", false
		}
		k := string(key)
		if k != "seq" && k != "origin" && (strings.EqualFold(k, "seq") || strings.EqualFold(k, "origin")) {
			return 0, "", false // encoding/json matches keys regardless of case
		}
		i = skipSpace(d, end)
		if i >= len(d) || d[i] != ':' {
			return 0, "", false
		}
		i = skipSpace(d, i+1)
		var err error
		switch k {
		case "seq":
			if seq, end, ok = readUint(d, i); !ok {
				return 0, "", false
			}
		case "origin":
			origin, end, err = readString(d, i)
		default:
			end, err = skipValue(d, i)
		}
		if err != nil {
			return 0, "", false
		}
		i = skipSpace(d, end)
		switch {
		case i < len(d) && d[i] == ',':
			i = skipSpace(d, i+1)
		case i < len(d) && d[i] == '}':
			return seq, origin, true
		default:
			return 0, "", false
		}
	}
}

// readPlayers reads the players object at d[i] (Players' own keys, strings and
// integers); anything else (null, another key, a key in another case) is left to
// encoding/json.
func readPlayers(d []byte, i int) (*Players, int, bool) {
	if i >= len(d) || d[i] != '{' {
		return nil, 0, false
	}
	p := &Players{}
	i = skipSpace(d, i+1)
	if i < len(d) && d[i] == '}' {
		return p, i + 1, true
	}
	for {
		key, end, ok := readKey(d, i)
		if !ok {
			return nil, 0, false
		}
		i = skipSpace(d, end)
		if i >= len(d) || d[i] != ':' {
			return nil, 0, false
		}
		i = skipSpace(d, i+1)
		var s *string
		var n *int
		switch string(key) {
		case "tournament":
			s = &p.Tournament
		case "round":
			n = &p.Round
		case "table":
			n = &p.Table
		case "date":
			s = &p.Date
		case "place":
			s = &p.Place
		case "black":
			s = &p.Black
		case "black_rank":
			s = &p.BlackRank
		case "white":
			s = &p.White
		case "white_rank":
			s = &p.WhiteRank
		case "handicap":
			n = &p.Handicap
		case "result":
			s = &p.Result
		default:
			return nil, 0, false
		}
		var err error
		if s != nil {
			*s, end, err = readString(d, i)
			ok = err == nil
		} else {
			*n, end, ok = readInt(d, i)
		}
		if !ok {
			return nil, 0, false
		}
		i = skipSpace(d, end)
		if i >= len(d) {
			return nil, 0, false
		}
		switch d[i] {
		case ',':
			i = skipSpace(d, i+1)
		case '}':
			return p, i + 1, true
		default:
			return nil, 0, false
		}
	}
}
