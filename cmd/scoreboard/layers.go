package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The layering of a command's settings, shared by the keys of config.go: each setting
// is a key of the TOML file with its flag and where it lives in the configuration T.
// parseConfig lays them in order: the defaults, the file (storeTOML checks each
// value's TOML type), the environment, then the flags given on the command line
// (flag.Visit, applyFlag). What is wrong is a *configError naming where.

// A setting is one key of the file with its flag. Exactly one of str, num and boolean
// is set: it points into the config (or into one port, for the port table).
type setting[T any] struct {
	key     string
	flag    string
	str     func(*T) *string
	num     func(*T) *int
	boolean func(*T) *bool
	// negated: the flag says the opposite of the key (--no-workers, workers = false).
	negated bool
}

// applyFlag stores a flag's value in t. The flag package has checked a number's or a
// boolean's syntax.
func (s setting[T]) applyFlag(t *T, v string) {
	switch {
	case s.str != nil:
		*s.str(t) = v
	case s.num != nil:
		*s.num(t), _ = strconv.Atoi(v)
	case s.boolean != nil:
		b, _ := strconv.ParseBool(v)
		*s.boolean(t) = b != s.negated
	}
}

// parseFlag stores a flag's value in t and checks it again, refusing a negative number
// the flag package let through (the port flags). It returns what is wrong, or "".
func (s setting[T]) parseFlag(t *T, v string) string {
	switch {
	case s.str != nil:
		*s.str(t) = v
	case s.num != nil:
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Sprintf("want a non-negative integer, got %q", v)
		}
		*s.num(t) = n
	case s.boolean != nil:
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Sprintf("want true or false, got %q", v)
		}
		*s.boolean(t) = b
	}
	return ""
}

func ptr[T, V any](f func(*T) *V, t *T) *V {
	if f == nil {
		return nil
	}
	return f(t)
}

// storeTOML stores a decoded TOML value in whichever of str, num and boolean is not
// nil, checking its type; it returns what is wrong, or "" when the value is stored.
func storeTOML(v any, str *string, num *int, boolean *bool) string {
	switch {
	case str != nil:
		s, ok := v.(string)
		if !ok {
			return fmt.Sprintf("want a string, got %s", describeValue(v))
		}
		*str = s
	case num != nil:
		n, ok := v.(int64)
		if !ok {
			return fmt.Sprintf("want an integer, got %s", describeValue(v))
		}
		if n < 0 || n > 1<<31-1 {
			return fmt.Sprintf("%d is out of range", n)
		}
		*num = int(n)
	case boolean != nil:
		b, ok := v.(bool)
		if !ok {
			return fmt.Sprintf("want true or false, got %s", describeValue(v))
		}
		*boolean = b
	}
	return ""
}

// describeValue names a decoded TOML value's type, with the value when it is short.
func describeValue(v any) string {
	switch v := v.(type) {
	case string:
		if len(v) > 40 {
			return "a string"
		}
		return fmt.Sprintf("the string %q", v)
	case int64:
		return fmt.Sprintf("the integer %d", v)
	case float64:
		return fmt.Sprintf("the float %v", v)
	case bool:
		return fmt.Sprintf("%v", v)
	case time.Time:
		return "a date or time"
	case []any, []map[string]any:
		return "an array"
	case map[string]any:
		return "a table"
	}
	return fmt.Sprintf("a %T", v)
}

// configError is one thing wrong with the configuration: where (the file and the key,
// with the line where TOML gives one; or the flag, or the environment variable) and
// what.
type configError struct {
	File string // the config file, when the setting came from it
	Line int    // from 1, when known
	Key  string // the key in the file ("nats.url", "[[port]] 2 (\"lobby\") baud"), or "--flag", or "$VAR"
	Msg  string
}

func (e *configError) Error() string {
	var b strings.Builder
	if e.File != "" {
		fmt.Fprintf(&b, "config %s: ", e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, "line %d: ", e.Line)
		}
		if e.Key != "" {
			fmt.Fprintf(&b, "key %s: ", e.Key)
		}
	} else if e.Key != "" {
		b.WriteString(e.Key + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}
