package history

// ReadWhole is Read from the history's start whatever q asks: what the tail read
// must give back, and its cost before the tail read (BenchmarkTail).
var ReadWhole = readWhole

// MarkFormat is markFormat with the version's format given: a later format than
// this build's is tried as a later version would open the dir.
var MarkFormat = markFormat
