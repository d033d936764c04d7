package main

import (
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/goclub/scoreboard/serialio"
)

// configFlags is the flag set of run as far as the config is concerned: the real NATS
// and log flags, and the port flags.
func configFlags(t *testing.T, args ...string) *flag.FlagSet {
	t.Helper()
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	addRunFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return fs
}

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
	c, err := parseConfig("", nil, configFlags(t), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	want := config{
		NATS:    configNATS{Listen: "127.0.0.1:4222", Prefix: "scoreboard"},
		Log:     configLog{Level: "info"},
		Daemon:  configDaemon{RequestTimeout: "2s", Drain: "5s", Workers: true},
		History: configHistory{Enabled: true, MaxAge: "90d", MaxBytes: "1GiB", Replicas: 1, Sync: "2m"},
		HTTP:    configHTTP{Listen: "127.0.0.1:8080"},
	}
	if !reflect.DeepEqual(c, want) {
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

	c, err := parseConfig(path, data, configFlags(t, "--log-level", "warn", "--baud", "38400", "--request-timeout", "3s"), getenv)
	if err != nil {
		t.Fatal(err)
	}
	want := config{
		NATS: configNATS{
			URL:      "nats://file.example:4222", // file over default
			Listen:   "127.0.0.1:4222",           // default
			User:     "club",
			Password: "from-env", // environment over file
			Prefix:   "club",
		},
		Log:     configLog{Level: "warn", Format: "console"},                    // flag over file; file
		Daemon:  configDaemon{RequestTimeout: "3s", Drain: "9s", Workers: true}, // flag over file; file
		History: configHistory{Enabled: true, MaxAge: "90d", MaxBytes: "1GiB", Replicas: 1, Sync: "2m"},
		HTTP:    configHTTP{Listen: "0.0.0.0:8080"}, // file over default
		Ports: []configPort{{
			Name: "lobby", Device: "/dev/ttyUSB0", Problem: "goscore",
			LineSettings: serialio.LineSettings{Baud: 38400, Parity: "even"}, // flag over file; file
		}},
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("got  %+v\nwant %+v", c, want)
	}

	// A flag over the environment.
	c, err = parseConfig(path, data, configFlags(t, "--nats-password", "from-flag"), getenv)
	if err != nil || c.NATS.Password != "from-flag" {
		t.Errorf("--nats-password with $SCOREBOARD_NATS_PASSWORD set: got %q, %v", c.NATS.Password, err)
	}

	// loadConfig reads the file and the real environment.
	t.Setenv("SCOREBOARD_NATS_PASSWORD", "from-real-env")
	c, err = loadConfig(path, configFlags(t))
	if err != nil || c.NATS.Password != "from-real-env" || c.Ports[0].Baud != 19200 {
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
	c, err := parseConfig(path, data, configFlags(t), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	want := configHistory{Enabled: true, MaxAge: "30d", MaxBytes: "512MiB", Replicas: 3, Sync: "2m"}
	if c.History != want || c.Daemon.StateDir != "/var/lib/scoreboard" {
		t.Errorf("from the file: %+v, state dir %q", c.History, c.Daemon.StateDir)
	}
	c, err = parseConfig(path, data, configFlags(t, "--history=false", "--history-replicas", "1", "--state-dir", "/tmp/s", "--history-max-age", "36h"), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	want = configHistory{Enabled: false, MaxAge: "36h", MaxBytes: "512MiB", Replicas: 1, Sync: "2m"}
	if c.History != want || c.Daemon.StateDir != "/tmp/s" {
		t.Errorf("flags over the file: %+v, state dir %q", c.History, c.Daemon.StateDir)
	}
	// A bad value from a flag names the flag.
	_, err = parseConfig(path, data, configFlags(t, "--history-max-bytes", "huge"), noEnv)
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
		c, err := parseConfig(path, []byte(tc.file), configFlags(t, tc.flags...), noEnv)
		if err != nil || c.Daemon.Workers != tc.want {
			t.Errorf("file %q, flags %q: workers %v (%v), want %v", tc.file, tc.flags, c.Daemon.Workers, err, tc.want)
		}
	}
}

func TestConfigPortFromFlags(t *testing.T) {
	c, err := parseConfig("", nil, configFlags(t, "--port", "-", "--problem", "replay", "--error-line"), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	want := []configPort{{Name: "stdio", Device: "-", Problem: "replay", ErrorLine: true}}
	if !reflect.DeepEqual(c.Ports, want) {
		t.Errorf("got %+v, want %+v", c.Ports, want)
	}

	for _, tc := range []struct {
		file string
		args []string
		want string
	}{
		{"", []string{"--problem", "goscore"}, "--problem: no port to apply it to"},
		{"", []string{"--port", "/dev/ttyUSB0"}, "--problem: missing: one of"},
		{"", []string{"--port", "-", "--problem", "chess"}, `--problem: unknown problem "chess"`},
		{"", []string{"--port", "-", "--problem", "goscore", "--parity", "often"}, `--parity: parity "often"`},
		{"", []string{"--port", "-", "--problem", "goscore", "--port-name", "Big Hall"}, `--port-name: "Big Hall": want lowercase`},
		{"", []string{"--nats-listen", "localhost"}, `--nats-listen: listen address "localhost"`},
		{"", []string{"--nats-url", "nats://x:4222", "--nats-listen", "127.0.0.1:1"}, "--nats-listen: the embedded server's listener cannot go with nats.url"},
		{"", []string{"--log-format", "xml"}, `--log-format: log format "xml"`},
		{"", []string{"--http", "8080"}, `--http: "8080": want HOST:PORT`},
		{"[[port]]\ndevice='/dev/a'\nproblem='goscore'\nname='a'\n[[port]]\ndevice='/dev/b'\nproblem='goscore'\nname='b'\n",
			[]string{"--baud", "19200"}, "--baud: the config file CONFIG has 2 ports"},
	} {
		var path string
		var data []byte
		if tc.file != "" {
			path = writeConfig(t, tc.file)
			data = []byte(tc.file)
		}
		_, err := parseConfig(path, data, configFlags(t, tc.args...), noEnv)
		want := strings.ReplaceAll(tc.want, "CONFIG", path)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want an error with %q", tc.args, err, want)
		}
	}

	// A flag given on the command line wins over the file's listener.
	path := writeConfig(t, "[nats]\nlisten = '127.0.0.1:5222'\n")
	data, _ := os.ReadFile(path)
	if c, err := parseConfig(path, data, configFlags(t, "--nats-url", "nats://x:4222"), noEnv); err != nil || c.NATS.URL != "nats://x:4222" {
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
		{"unknown key in nats", "[nats]\nurll = 'nats://x:4222'\n", "nats.urll", 0, "unknown key (known in [nats]: listen, url,"},
		{"unknown key in port", "[[port]]\nname = 'lobby'\ndevice = '/dev/ttyUSB0'\nproblem = 'goscore'\nbaudrate = 9600\n",
			`[[port]] 1 ("lobby") baudrate`, 0, "unknown key (known in [[port]]: name, device,"},
		{"wrong type of int", goodPort + goodPort[0:0] + "\n[[port]]\nname = 'hall'\ndevice = '/dev/ttyACM0'\nproblem = 'othello'\nbaud = 'fast'\n",
			`[[port]] 2 ("hall") baud`, 0, `want an integer, got the string "fast"`},
		{"wrong type of string", "[log]\nlevel = 3\n", "log.level", 0, "want a string, got the integer 3"},
		{"bad duration", "[daemon]\ndrain = 'forever'\n", "daemon.drain", 0, `"forever": want a positive duration`},
		{"wrong type of bool", "[[port]]\nname = 'lobby'\ndevice = '/dev/ttyUSB0'\nproblem = 'goscore'\nerror_line = 'yes'\n",
			`[[port]] 1 ("lobby") error_line`, 0, "want true or false"},
		{"table for a key", "nats = 'nats://x'\n", "nats", 0, "want a table [nats]"},
		{"bad history age", "[history]\nmax_age = 'a while'\n", "history.max_age", 0, `"a while": want a positive duration such as 90d`},
		{"bad history size", "[history]\nmax_bytes = 'big'\n", "history.max_bytes", 0, `"big": want a positive size such as 1GiB`},
		{"history size as a number", "[history]\nmax_bytes = 1024\n", "history.max_bytes", 0, "want a string, got the integer 1024"},
		{"history replicas", "[history]\nreplicas = 0\n", "history.replicas", 0, "0: want 1 to 5"},
		{"history on-off", "[history]\nenabled = 'no'\n", "history.enabled", 0, "want true or false"},
		{"unknown key in history", "[history]\nage = '1d'\n", "history.age", 0, "unknown key (known in [history]: enabled, max_age, max_bytes, sync, replicas)"},
		{"single port table", "[port]\ndevice = '/dev/ttyUSB0'\n", "port", 0, "want one [[port]] table per port"},
		{"missing device", "[[port]]\nname = 'lobby'\nproblem = 'goscore'\n", `[[port]] 1 ("lobby") device`, 0, "missing"},
		{"missing problem", "[[port]]\nname = 'lobby'\ndevice = '/dev/ttyUSB0'\n", `[[port]] 1 ("lobby") problem`, 0, "missing: one of"},
		{"unknown problem", "[[port]]\nname = 'lobby'\ndevice = '/dev/ttyUSB0'\nproblem = 'chess'\n",
			`[[port]] 1 ("lobby") problem`, 0, `unknown problem "chess": want one of`},
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
		{"unknown key in http", "[http]\nport = 8080\n", "http.port", 0, "unknown key (known in [http]: listen)"},
		// TOML's own errors come with their line.
		{"syntax", "[nats]\nurl = 'nats://x:4222'\nlisten = \n", "", 3, "expected value but found '\\n' instead (after key nats.listen)"},
		{"bad table", "[log]\nlevel = 'info'\n[nats x]\n", "", 3, "expected"},
		{"unclosed table", "[log]\nlevel = 'info'\n[nats\n", "", 3, "expected"},
		{"unclosed string", "[log]\nlevel = 'info\n", "", 2, "newline"},
		{"duplicate key", "[log]\nlevel = 'info'\nlevel = 'debug'\n", "", 3, "already been defined"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeConfig(t, tc.text)
			_, err := loadConfig(path, configFlags(t))
			if err == nil {
				t.Fatal("accepted")
			}
			var ce *configError
			if !errors.As(err, &ce) {
				t.Fatalf("%v: not a *configError", err)
			}
			if ce.File != path || (tc.key != "" && ce.Key != tc.key) || ce.Line != tc.line || !strings.Contains(ce.Msg, tc.msg) {
				t.Errorf("got %q\n%#v\nwant key %q, line %d, message with %q", err, ce, tc.key, tc.line, tc.msg)
			}
			if !strings.HasPrefix(err.Error(), "config "+path+": ") {
				t.Errorf("%q does not start with the file", err)
			}
		})
	}
}

func TestConfigAllErrorsAtOnce(t *testing.T) {
	path := writeConfig(t, "[log]\nlevel = 'loud'\n[[port]]\nname = 'lobby'\nbaud = 'fast'\n")
	_, err := loadConfig(path, configFlags(t))
	for _, want := range []string{"log.level", "baud", "device", "problem"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not mention %s", err, want)
		}
	}
}

func TestConfigMissingFile(t *testing.T) {
	_, err := loadConfig("/nonexistent/scoreboard.toml", configFlags(t))
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/scoreboard.toml") {
		t.Errorf("got %v, want an error naming the file", err)
	}
}

// TestConfigExample keeps configs/scoreboard.toml valid: every key it shows, commented
// out or not, is one the daemon knows.
func TestConfigExample(t *testing.T) {
	const example = "../../configs/scoreboard.toml"
	c, err := loadConfig(example, configFlags(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Ports) != 2 || c.Ports[0].Name != "lobby" || c.Ports[1].Problem != "othello" {
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
	_, err = parseConfig(example, []byte(strings.Join(lines, "\n")), configFlags(t), noEnv)
	for _, e := range errs(err) {
		var ce *configError
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
	example, err := os.ReadFile("../../configs/scoreboard.toml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(example)
	fs := flag.NewFlagSet("fuzz", flag.ContinueOnError)
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := parseConfig("fuzz.toml", data, fs, noEnv)
		for _, e := range errs(err) {
			var ce *configError
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

// TestRunBadConfigExits: `scoreboard run --config` with a bad file exits 1 before
// anything starts, saying which file, which key and what is wrong.
func TestRunBadConfigExits(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"[nats]\nlisten = 'off'\nurll = 'x'\n", "key nats.urll: unknown key"},
		{"[nats]\nlisten = 'off'\n[[port]]\nname = 'lobby'\nproblem = 'goscore'\n", `key [[port]] 1 ("lobby") device: missing`},
		{"[nats]\nlisten = 'off'\n[[port]]\ndevice = '-'\nproblem = 'goscore'\nbaud = 'fast'\n", `key [[port]] 1 baud: want an integer`},
		{"[nats]\nlisten = 'off'\n[[port]]\ndevice = '-'\nproblem = 'chess'\n", `unknown problem "chess"`},
		{"[nats\n", "line 1: "},
	} {
		path := writeConfig(t, tc.text)
		var out, errw strings.Builder
		code := runMain(t.Context(), []string{"run", "--config", path}, stdio{strings.NewReader(""), &out, &errw})
		if code != 1 || !strings.Contains(errw.String(), "config "+path+": ") || !strings.Contains(errw.String(), tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 1 and an error naming the file and %q", tc.text, code, errw.String(), tc.want)
		}
		if strings.Contains(errw.String(), `"level"`) {
			t.Errorf("%q: something started and logged before the config was checked:\n%s", tc.text, errw.String())
		}
	}
}
