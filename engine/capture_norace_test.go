//go:build !race

package engine_test

// captureRace is set under the race detector; see capture_race_test.go.
const captureRace = false
