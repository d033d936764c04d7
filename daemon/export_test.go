package daemon

import "time"

// CountLinesFrom starts the line count of c's ports at n+1: a test passes 2^31
// lines without reading them.
func CountLinesFrom(c *Config, n int64) { c.firstLine = n }

// WaitLineEnd makes c's ports say they receive no line ends once bytes have waited
// d for one.
func WaitLineEnd(c *Config, d time.Duration) { c.noLineEndWait = d }
