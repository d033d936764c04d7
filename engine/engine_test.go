package engine

import (
	"errors"
	"strings"
	"testing"
)

// An unknown problem is one error, whoever meets it: it names the problems there
// are, and a hint when one is given.
func TestUnknownProblemError(t *testing.T) {
	_, err := Find("chess")
	var u *UnknownProblemError
	if !errors.As(err, &u) || u.Name != "chess" {
		t.Fatalf("Find(chess) = %v, want an *UnknownProblemError", err)
	}
	want := `unknown problem "chess" (problems: ` + strings.Join(Names(), ", ") + ")"
	if err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	u.Hint = "goscore"
	if got := u.Error(); !strings.Contains(got, `"chess"; did you mean goscore? (problems: `) {
		t.Errorf("with a hint: %q", got)
	}
	if p, err := Find("goscore"); err != nil || p.Name() != "goscore" {
		t.Errorf("Find(goscore) = %v, %v", p, err)
	}
}
