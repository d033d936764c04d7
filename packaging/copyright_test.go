package packaging

import (
	"os"
	"os/exec"
	"path"
	"strings"
	"testing"
)

// Every module linked into the program is named by a Files paragraph of the .deb's
// copyright file, with a licence: a dependency added to go.mod without its licence
// fails here, not in a redistributor's audit.
func TestCopyrightNamesEveryModule(t *testing.T) {
	data, err := os.ReadFile("copyright")
	if err != nil {
		t.Fatal(err)
	}
	// The Files patterns of the paragraphs that name a licence.
	var patterns []string
	for _, para := range strings.Split(string(data), "\n\n") {
		files, licence := fields(para, "Files"), fields(para, "License")
		if files == "" || licence == "" {
			continue
		}
		patterns = append(patterns, strings.Fields(files)...)
	}
	// The GOOS of the .debs: a module only another system links (mousetrap, for
	// Windows) is not in them.
	cmd := exec.Command("go", "list", "-deps", "-f", "{{with .Module}}{{if not .Main}}{{.Path}}{{end}}{{end}}", "../cmd/scoreboard")
	cmd.Env = append(os.Environ(), "GOOS=linux", "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := map[string]bool{}
	for _, m := range strings.Fields(string(out)) {
		if seen[m] {
			continue
		}
		seen[m] = true
		named := false
		for _, p := range patterns {
			if ok, _ := path.Match(p, m); ok || strings.HasPrefix(m+"/", strings.TrimSuffix(p, "*")) && strings.HasSuffix(p, "/*") {
				named = true
				break
			}
		}
		if !named {
			t.Errorf("module %s is linked into scoreboard but no Files paragraph of packaging/copyright names it: add it with its licence", m)
		}
	}
	if len(seen) < 10 {
		t.Fatalf("go list named %d modules; the program links more than that: %q", len(seen), out)
	}
	t.Logf("%d modules, each named in packaging/copyright", len(seen))
}

// fields is the value of a paragraph's field, continuation lines joined.
func fields(para, name string) string {
	var b strings.Builder
	in := false
	for _, line := range strings.Split(para, "\n") {
		switch {
		case strings.HasPrefix(line, name+":"):
			in = true
			b.WriteString(strings.TrimPrefix(line, name+":"))
		case in && strings.HasPrefix(line, " ") && name == "Files":
			b.WriteString(" " + line)
		default:
			if in {
				return strings.TrimSpace(b.String())
			}
		}
	}
	return strings.TrimSpace(b.String())
}
