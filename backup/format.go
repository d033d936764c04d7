// Package backup writes a daemon's or a hub's streams (its history, its buckets)
// to one file while it runs, checks such a file, and restores it into a new state
// directory with every message's sequence number and time as they were.
//
// The file (format version 1) is gzip of JSON lines:
//
//	line 1       the header: {"format":"scoreboard-backup","version":1,"scoreboard":..., "streams":[{"name", "config", "first_seq", "last_seq"}, ...]}
//	then         one line per message, stream by stream in the header's order, each stream's in sequence order:
//	             {"s":INDEX,"seq":N,"ts":UNIX_NANOS,"subj":SUBJECT,"hdr":{...},"data":BASE64}
//	last line    the end: {"end":[{"msgs":N,"last_seq":N}, ...],"sha256":HEX}
//
// The end line's sha256 is of every byte (uncompressed) before it; its counts are
// each stream's. A file without its end line was cut short.
package backup

import (
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Format names the file's kind in its header.
const Format = "scoreboard-backup"

// Version is the format version this scoreboard writes and reads.
const Version = 1

// Header is the file's first line.
type Header struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	// Scoreboard is the version of the scoreboard that wrote it; NATSServer the
	// nats-server version it ran on, if known.
	Scoreboard string    `json:"scoreboard"`
	NATSServer string    `json:"nats_server,omitempty"`
	Created    time.Time `json:"created"`
	// Prefix is the subjects' prefix whose streams these are (scoreboard,
	// league for a hub); From says where a converted copy came from (a club's
	// history as a hub kept it: "hub stream LEAGUE_NORTH").
	Prefix  string   `json:"prefix"`
	From    string   `json:"from,omitempty"`
	Streams []Stream `json:"streams"`
	// Skipped are the prefix's streams kept in memory only: not backed up, their
	// owner rebuilds them at start (a hub's LEAGUE_BOARDS).
	Skipped []string `json:"skipped,omitempty"`
}

// Stream is one stream of the backup: its config as the server gave it, and the
// sequence range the backup holds: from its first message at the start of the
// backup to its last then (the backup's point in time).
type Stream struct {
	Name     string                 `json:"name"`
	Config   jetstream.StreamConfig `json:"config"`
	FirstSeq uint64                 `json:"first_seq"`
	LastSeq  uint64                 `json:"last_seq"`
	// Created is when the server made the stream: its identity (a league hub's
	// source tells a stream made anew by it) and the page's links' (web.streamID).
	// Zero when not known (a club's stream as a hub kept it).
	Created time.Time `json:"created,omitzero"`
}

// Message is one stored message, as the stream held it.
type Message struct {
	Stream  int         `json:"s"`
	Seq     uint64      `json:"seq"`
	Time    int64       `json:"ts"` // Unix nanoseconds, the server's stamp
	Subject string      `json:"subj"`
	Header  nats.Header `json:"hdr,omitempty"`
	Data    []byte      `json:"data"`
}

// End is the file's last line.
type End struct {
	End    []Count `json:"end"`
	SHA256 string  `json:"sha256"`
}

// Count is what the backup holds of a stream.
type Count struct {
	Msgs    uint64 `json:"msgs"`
	LastSeq uint64 `json:"last_seq"`
}

// line is any line after the header: a message, or the end (End set).
type line struct {
	Message
	End    *[]Count `json:"end"`
	SHA256 string   `json:"sha256"`
}
