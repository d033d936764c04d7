package main

import (
	"bytes"
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/goclub/scoreboard/config"
)

// Words (issue 31): every help, example, hint, log line and doc names a setting's
// flag by its name (--http-listen, --port-device, --port-problem), never by the
// former one (--http, --port, --problem). The former names live in two places
// only: the alias table (the settings' alias field, config/settings.go), and the
// one line of docs/cli.md generated from it.
//
// Some former names are also a command's own flag, of another meaning: history's
// and render's --port (a port's name), history's and watch's --problem, the tools'
// --club, work's --http (its /metrics), demo's and simulate's --baud. Such a name
// is taken as that command's when the text says which command it is about: the
// nearest command named before it on its line (`scoreboard history`, `render`,
// "work --http"), else the command whose help, man page, markdown section or Go
// file it is in. Without one it is the setting's former name: name the command.

// wordsSkipped are files not read: history, the names a release had then.
var wordsSkipped = map[string]bool{"packaging/changelog.in": true}

// formerFlag is a setting's former flag name, from the alias table.
type formerFlag struct {
	name, now string // "port", "--port-device"
}

func formerFlags() map[string]formerFlag {
	m := map[string]formerFlag{}
	for _, s := range config.All() {
		a := s.Alias()
		switch {
		case a == "":
		case strings.HasPrefix(a, "no-"):
			m[a] = formerFlag{a, "--" + s.Flag() + "=false"}
		default:
			m[a] = formerFlag{a, "--" + s.Flag()}
		}
	}
	return m
}

// wordsChecker finds the former names in a text.
type wordsChecker struct {
	former map[string]formerFlag
	// owners are the commands that have a flag of a former name as their own.
	owners map[string][]string
	flag   *regexp.Regexp // --NAME as a whole token
	named  *regexp.Regexp // a command named in a text
}

func newWordsChecker(root *cobra.Command) *wordsChecker {
	w := &wordsChecker{former: formerFlags(), owners: map[string][]string{}}
	var names, cmds []string
	for n := range w.former {
		names = append(names, regexp.QuoteMeta(n))
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		cmds = append(cmds, regexp.QuoteMeta(c.Name()))
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if _, ok := w.former[f.Name]; ok && !f.Hidden {
				w.owners[f.Name] = append(w.owners[f.Name], c.Name())
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	// The longest first, should one be the start of another.
	slices.SortFunc(names, func(a, b string) int { return len(b) - len(a) })
	slices.Sort(cmds)
	cmds = slices.Compact(cmds)
	// Go's regexp has no look-around: the character before is matched, the name is
	// group 1, and the one after is checked in line: anything but [a-z0-9-].
	// --drain=1s and `--drain` are the former name, --daemon-drain and --port-name
	// are not.
	w.flag = regexp.MustCompile(`(?:^|[^A-Za-z0-9-])--(` + strings.Join(names, "|") + `)`)
	alt := strings.Join(cmds, "|")
	w.named = regexp.MustCompile("(?:\\bscoreboard |`)(" + alt + ")(?:$|[` :])|\\b(" + alt + ") +--")
	return w
}

// owns says whether cmd has a flag of name as its own.
func (w *wordsChecker) owns(cmd, name string) bool { return slices.Contains(w.owners[name], cmd) }

// line returns what is wrong with one line of text: each former name in it that is
// not the flag of the command it is about. scope is the command the text is
// about when the line names none ("" for none); declares, for a Go file, whether
// the file declares a flag of that name.
func (w *wordsChecker) line(text, scope string, declares func(name string) bool) []string {
	var out []string
	named := w.named.FindAllStringSubmatchIndex(text, -1)
	for _, m := range w.flag.FindAllStringSubmatchIndex(text, -1) {
		name := text[m[2]:m[3]]
		if m[3] < len(text) && strings.IndexByte("abcdefghijklmnopqrstuvwxyz0123456789-", text[m[3]]) >= 0 {
			continue
		}
		f := w.former[name]
		if len(w.owners[name]) > 0 {
			cmd := scope
			for _, n := range named {
				if n[0] >= m[2] {
					break
				}
				if n[2] >= 0 {
					cmd = text[n[2]:n[3]]
				} else {
					cmd = text[n[4]:n[5]]
				}
			}
			if w.owns(cmd, name) || (cmd == scope && declares != nil && declares(name)) {
				continue
			}
			out = append(out, fmt.Sprintf("--%s: say %s (--%s is the flag of %s only; name the command if it is theirs)",
				name, f.now, name, strings.Join(w.owners[name], ", ")))
			continue
		}
		out = append(out, fmt.Sprintf("--%s: say %s", name, f.now))
	}
	return out
}

// TestFormerFlagNames reads the help of every command (in-process), the docs
// (README.md, docs/, the man pages), the packaging (configs/, packaging/, the web
// page) and every string in the Go source (the hints, errors, log lines and
// examples) for a setting's former flag name, and names each one found with the
// name to say instead.
func TestFormerFlagNames(t *testing.T) {
	w := newWordsChecker(newRoot(stdio{}))
	var hits []string
	report := func(where string, found []string) {
		for _, f := range found {
			hits = append(hits, where+": "+f)
		}
	}

	// The help, as `scoreboard COMMAND --help` prints it.
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		args := append(strings.Fields(c.CommandPath())[1:], "--help")
		var out bytes.Buffer
		if code := runMain(context.Background(), args, stdio{strings.NewReader(""), &out, &out}); code != 0 {
			t.Errorf("scoreboard %s: exit %d: %s", strings.Join(args, " "), code, out.String())
		}
		for i, l := range strings.Split(out.String(), "\n") {
			report(fmt.Sprintf("%s --help, line %d", c.CommandPath(), i+1), w.line(l, c.Name(), nil))
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRoot(stdio{}))

	// The docs, the packaging and the Go source.
	root := filepath.Join("..", "..")
	former := formerLine(t)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			switch d.Name() {
			case ".git", "testdata", "dist", "bin", "node_modules":
				return filepath.SkipDir
			}
			return nil
		}
		if wordsSkipped[rel] {
			return nil
		}
		switch {
		case strings.HasSuffix(rel, "_test.go"):
		case strings.HasSuffix(rel, ".go"):
			return wordsInGo(w, path, func(line int, found []string) { report(fmt.Sprintf("%s:%d", rel, line), found) })
		case wordsDoc(rel):
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			scope := "" // a man page's command
			if name, ok := strings.CutPrefix(rel, "docs/man/scoreboard-"); ok {
				scope = strings.TrimSuffix(name, ".1")
			}
			section, level := "", 0
			for i, l := range strings.Split(string(data), "\n") {
				if rel == "docs/cli.md" && l == former {
					continue // the one place that lists the former names
				}
				if strings.HasSuffix(rel, ".1") {
					l = strings.ReplaceAll(l, `\-`, "-")
				}
				// A markdown section about a command is that command's.
				if h := strings.IndexFunc(l, func(r rune) bool { return r != '#' }); strings.HasSuffix(rel, ".md") && h > 0 && l[h] == ' ' {
					if n := w.named.FindStringSubmatch(l + " "); n != nil {
						section, level = n[1]+n[2], h
					} else if h <= level {
						section, level = "", h
					}
				}
				s := scope
				if section != "" {
					s = section
				}
				report(fmt.Sprintf("%s:%d", rel, i+1), w.line(l, s, nil))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) > 0 {
		t.Errorf("%d former flag names, outside the alias table (config/settings.go) and docs/cli.md's line of them:\n%s",
			len(hits), strings.Join(hits, "\n"))
	}
}

// wordsDoc says whether a file is a doc, a packaging file or the web page's: text
// a user reads.
func wordsDoc(rel string) bool {
	switch filepath.Ext(rel) {
	case ".md", ".1", ".toml", ".conf", ".yml", ".yaml", ".service", ".env", ".html", ".js", ".txt":
		return true
	}
	switch {
	case rel == "Makefile", strings.HasPrefix(rel, "packaging/"), strings.HasPrefix(rel, "configs/"),
		strings.HasPrefix(rel, ".ci/"):
		return !strings.HasSuffix(rel, ".go")
	}
	return false
}

// formerLine is docs/cli.md's line of the former names, as config writes it.
func formerLine(t *testing.T) string {
	for _, l := range strings.Split(config.MarkdownTable(), "\n") {
		if strings.HasPrefix(l, "Former flag names") {
			return l
		}
	}
	t.Fatal("config.MarkdownTable has no line of the former flag names")
	return ""
}

// wordsInGo checks the string literals of a Go file: the help, the hints, the
// errors, the log lines. A literal is about the command the file makes (its Use),
// or a flag the file declares (cmd.Flags().String("port", ...)).
func wordsInGo(w *wordsChecker, path string, report func(line int, found []string)) error {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		return err
	}
	var uses []string
	declared := map[string]bool{}
	definer := regexp.MustCompile(`^(String|Int|Uint|Bool|Duration|Float|Var)`)
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.KeyValueExpr:
			if k, ok := n.Key.(*ast.Ident); ok && k.Name == "Use" {
				if v, ok := n.Value.(*ast.BasicLit); ok && v.Kind == token.STRING {
					s, _ := strconv.Unquote(v.Value)
					if fs := strings.Fields(s); len(fs) > 0 {
						uses = append(uses, fs[0])
					}
				}
			}
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok && definer.MatchString(sel.Sel.Name) {
				for _, a := range n.Args {
					if v, ok := a.(*ast.BasicLit); ok && v.Kind == token.STRING {
						s, _ := strconv.Unquote(v.Value)
						declared[s] = true
					}
				}
			}
		}
		return true
	})
	ast.Inspect(f, func(n ast.Node) bool {
		v, ok := n.(*ast.BasicLit)
		if !ok || v.Kind != token.STRING {
			return true
		}
		s, err := strconv.Unquote(v.Value)
		if err != nil {
			return true
		}
		line := fset.Position(v.Pos()).Line
		for _, l := range strings.Split(s, "\n") {
			var found []string
			// The file's commands, each in turn: the literal is about any of them.
			scopes := append([]string{""}, uses...)
			for i, scope := range scopes {
				got := w.line(l, scope, func(name string) bool { return declared[name] })
				if i == 0 || len(got) < len(found) {
					found = got
				}
			}
			report(line, found)
			if strings.HasPrefix(v.Value, "`") {
				line++
			}
		}
		return true
	})
	return nil
}

// TestFormerFlagNamesMatcher: what is a former name and what is not.
func TestFormerFlagNamesMatcher(t *testing.T) {
	w := newWordsChecker(newRoot(stdio{}))
	for _, c := range []struct {
		text, scope string
		hits        int
	}{
		{"give --drain 10s", "", 1},
		{"give `--drain`.", "", 1},
		{"--drain=10s", "", 1},
		{"--no-workers", "", 1},
		{"--history=false", "", 1},
		{"--daemon-drain 10s, --port-device -, --port-name hall, --history-enabled", "", 0},
		{"--http-listen 0.0.0.0:8080 --hub-url x --hub-club north", "", 0},
		{"x--drain, ---drain", "", 0},
		{"scoreboard run --port /dev/ttyUSB0 --problem goscore", "", 2},
		{"--port --problem,--drain", "run", 3},
		{"scoreboard run --port-device /dev/ttyUSB0; scoreboard history --port hall --problem goscore", "", 0},
		{"render --club north --port table1", "", 0},
		{"`history`, `watch` and `render` take `--club`", "", 0},
		{"(run --http, work --http)", "", 1},
		{"serves the page on --http", "run", 1},
		{"serves its metrics on --http", "work", 0},
		{"filters: --port NAME", "history", 0},
		{"filters: --port NAME", "", 1},
		{"the hub.url's --club", "", 1},
	} {
		got := w.line(c.text, c.scope, nil)
		if len(got) != c.hits {
			t.Errorf("%q (about %q): %d former names, want %d: %q", c.text, c.scope, len(got), c.hits, got)
		}
	}
}
