package backup

import (
	"bufio"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/prune"
)

// Options say what Write backs up.
type Options struct {
	// Prefix is the subjects' prefix whose streams are backed up: its stream
	// (bus.Subjects.Stream, S), every stream named S_*, and every bucket KV_S_*
	// (the boards, and any other the daemon keeps), so a new one is covered.
	Prefix string
	// Club, at a league hub, backs up the hub's copy of this club's history
	// (SourceStream) as the club's own under Prefix instead: its subjects, and
	// each message's sequence number in the club's stream, as the club had them.
	Club, SourceStream, SourcePrefix string
	// Scoreboard is the writer's version, for the header.
	Scoreboard string
	// Idle bounds the wait for a stream's next message.
	Idle time.Duration
}

// consumerIdle is how long the server keeps a backup's consumer that stopped.
const consumerIdle = 30 * time.Second

// Streams are the streams of prefix on the server: its buckets KV_S_* and
// OBJ_S_*, then S and S_*.
func Streams(ctx context.Context, js jetstream.JetStream, prefix string) ([]string, error) {
	s := bus.Subjects{Prefix: prefix}.Stream()
	var out []string
	names := js.StreamNames(ctx)
	for n := range names.Name() {
		if n == s || strings.HasPrefix(n, s+"_") || strings.HasPrefix(n, "KV_"+s+"_") || strings.HasPrefix(n, "OBJ_"+s+"_") {
			out = append(out, n)
		}
	}
	if err := names.Err(); err != nil {
		return nil, fmt.Errorf("backup: list the streams: %w", err)
	}
	// The buckets' ranges are taken first: a bucket's value names the history
	// message it came from, which must then be in the backup.
	slices.SortFunc(out, func(a, b string) int {
		if isBucket(a) != isBucket(b) {
			if isBucket(a) {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	return out, nil
}

// cutOrder is the order the streams' ranges are taken in (names' order, the
// buckets first): a bucket's before the history's, since a board names the history
// message it came from, which must then be in the backup; and a stream that
// sources another (a daemon's history sourcing its pairings' bucket) before that
// one, so that it never holds a message of its source the source's backup lacks
// (after a restore its source would resume past it, and skip what comes there).
func cutOrder(names []string, sources map[string][]string) []string {
	order := slices.Clone(names)
	for range len(order) * len(order) { // enough for any order; a cycle stops here
		moved := false
		for i := 0; i < len(order) && !moved; i++ {
			for j := 0; j < i; j++ {
				if slices.Contains(sources[order[i]], order[j]) {
					src := order[j]
					order = slices.Insert(slices.Delete(order, j, j+1), i, src)
					moved = true
					break
				}
			}
		}
		if !moved {
			break
		}
	}
	return order
}

// isBucket says whether stream n is a bucket's (KV_, OBJ_).
func isBucket(n string) bool { return strings.HasPrefix(n, "KV_") || strings.HasPrefix(n, "OBJ_") }

// Write writes a backup of o's streams to w, each read up to its last message
// when the backup comes to it (its cut, in cutOrder's order; a bucket's, to its
// end): a stream's messages stored later are the next backup's. It returns what it
// wrote.
func Write(ctx context.Context, js jetstream.JetStream, o Options, w io.Writer) (Header, []Count, error) {
	if o.Idle <= 0 {
		o.Idle = 30 * time.Second
	}
	h := Header{Format: Format, Version: Version, Scoreboard: o.Scoreboard, Created: time.Now().UTC(), Prefix: o.Prefix}
	if _, err := js.AccountInfo(ctx); err != nil {
		return h, nil, fmt.Errorf("backup: JetStream: %w (is the daemon running, with its history on?)", err)
	}
	names := []string{o.SourceStream}
	if o.Club == "" {
		var err error
		if names, err = Streams(ctx, js, o.Prefix); err != nil {
			return h, nil, err
		}
		if len(names) == 0 {
			return h, nil, fmt.Errorf("backup: no stream of the prefix %q on this server (is the history on? is --nats-prefix the daemon's?)", o.Prefix)
		}
	} else {
		h.From = "hub stream " + o.SourceStream
	}
	// Every stream's range first, at one moment: the backup's point in time, each
	// stream's cut taken in the order cutOrder says.
	streams := map[string]jetstream.Stream{}
	sources := map[string][]string{}
	for _, n := range names {
		s, err := js.Stream(ctx, n)
		if err != nil {
			return h, nil, fmt.Errorf("backup: stream %s: %w", n, err)
		}
		streams[n] = s
		for _, src := range s.CachedInfo().Config.Sources {
			sources[n] = append(sources[n], src.Name)
		}
	}
	// Each stream's cut is its last message when the backup comes to it, in
	// cutOrder's order. A bucket is read whole at its turn, to its end then: a
	// value put since the cut replaces the cut's (a bucket keeps a value a key),
	// and would be lost by a copy that stopped at the cut. A stream (the history)
	// is read to its cut afterwards, as the file is written.
	type part struct {
		info  *jetstream.StreamInfo
		msgs  []Message // a bucket's, read at its turn
		count Count
		read  bool
	}
	var parts []*part
	for _, n := range cutOrder(names, sources) {
		s := streams[n]
		info, err := s.Info(ctx)
		if err != nil {
			return h, nil, fmt.Errorf("backup: stream %s: %w", n, err)
		}
		if info.Config.Storage == jetstream.MemoryStorage {
			h.Skipped = append(h.Skipped, n)
			continue
		}
		st := Stream{Name: n, Config: info.Config, FirstSeq: max(info.State.FirstSeq, 1), LastSeq: info.State.LastSeq, Created: info.Created}
		p := &part{info: info}
		if o.Club != "" {
			if st, err = clubStream(ctx, s, info, o); err != nil {
				return h, nil, err
			}
		} else if isBucket(n) {
			p.read = true
			p.count, err = copyStream(ctx, js, info, len(parts), o, true, func(m Message) error {
				p.msgs = append(p.msgs, m)
				return nil
			})
			if err != nil {
				return h, nil, err
			}
			st.LastSeq = max(st.LastSeq, p.count.LastSeq)
		}
		h.Streams = append(h.Streams, st)
		parts = append(parts, p)
	}
	bw := &writer{sum: sha256.New()}
	zw := gzip.NewWriter(w)
	bw.w = bufio.NewWriterSize(zw, 64<<10)
	if err := bw.line(h, true); err != nil {
		return h, nil, err
	}
	emit := func(m Message) error { return bw.line(m, true) }
	counts := make([]Count, len(parts))
	for i, p := range parts {
		if p.read {
			for _, m := range p.msgs {
				if err := emit(m); err != nil {
					return h, nil, err
				}
			}
			counts[i] = p.count
			continue
		}
		c, err := copyStream(ctx, js, p.info, i, o, false, emit)
		if err != nil {
			return h, nil, err
		}
		counts[i] = c
	}
	if err := bw.line(End{End: counts, SHA256: hex.EncodeToString(bw.sum.Sum(nil))}, false); err != nil {
		return h, nil, err
	}
	if err := bw.w.Flush(); err != nil {
		return h, nil, fmt.Errorf("backup: write: %w", err)
	}
	if err := zw.Close(); err != nil {
		return h, nil, fmt.Errorf("backup: write: %w", err)
	}
	return h, counts, nil
}

type writer struct {
	w   *bufio.Writer
	sum hash.Hash
	buf []byte
}

// line writes v as a line; summed, unless it is the end line.
func (b *writer) line(v any, sum bool) error {
	j, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("backup: encode: %w", err)
	}
	j = append(j, '\n')
	if sum {
		b.sum.Write(j)
	}
	if _, err := b.w.Write(j); err != nil {
		return fmt.Errorf("backup: write: %w", err)
	}
	return nil
}

// copyStream gives emit stream i's messages, from its first at the cut (info) to
// its last then, or with toEnd to its last when the copy gets there, with an
// ordered consumer: nothing acked, nothing written to the server but the
// consumer, so a tool's read rights are enough.
func copyStream(ctx context.Context, js jetstream.JetStream, info *jetstream.StreamInfo, i int, o Options, toEnd bool, emit func(Message) error) (Count, error) {
	var c Count
	first, last := max(info.State.FirstSeq, 1), info.State.LastSeq
	if info.State.Msgs == 0 || last < first {
		return c, nil
	}
	name := info.Config.Name
	cons, err := js.OrderedConsumer(ctx, name, jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: first, InactiveThreshold: consumerIdle,
	})
	if err != nil {
		return c, fmt.Errorf("backup: read stream %s: %w", name, err)
	}
	it, err := cons.Messages()
	if err != nil {
		return c, fmt.Errorf("backup: read stream %s: %w", name, err)
	}
	defer it.Stop()
	for {
		nctx, cancel := context.WithTimeout(ctx, o.Idle)
		m, err := it.Next(jetstream.NextContext(nctx))
		cancel()
		if err != nil {
			return c, fmt.Errorf("backup: read stream %s after its message %d (to %d): %w", name, c.LastSeq, last, err)
		}
		meta, err := m.Metadata()
		if err != nil {
			return c, fmt.Errorf("backup: read stream %s: %w", name, err)
		}
		seq := meta.Sequence.Stream
		if seq > last && !toEnd {
			return c, nil // the last one went (its limits) while the backup read
		}
		msg := Message{Stream: i, Seq: seq, Time: meta.Timestamp.UnixNano(), Subject: m.Subject(), Header: m.Headers(), Data: m.Data()}
		if o.Club != "" {
			if msg, err = asClubs(msg, o); err != nil {
				return c, fmt.Errorf("backup: stream %s, message %d: %w", name, seq, err)
			}
		}
		if len(msg.Header) == 0 {
			msg.Header = nil
		}
		if msg.Seq > c.LastSeq {
			c.Msgs++
			c.LastSeq = msg.Seq
			if err := emit(msg); err != nil {
				return c, err
			}
		}
		// At its last message, or at the stream's end now: the messages up to the
		// backup's last that were not delivered are gone (deleted, or past the
		// stream's limits), and the restore skips their numbers.
		if (seq == last && !toEnd) || meta.NumPending == 0 {
			return c, nil
		}
	}
}

// clubStream is the club's own stream as the hub's copy of it says: its name
// and subjects under o.Prefix, and the range of the club's sequence numbers the
// hub holds (each message's Nats-Stream-Source header has its own).
func clubStream(ctx context.Context, s jetstream.Stream, info *jetstream.StreamInfo, o Options) (Stream, error) {
	subj := bus.Subjects{Prefix: o.Prefix}
	st := Stream{Name: subj.Stream(), FirstSeq: 1}
	st.Config = jetstream.StreamConfig{
		Name: st.Name, Description: "scoreboard history: restored from the league hub's " + info.Config.Name,
		Subjects: []string{o.Prefix + ".dump.>", o.Prefix + ".result.>"}, Retention: jetstream.LimitsPolicy,
		Discard: jetstream.DiscardOld, MaxAge: info.Config.MaxAge, MaxBytes: prune.MaxBytes(info.Config),
		Storage: jetstream.FileStorage, Replicas: 1, NoAck: true, Duplicates: info.Config.Duplicates, MaxMsgSize: info.Config.MaxMsgSize,
	}
	if info.State.Msgs == 0 {
		return st, nil
	}
	for _, at := range []uint64{info.State.FirstSeq, info.State.LastSeq} {
		m, err := s.GetMsg(ctx, at)
		if err != nil {
			return st, fmt.Errorf("backup: stream %s, message %d: %w", info.Config.Name, at, err)
		}
		seq, err := sourceSeq(m.Header)
		if err != nil {
			return st, fmt.Errorf("backup: stream %s, message %d: %w", info.Config.Name, at, err)
		}
		if at == info.State.FirstSeq {
			st.FirstSeq = seq
		} else {
			st.LastSeq = seq
		}
	}
	return st, nil
}

// sourceHeader is the header nats-server puts on a sourced message: its origin
// stream, and its sequence number there.
const sourceHeader = "Nats-Stream-Source"

// sourceSeq is the sequence number a sourced message had in its origin stream:
// the second field of its Nats-Stream-Source header.
func sourceSeq(h nats.Header) (uint64, error) {
	f := strings.Fields(h.Get(sourceHeader))
	if len(f) < 2 {
		return 0, errors.New("no Nats-Stream-Source header: not a club's message sourced by the hub")
	}
	seq, err := strconv.ParseUint(f[1], 10, 64)
	if err != nil || seq == 0 {
		return 0, fmt.Errorf("Nats-Stream-Source %q: no sequence number", h.Get(sourceHeader))
	}
	return seq, nil
}

// asClubs makes a message of the hub's copy the club's own: its subject under
// o.Prefix, its sequence number in the club's stream, and for a result the
// club's time (the hub stamps the time it came in).
func asClubs(m Message, o Options) (Message, error) {
	seq, err := sourceSeq(m.Header)
	if err != nil {
		return m, err
	}
	rest, ok := strings.CutPrefix(m.Subject, o.SourcePrefix+".")
	if !ok {
		return m, fmt.Errorf("subject %q is not under %s", m.Subject, o.SourcePrefix)
	}
	m.Seq, m.Subject = seq, o.Prefix+"."+rest
	if at, ok := bus.ParseTime(m.Header.Get(bus.HeaderTime)); ok {
		m.Time = at.UnixNano()
	}
	h := nats.Header{}
	for k, v := range m.Header {
		if k != sourceHeader {
			h[k] = v
		}
	}
	m.Header = h
	return m, nil
}
