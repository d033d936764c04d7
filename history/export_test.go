package history

// ReadWhole is Read from the history's start whatever q asks: what the tail read
// must give back, and its cost before the tail read (BenchmarkTail).
var ReadWhole = readWhole
