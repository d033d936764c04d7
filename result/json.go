package result

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// AppendJSON appends r as JSON, byte for byte what json.Marshal writes, without its
// reflection: a worker encodes one result per unit, and encoding/json's was the
// costliest step of a worker's dump after the solving itself. r.Result must be JSON as
// json.Marshal writes it (compact, HTML-escaped), as the workers make it; it is
// copied as it is.
func (r *Record) AppendJSON(b []byte) []byte {
	b = append(b, `{"problem":`...)
	b = AppendJSONString(b, r.Problem)
	b = append(b, `,"port":`...)
	b = AppendJSONString(b, r.Port)
	b = append(b, `,"seq":`...)
	b = strconv.AppendUint(b, r.Seq, 10)
	if r.Line != 0 {
		b = append(b, `,"line":`...)
		b = strconv.AppendInt(b, int64(r.Line), 10)
	}
	b = append(b, `,"answer":`...)
	b = AppendJSONString(b, r.Answer)
	if r.Error != "" {
		b = append(b, `,"error":`...)
		b = AppendJSONString(b, r.Error)
	}
	if len(r.Result) != 0 {
		b = append(b, `,"result":`...)
		b = append(b, r.Result...)
	}
	b = append(b, `,"solve_us":`...)
	b = appendJSONFloat(b, r.SolveMicros)
	if r.Origin != "" {
		b = append(b, `,"origin":`...)
		b = AppendJSONString(b, r.Origin)
	}
	if r.UnitDigest != "" {
		b = append(b, `,"unit_digest":`...)
		b = AppendJSONString(b, r.UnitDigest)
	}
	if r.Worker != "" {
		b = append(b, `,"worker":`...)
		b = AppendJSONString(b, r.Worker)
	}
	if r.Outcome != "" {
		b = append(b, `,"outcome":`...)
		b = AppendJSONString(b, r.Outcome)
	}
	if r.Players != nil {
		b = append(b, `,"players":`...)
		b = r.Players.appendJSON(b)
	}
	return append(b, '}')
}

// appendJSON appends p as encoding/json writes it.
func (p *Players) appendJSON(b []byte) []byte {
	b = append(b, '{')
	n := len(b)
	str := func(k, v string) {
		if v == "" {
			return
		}
		if len(b) > n {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, k...)
		b = append(b, `":`...)
		b = AppendJSONString(b, v)
	}
	num := func(k string, v int) {
		if v == 0 {
			return
		}
		if len(b) > n {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, k...)
		b = append(b, `":`...)
		b = strconv.AppendInt(b, int64(v), 10)
	}
	str("tournament", p.Tournament)
	num("round", p.Round)
	num("table", p.Table)
	str("date", p.Date)
	str("place", p.Place)
	str("black", p.Black)
	str("black_rank", p.BlackRank)
	str("white", p.White)
	str("white_rank", p.WhiteRank)
	num("handicap", p.Handicap)
	str("result", p.Result)
	return append(b, '}')
}

const hexDigits = "0123456789abcdef"

// AppendJSONString appends s quoted as encoding/json does: HTML-safe, invalid UTF-8
// as U+FFFD, U+2028 and U+2029 escaped. It is also for those who add fields to a
// result's JSON (the history's records).
func AppendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendJSONFloat formats f as encoding/json does: the shortest text that reads back
// as f, in exponent form only for very small or very large magnitudes. NaN and the
// infinities, which encoding/json refuses, are written as 0: a solve time is neither.
func appendJSONFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, '0')
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// encoding/json writes e-9 where strconv writes e-09.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}
