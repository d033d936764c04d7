package config

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/goclub/scoreboard/daemon"
)

// bound is a duration or size setting's range, as its values below, at and above
// each end, and the range its error must name.
type bound struct {
	key                      string
	below, min, max, above   string
	rangeText                string
	extraBad                 []string // more values out of range
	quoteInFile, hubSettings bool
}

var bounds = []bound{
	{key: "daemon.request_timeout", below: "499ms", min: "500ms", max: "20s", above: "20.001s", rangeText: "want 500ms to 20s",
		extraBad: []string{"1ms", "80s", "0s", "-1s"}},
	{key: "daemon.drain", below: "0s", min: "1ms", max: "25s", above: "25.001s", rangeText: "want 1ms to 25s", extraBad: []string{"-5s", "1h"}},
	{key: "http.delay", below: "-1ns", min: "0s", max: "24h", above: "24h0m0.001s", rangeText: "want 0 (live) to 24h0m0s"},
	{key: "league.http_delay", below: "-1s", min: "0s", max: "24h", above: "25h", rangeText: "want 0 (live) to 24h0m0s", hubSettings: true},
	{key: "history.max_age", below: "59m", min: "1h", max: "36500d", above: "36501d", rangeText: "want 1h to 36500d",
		extraBad: []string{"1s", "1000000d"}, quoteInFile: true},
	{key: "league.club_max_age", below: "59m59s", min: "1h", max: "36500d", above: "36500d1h", rangeText: "want 1h to 36500d",
		quoteInFile: true, hubSettings: true},
	{key: "history.max_bytes", below: "15MiB", min: "16MiB", max: "64TiB", above: "65TiB", rangeText: "want 16MiB to 64TiB",
		extraBad: []string{"1B", "1KiB"}, quoteInFile: true},
	{key: "league.club_max_bytes", below: "16777215B", min: "16777216B", max: "64TiB", above: "70368744177665B",
		rangeText: "want 16MiB to 64TiB", quoteInFile: true, hubSettings: true},
	{key: "history.sync", below: "99ms", min: "100ms", max: "10m", above: "10m1s", rangeText: `want "always" or an interval of 100ms to 10m0s`,
		extraBad: []string{"1ns"}, quoteInFile: true},
}

// Every duration and size setting has its row: a new one must come with its bounds.
func TestBoundsCoverEveryDurationAndSize(t *testing.T) {
	rows := map[string]bool{}
	for _, b := range bounds {
		rows[b.key] = true
	}
	for _, s := range All() {
		_, isDuration := s.Default().(time.Duration)
		name := s.name()
		sized := strings.HasSuffix(name, "max_age") || strings.HasSuffix(name, "max_bytes") || name == "sync" || strings.HasSuffix(name, "delay")
		if (isDuration || sized) && !rows[s.Key()] {
			t.Errorf("%s is a duration or a size with no row in bounds", s.Key())
		}
	}
}

// Each duration and size setting below its range, at each end and above it, from
// the file and from its flag: the ends load; each value out of range is an error
// that names the setting and the range.
func TestSettingBounds(t *testing.T) {
	for _, b := range bounds {
		t.Run(b.key, func(t *testing.T) {
			s := ByKey(b.key)
			keys := RunKeys()
			if b.hubSettings {
				keys = HubKeys()
			}
			ss := Lookup(keys...)
			parse := func(file string, args ...string) error {
				fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
				Bind(fs, ss, &Config{}, &daemon.PortConfig{})
				if err := fs.Parse(args); err != nil {
					t.Fatalf("%q: %v", args, err)
				}
				var data []byte
				if file != "" {
					data = []byte(file)
				}
				_, err := Parse(fs, ss, "bounds.toml", data, noEnv)
				return err
			}
			table, name, _ := strings.Cut(b.key, ".")
			fileOf := func(v string) string { return fmt.Sprintf("[%s]\n%s = %q\n", table, name, v) }
			for _, v := range []string{b.min, b.max} {
				if err := parse(fileOf(v)); err != nil {
					t.Errorf("file %s = %q: %v, want it taken", b.key, v, err)
				}
				if err := parse("", "--"+s.Flag(), v); err != nil {
					t.Errorf("--%s %s: %v, want it taken", s.Flag(), v, err)
				}
			}
			for _, v := range append([]string{b.below, b.above}, b.extraBad...) {
				err := parse(fileOf(v))
				if err == nil || !strings.Contains(err.Error(), "key "+b.key+": ") || !strings.Contains(err.Error(), b.rangeText) {
					t.Errorf("file %s = %q: error %v; want one naming key %s and %q", b.key, v, err, b.key, b.rangeText)
				}
				err = parse("", "--"+s.Flag()+"="+v)
				if err == nil || !strings.Contains(err.Error(), "--"+s.Flag()) || !strings.Contains(err.Error(), b.rangeText) {
					t.Errorf("--%s=%s: error %v; want one naming --%s and %q", s.Flag(), v, err, s.Flag(), b.rangeText)
				}
			}
		})
	}
}
