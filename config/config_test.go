package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/goclub/scoreboard/daemon"
	"github.com/goclub/scoreboard/serialio"
)

// configFlags is a flag set of every setting, as run has, parsed from args.
func configFlags(t testing.TB, args ...string) *pflag.FlagSet {
	t.Helper()
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	Bind(fs, Lookup(RunKeys()...), &Config{}, &daemon.PortConfig{})
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return fs
}

// parseRunConfig is parseConfig with run's settings.
func parseRunConfig(path string, data []byte, fs *pflag.FlagSet, getenv func(string) (string, bool)) (Config, error) {
	return Parse(fs, Lookup(RunKeys()...), path, data, getenv)
}

// loadRunConfig is loadConfig with run's settings.
func loadRunConfig(path string, fs *pflag.FlagSet) (Config, error) {
	return Load(fs, Lookup(RunKeys()...), path)
}

// defaultConfig is run's configuration with every setting at its default.
func defaultConfig() Config {
	var c Config
	c.NATS.Listen, c.NATS.Prefix = "127.0.0.1:4222", "scoreboard"
	c.Log.Level = "info"
	c.Daemon.RequestTimeout, c.Daemon.Drain, c.Daemon.Workers = 2*time.Second, 5*time.Second, true
	c.History.Enabled, c.History.MaxAge, c.History.MaxBytes, c.History.Replicas = true, "90d", "1GiB", 1
	c.History.Sync = "2m"
	c.HTTP.Listen = "127.0.0.1:8080"
	c.HTTP.Metrics, c.HTTP.TrustedProxies = "page", "127.0.0.0/8 ::1"
	c.HTTP.MaxViewers, c.HTTP.MaxViewersPerAddress = 2000, 50
	return c
}

// defaultLine is a port's line settings at their defaults.
var defaultLine = serialio.LineSettings{Baud: 9600, DataBits: 8, Parity: "none", StopBits: "1"}

// writeConfig writes a config file and returns its path.
func writeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "scoreboard.toml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func noEnv(string) (string, bool) { return "", false }

func TestConfigDefaults(t *testing.T) {
	c, err := parseRunConfig("", nil, configFlags(t), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if want := defaultConfig(); !reflect.DeepEqual(c, want) {
		t.Errorf("defaults:\n got %+v\nwant %+v", c, want)
	}
}

// TestConfigPrecedence: a flag on the command line > the environment > the file > the
// default, key by key.
func TestConfigPrecedence(t *testing.T) {
	path := writeConfig(t, `
[nats]
url = "nats://file.example:4222"
user = "club"
password = "from-file"
prefix = "club"

[log]
level = "debug"
format = "console"

[daemon]
request_timeout = "1s"
drain = "9s"

[http]
listen = "0.0.0.0:8080"

[[port]]
name = "lobby"
device = "/dev/ttyUSB0"
problem = "goscore"
baud = 19200
parity = "even"
`)
	env := map[string]string{"SCOREBOARD_NATS_PASSWORD": "from-env"}
	getenv := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	data, _ := os.ReadFile(path)

	c, err := parseRunConfig(path, data, configFlags(t, "--log-level", "warn", "--baud", "38400", "--request-timeout", "3s"), getenv)
	if err != nil {
		t.Fatal(err)
	}
	want := defaultConfig()
	want.NATS.URL = "nats://file.example:4222" // file over default; the listener is the default
	want.NATS.User = "club"
	want.NATS.Password = "from-env" // environment over file
	want.NATS.Prefix = "club"
	want.Log.Level, want.Log.Format = "warn", "console"                          // flag over file; file
	want.Daemon.RequestTimeout, want.Daemon.Drain = 3*time.Second, 9*time.Second // flag over file; file
	want.HTTP.Listen = "0.0.0.0:8080"                                            // file over default
	want.Ports = []daemon.PortConfig{{
		Name: "lobby", Device: "/dev/ttyUSB0", Problem: "goscore", OnReopen: daemon.OnReopenDrop,
		Line: serialio.LineSettings{Baud: 38400, DataBits: 8, Parity: "even", StopBits: "1"}, // flag over file; file; defaults
	}}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("got  %+v\nwant %+v", c, want)
	}

	// A flag over the environment.
	c, err = parseRunConfig(path, data, configFlags(t, "--nats-password", "from-flag"), getenv)
	if err != nil || c.NATS.Password != "from-flag" {
		t.Errorf("--nats-password with $SCOREBOARD_NATS_PASSWORD set: got %q, %v", c.NATS.Password, err)
	}

	// Every setting has its variable, a port's too: over the file's one port, under
	// the flag.
	env["SCOREBOARD_PORT_BAUD"] = "19200"
	env["SCOREBOARD_DAEMON_DRAIN"] = "7s"
	c, err = parseRunConfig(path, data, configFlags(t), getenv)
	if err != nil || c.Ports[0].Line.Baud != 19200 || c.Daemon.Drain != 7*time.Second {
		t.Errorf("$SCOREBOARD_PORT_BAUD, $SCOREBOARD_DAEMON_DRAIN over the file: baud %d, drain %v, %v", c.Ports[0].Line.Baud, c.Daemon.Drain, err)
	}
	c, err = parseRunConfig(path, data, configFlags(t, "--port-baud", "38400", "--drain", "8s"), getenv)
	if err != nil || c.Ports[0].Line.Baud != 38400 || c.Daemon.Drain != 8*time.Second {
		t.Errorf("flags over $SCOREBOARD_PORT_BAUD, $SCOREBOARD_DAEMON_DRAIN: baud %d, drain %v, %v", c.Ports[0].Line.Baud, c.Daemon.Drain, err)
	}
	env["SCOREBOARD_PORT_BAUD"] = "fast"
	if _, err = parseRunConfig(path, data, configFlags(t), getenv); err == nil || !strings.Contains(err.Error(), `$SCOREBOARD_PORT_BAUD: "fast": want an integer`) {
		t.Errorf("a bad $SCOREBOARD_PORT_BAUD: %v", err)
	}
	delete(env, "SCOREBOARD_PORT_BAUD")
	delete(env, "SCOREBOARD_DAEMON_DRAIN")

	// loadConfig reads the file and the real environment.
	t.Setenv("SCOREBOARD_NATS_PASSWORD", "from-real-env")
	c, err = loadRunConfig(path, configFlags(t))
	if err != nil || c.NATS.Password != "from-real-env" || c.Ports[0].Line.Baud != 19200 {
		t.Errorf("loadConfig: %+v, %v", c, err)
	}
}

// The history's keys, from the file and over it from the flags.
func TestConfigHistory(t *testing.T) {
	path := writeConfig(t, `
[daemon]
state_dir = "/var/lib/scoreboard"
[history]
enabled = true
max_age = "30d"
max_bytes = "512MiB"
replicas = 3
`)
	data, _ := os.ReadFile(path)
	c, err := parseRunConfig(path, data, configFlags(t), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	want := defaultConfig().History
	want.MaxAge, want.MaxBytes, want.Replicas = "30d", "512MiB", 3
	if c.History != want || c.Daemon.StateDir != "/var/lib/scoreboard" {
		t.Errorf("from the file: %+v, state dir %q", c.History, c.Daemon.StateDir)
	}
	c, err = parseRunConfig(path, data, configFlags(t, "--history=false", "--history-replicas", "1", "--state-dir", "/tmp/s", "--history-max-age", "36h"), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	want.Enabled, want.MaxAge, want.Replicas = false, "36h", 1
	if c.History != want || c.Daemon.StateDir != "/tmp/s" {
		t.Errorf("flags over the file: %+v, state dir %q", c.History, c.Daemon.StateDir)
	}
	// A bad value from a flag names the flag.
	_, err = parseRunConfig(path, data, configFlags(t, "--history-max-bytes", "huge"), noEnv)
	if err == nil || !strings.Contains(err.Error(), "--history-max-bytes: \"huge\"") {
		t.Errorf("bad --history-max-bytes: %v", err)
	}
}

// [daemon] workers = false and --no-workers say the same; either turns the
// daemon's workers off.
func TestConfigNoWorkers(t *testing.T) {
	for _, tc := range []struct {
		file  string
		flags []string
		want  bool
	}{
		{"", nil, true},
		{"", []string{"--no-workers"}, false},
		{"[daemon]\nworkers = false\n", nil, false},
		{"[daemon]\nworkers = false\n", []string{"--no-workers=false"}, true},
		{"[daemon]\nworkers = true\n", []string{"--no-workers"}, false},
	} {
		path := ""
		if tc.file != "" {
			path = writeConfig(t, tc.file)
		}
		c, err := parseRunConfig(path, []byte(tc.file), configFlags(t, tc.flags...), noEnv)
		if err != nil || c.Daemon.Workers != tc.want {
			t.Errorf("file %q, flags %q: workers %v (%v), want %v", tc.file, tc.flags, c.Daemon.Workers, err, tc.want)
		}
	}
}

func TestConfigPortFromFlags(t *testing.T) {
	c, err := parseRunConfig("", nil, configFlags(t, "--port", "-", "--problem", "replay", "--error-line"), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	want := []daemon.PortConfig{{Name: "stdio", Device: "-", Problem: "replay", ErrorLine: true, Line: defaultLine, OnReopen: daemon.OnReopenDrop}}
	if !reflect.DeepEqual(c.Ports, want) {
		t.Errorf("got %+v, want %+v", c.Ports, want)
	}

	for _, tc := range []struct {
		file string
		args []string
		want string
	}{
		{"", []string{"--problem", "goscore"}, "--port-problem: no port to apply it to"},
		{"", []string{"--port", "/dev/ttyUSB0"}, "--port-problem: missing: one of"},
		{"", []string{"--port", "-", "--problem", "chess"}, `--port-problem: unknown problem "chess"`},
		{"", []string{"--port", "-", "--problem", "goscore", "--parity", "often"}, `--port-parity: parity "often"`},
		{"", []string{"--port", "-", "--problem", "goscore", "--port-name", "Big Hall"}, `--port-name: "Big Hall": want lowercase`},
		{"", []string{"--nats-listen", "localhost"}, `--nats-listen: listen address "localhost"`},
		{"", []string{"--nats-url", "nats://x:4222", "--nats-listen", "127.0.0.1:1"}, "--nats-listen: the embedded server's listener cannot go with nats.url"},
		{"", []string{"--log-format", "xml"}, `--log-format: log format "xml"`},
		{"", []string{"--http", "8080"}, `--http-listen: "8080": want HOST:PORT`},
		{"[[port]]\ndevice='/dev/a'\nproblem='goscore'\nname='a'\n[[port]]\ndevice='/dev/b'\nproblem='goscore'\nname='b'\n",
			[]string{"--baud", "19200"}, "--port-baud: the config file CONFIG has 2 ports"},
	} {
		var path string
		var data []byte
		if tc.file != "" {
			path = writeConfig(t, tc.file)
			data = []byte(tc.file)
		}
		_, err := parseRunConfig(path, data, configFlags(t, tc.args...), noEnv)
		want := strings.ReplaceAll(tc.want, "CONFIG", path)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want an error with %q", tc.args, err, want)
		}
	}

	// The environment's URL wins over the file's listener; its listener does not
	// over the file's URL.
	path2 := writeConfig(t, "[nats]\nlisten = '127.0.0.1:5222'\n")
	data2, _ := os.ReadFile(path2)
	env := func(k, v string) func(string) (string, bool) {
		return func(n string) (string, bool) { return v, n == k }
	}
	if c, err := parseRunConfig(path2, data2, configFlags(t), env("SCOREBOARD_NATS_URL", "nats://x:4222")); err != nil || c.NATS.URL != "nats://x:4222" {
		t.Errorf("$SCOREBOARD_NATS_URL over the file's listener: %+v %v", c.NATS, err)
	}
	path3 := writeConfig(t, "[nats]\nurl = 'nats://x:4222'\n")
	data3, _ := os.ReadFile(path3)
	if _, err := parseRunConfig(path3, data3, configFlags(t), env("SCOREBOARD_NATS_LISTEN", "127.0.0.1:5222")); err == nil ||
		!strings.Contains(err.Error(), "$SCOREBOARD_NATS_LISTEN: the embedded server's listener cannot go with nats.url") {
		t.Errorf("$SCOREBOARD_NATS_LISTEN against the file's URL: %v", err)
	}

	// A flag given on the command line wins over the file's listener.
	path := writeConfig(t, "[nats]\nlisten = '127.0.0.1:5222'\n")
	data, _ := os.ReadFile(path)
	if c, err := parseRunConfig(path, data, configFlags(t, "--nats-url", "nats://x:4222"), noEnv); err != nil || c.NATS.URL != "nats://x:4222" {
		t.Errorf("--nats-url over the file's listener: %+v %v", c.NATS, err)
	}
}

const goodPort = "\n[[port]]\nname = 'lobby'\ndevice = '/dev/ttyUSB0'\nproblem = 'goscore'\n"

// TestConfigBadFiles: every mistake names the file, the key (and the line, where TOML
// gives one) and what is wrong.
func TestConfigBadFiles(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		key        string // the key the error names
		line       int    // the line it names, 0 if none
		msg        string // part of what it says
	}{
		{"unknown top-level key", "colour = 'red'\n", "colour", 0, "unknown key"},
		{"unknown key in nats", "[nats]\nurll = 'nats://x:4222'\n", "nats.urll", 0, "unknown key (known in [nats]: listen, listen_token,"},
		{"unknown key in port", "[[port]]\nname = 'lobby'\ndevice = '/dev/ttyUSB0'\nproblem = 'goscore'\nbaudrate = 9600\n",
			`[[port]] 1 ("lobby") baudrate`, 0, "unknown key (known in [[port]]: name, device,"},
		{"wrong type of int", goodPort + goodPort[0:0] + "\n[[port]]\nname = 'hall'\ndevice = '/dev/ttyACM0'\nproblem = 'othello'\nbaud = 'fast'\n",
			`[[port]] 2 ("hall") baud`, 0, `want an integer, got the string "fast"`},
		{"wrong type of string", "[log]\nlevel = 3\n", "log.level", 0, "want a string, got the integer 3"},
		{"bad duration", "[daemon]\ndrain = 'forever'\n", "daemon.drain", 0, `"forever": want a duration such as 2s`},
		{"negative duration", "[daemon]\nrequest_timeout = '-1s'\n", "daemon.request_timeout", 0, `-1s: want 500ms to 20s`},
		{"wrong type of bool", "[[port]]\nname = 'lobby'\ndevice = '/dev/ttyUSB0'\nproblem = 'goscore'\nerror_line = 'yes'\n",
			`[[port]] 1 ("lobby") error_line`, 0, "want true or false"},
		{"table for a key", "nats = 'nats://x'\n", "nats", 0, "want a table [nats]"},
		{"bad history age", "[history]\nmax_age = 'a while'\n", "history.max_age", 0, `"a while": want 1h to 36500d, such as 90d`},
		{"delay beyond a day", "[http]\ndelay = '48h'\n", "http.delay", 0, "48h0m0s: want 0 (live) to 24h0m0s"},
		{"negative delay", "[http]\ndelay = '-1s'\n", "http.delay", 0, "-1s: want 0 (live)"},
		{"bad history size", "[history]\nmax_bytes = 'big'\n", "history.max_bytes", 0, `"big": want 16MiB to 64TiB, such as 1GiB`},
		{"history size as a number", "[history]\nmax_bytes = 1024\n", "history.max_bytes", 0, "want a string, got the integer 1024"},
		{"history replicas", "[history]\nreplicas = 0\n", "history.replicas", 0, "0: want 1 to 5"},
		{"history sync", "[history]\nsync = 'sometimes'\n", "history.sync", 0, "sometimes"},
		{"history on-off", "[history]\nenabled = 'no'\n", "history.enabled", 0, "want true or false"},
		{"unknown key in history", "[history]\nage = '1d'\n", "history.age", 0, "unknown key (known in [history]: enabled, max_age, max_bytes, sync, replicas)"},
		{"bad metrics listener", "[http]\nmetrics = 'beside'\n", "http.metrics", 0, `"beside": want "page"`},
		{"metrics on the page's listener", "[http]\nlisten = '127.0.0.1:8080'\nmetrics = '127.0.0.1:8080'\n", "http.metrics", 0,
			`127.0.0.1:8080 is the page's listener too: say "page"`},
		{"embed origin with a path", "[http]\nembed_origins = 'https://club.example.org https://club.example.org/news'\n", "http.embed_origins", 0,
			`"https://club.example.org/news" is not an origin (an origin has no path, query or fragment): want scheme://host[:port]`},
		{"negative viewer bound", "[http]\nmax_viewers_per_address = -1\n", "http.max_viewers_per_address", 0, "-1 is out of range"},
		{"bad trusted proxy", "[http]\ntrusted_proxies = 'caddy'\n", "http.trusted_proxies", 0, `"caddy": want an address or a network`},
		{"single port table", "[port]\ndevice = '/dev/ttyUSB0'\n", "port", 0, "want one [[port]] table per port"},
		{"missing device", "[[port]]\nname = 'lobby'\nproblem = 'goscore'\n", `[[port]] 1 ("lobby") device`, 0, "missing"},
		{"missing problem", "[[port]]\nname = 'lobby'\ndevice = '/dev/ttyUSB0'\n", `[[port]] 1 ("lobby") problem`, 0, "missing: one of"},
		{"unknown problem", "[[port]]\nname = 'lobby'\ndevice = '/dev/ttyUSB0'\nproblem = 'chess'\n",
			`[[port]] 1 ("lobby") problem`, 0, `unknown problem "chess" (problems: capture,`},
		{"bad port name", "[[port]]\nname = 'Big Hall'\ndevice = '/dev/ttyUSB0'\nproblem = 'goscore'\n",
			`[[port]] 1 ("Big Hall") name`, 0, "want lowercase letters"},
		{"duplicate names", goodPort + "[[port]]\nname = 'lobby'\ndevice = '/dev/ttyUSB1'\nproblem = 'goscore'\n",
			`[[port]] 2 ("lobby") name`, 0, `"lobby" is also the name of [[port]] 1`},
		{"default names clash", "[[port]]\ndevice = '/dev/a/ttyUSB0'\nproblem = 'goscore'\n[[port]]\ndevice = '/dev/b/ttyUSB0'\nproblem = 'goscore'\n",
			`[[port]] 2 ("ttyusb0") name`, 0, `"ttyusb0" is also the name of [[port]] 1: give each port its own name`},
		{"duplicate devices", goodPort + "[[port]]\nname = 'hall'\ndevice = '/dev/ttyUSB0'\nproblem = 'goscore'\n",
			`[[port]] 2 ("hall") device`, 0, "/dev/ttyUSB0 is also the device of [[port]] 1"},
		{"bad data bits", "[[port]]\nname = 'lobby'\ndevice = '/dev/ttyUSB0'\nproblem = 'goscore'\ndata_bits = 9\n",
			`[[port]] 1 ("lobby") data_bits`, 0, "data bits 9: want 5 to 8"},
		{"negative baud", "[[port]]\nname = 'lobby'\ndevice = '/dev/ttyUSB0'\nproblem = 'goscore'\nbaud = -9600\n",
			`[[port]] 1 ("lobby") baud`, 0, "out of range"},
		{"bad stop bits", "[[port]]\nname = 'lobby'\ndevice = '/dev/ttyUSB0'\nproblem = 'goscore'\nstop_bits = 1\n",
			`[[port]] 1 ("lobby") stop_bits`, 0, `want a string, got the integer 1`},
		{"bad listen", "[nats]\nlisten = 'localhost'\n", "nats.listen", 0, `listen address "localhost"`},
		{"listen and url", "[nats]\nlisten = '127.0.0.1:4222'\nurl = 'nats://x:4222'\n", "nats.listen", 0, "cannot go with nats.url"},
		{"bad url", "[nats]\nurl = 'http://x:4222'\n", "nats.url", 0, "want nats://HOST:PORT"},
		{"password without user", "[nats]\nurl = 'nats://x:4222'\npassword = 'secret'\n", "nats.password", 0, "without nats.user"},
		{"token and user", "[nats]\nurl = 'nats://x:4222'\nuser = 'u'\ntoken = 't'\n", "nats.token", 0, "either a token or"},
		{"missing creds file", "[nats]\nurl = 'nats://x:4222'\ncreds = '/nonexistent/club.creds'\n", "nats.creds", 0, "no such file"},
		{"cert without key", "[nats]\nurl = 'tls://x:4222'\ntls_cert = '/etc/hostname'\n", "nats.tls_cert", 0, "go together"},
		{"bad prefix", "[nats]\nprefix = 'Score.Board'\n", "nats.prefix", 0, "dot-separated tokens"},
		{"bad level", "[log]\nlevel = 'loud'\n", "log.level", 0, `log level "loud"`},
		{"bad format", "[log]\nformat = 'xml'\n", "log.format", 0, `log format "xml"`},
		{"bad http listen", "[http]\nlisten = 'tv'\n", "http.listen", 0, `"tv": want HOST:PORT`},
		{"unknown key in http", "[http]\nport = 8080\n", "http.port", 0, "unknown key (known in [http]: listen, delay, metrics, embed_origins, max_viewers, max_viewers_per_address, trusted_proxies)"},
		// TOML's own errors come with their line.
		{"syntax", "[nats]\nurl = 'nats://x:4222'\nlisten = \n", "", 3, "expected value but found '\\n' instead (after key nats.listen)"},
		{"bad table", "[log]\nlevel = 'info'\n[nats x]\n", "", 3, "expected"},
		{"unclosed table", "[log]\nlevel = 'info'\n[nats\n", "", 3, "expected"},
		{"unclosed string", "[log]\nlevel = 'info\n", "", 2, "newline"},
		{"duplicate key", "[log]\nlevel = 'info'\nlevel = 'debug'\n", "", 3, "already been defined"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeConfig(t, tc.text)
			_, err := loadRunConfig(path, configFlags(t))
			if err == nil {
				t.Fatal("accepted")
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("%v: not a *Error", err)
			}
			line := tc.line
			if line == 0 {
				line = keyLine(tc.text, tc.key)
			}
			if ce.File != path || (tc.key != "" && ce.Key != tc.key) || ce.Line != line || !strings.Contains(ce.Msg, tc.msg) {
				t.Errorf("got %q\n%#v\nwant key %q, line %d, message with %q", err, ce, tc.key, line, tc.msg)
			}
			if !strings.HasPrefix(err.Error(), "config "+path+": ") {
				t.Errorf("%q does not start with the file", err)
			}
		})
	}
}

// keyLine is the line of key in a test's file, as a reader finds it: in its table
// (for "[[port]] N ... key", the N-th [[port]] table), or 0 when the file does not
// have it.
func keyLine(text, key string) int {
	table, name, _ := strings.Cut(key, ".")
	header, nth := "["+table+"]", 1
	if rest, ok := strings.CutPrefix(key, "[[port]] "); ok {
		n, _, _ := strings.Cut(rest, " ")
		nth, _ = strconv.Atoi(n)
		header, name = "[[port]]", rest[strings.LastIndex(rest, " ")+1:]
	} else if name == "" {
		header, name = "", table
	}
	in, seen := header == "", 0
	for i, l := range strings.Split(text, "\n") {
		switch {
		case l == header:
			seen++
			in = seen == nth
		case strings.HasPrefix(l, "["):
			in = in && header == "" && (l == "["+name+"]" || strings.HasPrefix(l, "["+name+"]"))
			if in {
				return i + 1
			}
		case in && strings.HasPrefix(l, name+" ="):
			return i + 1
		}
	}
	return 0
}

func TestConfigAllErrorsAtOnce(t *testing.T) {
	path := writeConfig(t, "[log]\nlevel = 'loud'\n[[port]]\nname = 'lobby'\nbaud = 'fast'\n")
	_, err := loadRunConfig(path, configFlags(t))
	for _, want := range []string{"log.level", "baud", "device", "problem"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not mention %s", err, want)
		}
	}
}

func TestConfigMissingFile(t *testing.T) {
	_, err := loadRunConfig("/nonexistent/scoreboard.toml", configFlags(t))
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/scoreboard.toml") {
		t.Errorf("got %v, want an error naming the file", err)
	}
}

// TestConfigExample keeps configs/scoreboard.toml valid: every key it shows, commented
// out or not, is one the daemon knows.
func TestConfigExample(t *testing.T) {
	const example = "../configs/scoreboard.toml"
	c, err := loadRunConfig(example, configFlags(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Ports) != 1 || c.Ports[0].Name != "lobby" || c.Ports[0].Problem != "goscore" {
		t.Errorf("example's ports: %+v", c.Ports)
	}

	// Uncommenting every "# key = value" line gives a file whose only complaints are
	// the ones expected of an example: the credentials files it names do not exist
	// here, and it sets both the listener and a URL, and several credentials.
	data, err := os.ReadFile(example)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, line := range strings.Split(string(data), "\n") {
		if k, ok := strings.CutPrefix(line, "# "); ok && strings.Contains(k, " = ") && !strings.HasPrefix(k, " ") {
			line = k
		}
		lines = append(lines, line)
	}
	_, err = parseRunConfig(example, []byte(strings.Join(lines, "\n")), configFlags(t), noEnv)
	for _, e := range errs(err) {
		var ce *Error
		if !errors.As(e, &ce) || strings.HasPrefix(ce.Msg, "unknown key") || strings.HasPrefix(ce.Msg, "want ") {
			t.Errorf("example: %v", e)
		}
	}
}

// errs splits a joined error.
func errs(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	if err != nil {
		return []error{err}
	}
	return nil
}

func FuzzParseConfig(f *testing.F) {
	example, err := os.ReadFile("../configs/scoreboard.toml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(example)
	fs := configFlags(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := parseRunConfig("fuzz.toml", data, fs, noEnv)
		for _, e := range errs(err) {
			var ce *Error
			if !errors.As(e, &ce) || ce.File != "fuzz.toml" || ce.Msg == "" {
				t.Fatalf("error %q (%T) does not name the file and what is wrong", e, e)
			}
		}
		if err != nil {
			return
		}
		for _, p := range c.Ports {
			if p.Device == "" || p.Problem == "" || p.Name == "" {
				t.Fatalf("accepted an incomplete port %+v", p)
			}
		}
	})
}

// Suggest follows cobra's rule for commands: a prefix, or two edits away.
func TestSuggest(t *testing.T) {
	names := []string{"port", "port-name", "problem", "nats-url", "nats-listen", "json"}
	for typed, want := range map[string]string{
		"prot": "port", "port-nmae": "port-name", "porblem": "problem", "nats-lsten": "nats-listen",
		"nats-ur": "nats-url", "jsn": "json", "x": "", "timeout": "", "qwerty": "",
	} {
		if got := Suggest(typed, names); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", typed, got, want)
		}
	}
}

// TestConfigExampleFirstHour: the example config serves the page on loopback only, and
// says how to show it to the club's TV (a commented line listening on every
// interface, which parses); it has one port, and a second one commented out.
func TestConfigExampleFirstHour(t *testing.T) {
	const example = "../configs/scoreboard.toml"
	c, err := loadRunConfig(example, configFlags(t))
	if err != nil {
		t.Fatal(err)
	}
	if c.HTTP.Listen != "127.0.0.1:8080" || len(c.Ports) != 1 {
		t.Errorf("example: the page on %q with %d ports, want 127.0.0.1:8080 and one port", c.HTTP.Listen, len(c.Ports))
	}
	data, err := os.ReadFile(example)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	tv := `# listen = "0.0.0.0:8080"`
	if !strings.Contains(text, tv) || !strings.Contains(text, "TV") {
		t.Errorf("the example does not say how to show the page on the TV (a commented %s)", tv)
	}
	// The TV's line, uncommented in place of the loopback one, parses.
	lan := strings.Replace(strings.Replace(text, `listen = "127.0.0.1:8080"`, `# was loopback`, 1), tv, `listen = "0.0.0.0:8080"`, 1)
	if lc, err := parseRunConfig(example, []byte(lan), configFlags(t), noEnv); err != nil || lc.HTTP.Listen != "0.0.0.0:8080" {
		t.Errorf("the example with the TV's line: %v, listen %q", err, lc.HTTP.Listen)
	}
	if !strings.Contains(text, "\n#  [[port]]\n") {
		t.Errorf("the example has no second [[port]] commented out")
	}
	// Uncommented, the second port parses too.
	two := strings.ReplaceAll(text, "\n#  ", "\n")
	if tc, err := parseRunConfig(example, []byte(two), configFlags(t), noEnv); err != nil || len(tc.Ports) != 2 {
		t.Errorf("the example with its second port uncommented: %v, %d ports", err, len(tc.Ports))
	}
}

// Every setting but a port's, changed alone, is named by Changed with its own key,
// and nothing else is: a reload names each setting it cannot apply, whatever table
// it is in ([hub] was once left out of a hand-written comparison).
func TestChangedNamesEverySettingByItsKey(t *testing.T) {
	var base Config
	if got := Changed(base, base); len(got) != 0 {
		t.Fatalf("Changed of a config and itself: %v", got)
	}
	n := 0
	for _, s := range All() {
		if s.global == nil {
			continue
		}
		now := base
		switch p := s.global(&now).(type) {
		case *string:
			*p += "x"
		case *int:
			*p++
		case *bool:
			*p = !*p
		case *time.Duration:
			*p += time.Second
		default:
			t.Fatalf("setting %s: type %T", s.Key(), p)
		}
		if got := Changed(base, now); len(got) != 1 || got[0] != s.Key() {
			t.Errorf("%s changed alone: Changed says %v", s.Key(), got)
		}
		n++
	}
	if n < 30 {
		t.Errorf("only %d settings compared", n)
	}
	t.Logf("%d settings, each named by its key when it alone changed", n)
}
