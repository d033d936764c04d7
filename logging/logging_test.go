package logging

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coreos/go-systemd/v22/journal"
	"github.com/creack/pty"
	"github.com/rs/zerolog"
	"github.com/rs/zerolog/journald"
)

// tempStderr is a real file standing in for stderr.
func tempStderr(t *testing.T) *os.File {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func readFile(t *testing.T, f *os.File) string {
	t.Helper()
	b, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// logUnit writes the lines a port reader writes for one bad unit and one good one.
func logUnit(l zerolog.Logger) {
	l = l.With().Str(FieldComponent, "reader").Str(FieldPort, "com1").Str(FieldProblem, "goscore").Logger()
	l.Warn().Uint64(FieldSeq, 7).Dur(FieldElapsed, 1500*time.Microsecond).Msg("bad unit: line 3: want 19 pairs")
	l.Debug().Uint64(FieldSeq, 8).Msg("unit answered")
}

func TestJSONLines(t *testing.T) {
	out := tempStderr(t)
	l, format, err := New(Options{Level: "debug", Format: "json", Stderr: out})
	if err != nil || format != JSON {
		t.Fatalf("New: %v %v", format, err)
	}
	before := time.Now().Add(-time.Second)
	logUnit(l)

	sc := bufio.NewScanner(strings.NewReader(readFile(t, out)))
	var lines []map[string]any
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q is not JSON: %v", sc.Text(), err)
		}
		lines = append(lines, m)
	}
	if len(lines) != 2 {
		t.Fatalf("got %d lines, want 2", len(lines))
	}
	warn := lines[0]
	for k, want := range map[string]any{
		"level": "warn", "message": "bad unit: line 3: want 19 pairs",
		FieldComponent: "reader", FieldPort: "com1", FieldProblem: "goscore",
		FieldSeq: 7.0, FieldElapsed: 1.5,
	} {
		if warn[k] != want {
			t.Errorf("%s = %#v, want %#v", k, warn[k], want)
		}
	}
	ts, ok := warn["time"].(string)
	if !ok {
		t.Fatalf("no time field in %v", warn)
	}
	tm, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil || tm.Before(before) || tm.After(time.Now().Add(time.Second)) {
		t.Errorf("time %q: %v, not now", ts, err)
	}
	if lines[1]["level"] != "debug" || lines[1][FieldSeq] != 8.0 {
		t.Errorf("debug line: %v", lines[1])
	}
}

func TestLevelFilters(t *testing.T) {
	out := tempStderr(t)
	l, _, err := New(Options{Level: "WARN", Format: "json", Stderr: out})
	if err != nil {
		t.Fatal(err)
	}
	logUnit(l)
	if got := strings.Count(readFile(t, out), "\n"); got != 1 {
		t.Errorf("at level warn: %d lines, want only the warning:\n%s", got, readFile(t, out))
	}
}

// consoleLine is zerolog's console layout: time, level, message, then key=value.
var consoleLine = regexp.MustCompile(`^\d\d:\d\d:\d\d\.\d{3} (WRN|DBG) (.+?)( \w+=\S+)+$`)

func TestConsole(t *testing.T) {
	out := tempStderr(t)
	l, format, err := New(Options{Level: "debug", Format: "console", Stderr: out})
	if err != nil || format != Console {
		t.Fatalf("New: %v %v", format, err)
	}
	logUnit(l)
	text := readFile(t, out)
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("got %d lines, want 2:\n%s", len(lines), text)
	}
	for _, line := range lines {
		if !consoleLine.MatchString(line) {
			t.Errorf("console line %q does not parse", line)
		}
	}
	for _, want := range []string{"WRN bad unit: line 3: want 19 pairs", "component=reader", "port=com1", "problem=goscore", "seq=7", "elapsed_ms=1.5"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("warning line %q lacks %q", lines[0], want)
		}
	}
	if strings.Contains(text, "\x1b[") {
		t.Error("colour escapes written to a file")
	}
}

func TestDetect(t *testing.T) {
	file := tempStderr(t)
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	defer tty.Close()
	var st syscall.Stat_t
	if err := syscall.Fstat(int(file.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	fileStream := fmt.Sprintf("%d:%d", st.Dev, st.Ino)

	for _, tc := range []struct {
		name    string
		f       *os.File
		journal string
		want    Format
	}{
		{"file", file, "", JSON},
		{"terminal", tty, "", Console},
		{"journal stream", file, fileStream, Journald},
		// JOURNAL_STREAM inherited, but stderr redirected elsewhere: not the journal.
		{"other stream", file, fmt.Sprintf("%d:%d", st.Dev, st.Ino+1), JSON},
		{"garbage stream", file, "journal", JSON},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("JOURNAL_STREAM", tc.journal)
			if got := Detect(tc.f); got != tc.want {
				t.Errorf("Detect = %q, want %q", got, tc.want)
			}
		})
	}

	// Auto on a terminal gives console output.
	t.Setenv("JOURNAL_STREAM", "")
	l, format, err := New(Options{Stderr: tty})
	if err != nil || format != Console {
		t.Fatalf("New on a terminal: %q %v", format, err)
	}
	l.Info().Str(FieldPort, "com1").Msg("port opened")
	buf := make([]byte, 512)
	n, err := ptmx.Read(buf)
	if err != nil || !strings.Contains(string(buf[:n]), "port opened") || !strings.Contains(string(buf[:n]), "\x1b[") {
		t.Errorf("console on a terminal: %q %v, want coloured output", buf[:n], err)
	}
}

func TestBadOptions(t *testing.T) {
	for _, o := range []Options{
		{Level: "verbose"},
		{Format: "xml"},
	} {
		if _, _, err := New(o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	if !journal.Enabled() {
		_, _, err := New(Options{Format: "journald"})
		if err == nil || !strings.Contains(err.Error(), "journal") {
			t.Errorf("journald without a journal: %v, want a clear error", err)
		}
	}
}

// TestJournaldFields checks what the journald format hands to the journal: the
// message, the priority, and each field as an upper-case journal field. It captures
// the call through zerolog's journald.SendFunc, since there may be no journal here.
func TestJournaldFields(t *testing.T) {
	type entry struct {
		msg  string
		prio journal.Priority
		vars map[string]string
	}
	var got []entry
	journald.SendFunc = func(msg string, prio journal.Priority, vars map[string]string) error {
		got = append(got, entry{msg, prio, vars})
		return nil
	}
	defer func() { journald.SendFunc = nil }()

	logUnit(newLogger(journald.NewJournalDWriter(), zerolog.DebugLevel))
	if len(got) != 2 {
		t.Fatalf("got %d journal entries, want 2", len(got))
	}
	w := got[0]
	if w.msg != "bad unit: line 3: want 19 pairs" || w.prio != journal.PriWarning {
		t.Errorf("entry: %q priority %d", w.msg, w.prio)
	}
	for k, want := range map[string]string{"COMPONENT": "reader", "PORT": "com1", "PROBLEM": "goscore", "SEQ": "7", "ELAPSED_MS": "1.5"} {
		if w.vars[k] != want {
			t.Errorf("journal field %s = %q, want %q", k, w.vars[k], want)
		}
	}
	if got[1].prio != journal.PriDebug {
		t.Errorf("debug line priority %d", got[1].prio)
	}
}

func TestParseLevel(t *testing.T) {
	for in, want := range map[string]zerolog.Level{
		"": zerolog.InfoLevel, "trace": zerolog.TraceLevel, "Debug": zerolog.DebugLevel,
		"warning": zerolog.WarnLevel, "error": zerolog.ErrorLevel,
	} {
		if got, err := ParseLevel(in); err != nil || got != want {
			t.Errorf("ParseLevel(%q) = %v %v, want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"panic", "disabled", "loud", "1"} {
		if _, err := ParseLevel(in); err == nil {
			t.Errorf("ParseLevel(%q) accepted", in)
		}
	}
}
