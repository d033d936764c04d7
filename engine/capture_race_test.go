//go:build race

package engine_test

// captureRace is set under the race detector, which makes sync.Pool drop items at
// random, so allocation counts mean nothing there.
const captureRace = true
