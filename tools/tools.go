//go:build tools

// Package tools pins the build tools `make dist` runs (go run from this module), so
// the main module's go.mod lists only what the daemon links.
package tools

import _ "github.com/goreleaser/nfpm/v2/cmd/nfpm"
