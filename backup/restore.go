package backup

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/klauspost/compress/s2"
	"github.com/minio/highwayhash"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats-server/v2/server/archive"
	"github.com/nats-io/nats.go"

	"github.com/goclub/scoreboard/bus"
)

// Restore restores the backup at path into storeDir, a state dir the caller has
// checked is new and holds locked: nats-server's own restore (RestoreStreamV2)
// stores each message with its sequence number and time, and skips the numbers
// the backup does not hold, so the streams go on from their last number. The file
// must have passed Check, which gave counts; it is checked again as it is read.
func Restore(path, storeDir string, counts []Count) (Header, []Count, error) {
	ns, err := server.NewServer(&server.Options{
		ServerName: "scoreboard-restore", DontListen: true, NoSigs: true, NoLog: true,
		JetStream: true, StoreDir: storeDir, MaxPayload: bus.MaxPayload,
	})
	if err != nil {
		return Header{}, nil, fmt.Errorf("restore: nats-server: %w", err)
	}
	go ns.Start()
	h, counts, err := restoreAll(ns, path, counts)
	ns.Shutdown()
	ns.WaitForShutdown()
	if err != nil {
		return h, nil, err
	}
	for _, st := range h.Streams {
		if err := setCreated(storeDir, st); err != nil {
			return h, nil, err
		}
	}
	return h, counts, nil
}

// restoreAll restores the file's streams on ns.
func restoreAll(ns *server.Server, path string, counts []Count) (Header, []Count, error) {
	if !ns.ReadyForConnections(30 * time.Second) {
		return Header{}, nil, errors.New("restore: nats-server on the new state dir not ready after 30s")
	}
	r, f, err := Open(path)
	if err != nil {
		return Header{}, nil, err
	}
	defer f.Close()
	if len(counts) != len(r.Header.Streams) {
		return r.Header, nil, fmt.Errorf("restore %s: changed since it was checked", path)
	}
	acc := ns.GlobalAccount()
	var next *Message
	for i, st := range r.Header.Streams {
		if next, err = restoreStream(acc, r, i, st, counts[i].Msgs, next); err != nil {
			return r.Header, nil, err
		}
	}
	if next != nil {
		return r.Header, nil, fmt.Errorf("restore %s: a message of stream %d after the last stream", path, next.Stream)
	}
	if _, err := r.Next(); !errors.Is(err, io.EOF) {
		if err == nil {
			err = fmt.Errorf("restore %s: a message after the last stream's", path)
		}
		return r.Header, nil, err
	}
	return r.Header, r.Counts(), nil
}

// restoreStream restores stream i from r: first (if not nil) is its first
// message, read already. It returns the next stream's first message, if any.
func restoreStream(acc *server.Account, r *Reader, i int, st Stream, n uint64, first *Message) (*Message, error) {
	var cfg server.StreamConfig
	j, err := json.Marshal(st.Config)
	if err == nil {
		err = json.Unmarshal(j, &cfg)
	}
	if err != nil {
		return nil, fmt.Errorf("restore: stream %s: its config: %w", st.Name, err)
	}
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		_, err := acc.RestoreStreamV2(&cfg, pr)
		pr.CloseWithError(err)
		done <- err
	}()
	next, werr := writeArchive(pw, r, i, st, n, first)
	pw.CloseWithError(werr)
	err = <-done
	switch {
	case werr != nil:
		return nil, werr
	case err != nil:
		return nil, fmt.Errorf("restore: stream %s: nats-server: %w", st.Name, err)
	}
	return next, nil
}

// writeArchive writes stream i's messages as nats-server's backup archive (S2 of
// archive entries: the state, the n messages, the end sentinel).
func writeArchive(w io.Writer, r *Reader, i int, st Stream, n uint64, m *Message) (*Message, error) {
	enc := s2.NewWriter(w)
	tw := archive.NewWriter(enc)
	put := func(h *archive.Header, b ...[]byte) error {
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		for _, p := range b {
			if _, err := tw.Write(p); err != nil {
				return err
			}
		}
		return nil
	}
	state := server.StreamState{Msgs: n, FirstSeq: st.FirstSeq, LastSeq: st.LastSeq}
	sj, _ := json.Marshal(state)
	if err := put(&archive.Header{Name: "state.json", Timestamp: time.Now().UnixNano(), PayloadSize: int64(len(sj))}, sj); err != nil {
		return nil, fmt.Errorf("restore: stream %s: %w", st.Name, err)
	}
	for {
		if m == nil {
			var err error
			if m, err = r.Next(); errors.Is(err, io.EOF) {
				m = nil
				break
			} else if err != nil {
				return nil, err
			}
		}
		if m.Stream != i {
			break
		}
		hdr := encodeHeader(m.Header)
		h := &archive.Header{Name: m.Subject, Timestamp: m.Time, Sequence: m.Seq, HeaderSize: int64(len(hdr)), PayloadSize: int64(len(m.Data))}
		if err := put(h, hdr, m.Data); err != nil {
			return nil, fmt.Errorf("restore: stream %s, message %d: %w", st.Name, m.Seq, err)
		}
		m = nil
	}
	if err := put(&archive.Header{}); err != nil {
		return nil, fmt.Errorf("restore: stream %s: %w", st.Name, err)
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("restore: stream %s: %w", st.Name, err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("restore: stream %s: %w", st.Name, err)
	}
	return m, nil
}

// setCreated gives the restored stream st its creation time as the backup has it,
// in the store's meta file (nats-server restores a stream as made now, and has no
// way to say otherwise): its identity, which a league hub's source of it checks
// (a stream made anew is sourced from its start again), and the page's links'.
func setCreated(storeDir string, st Stream) error {
	if st.Created.IsZero() {
		return nil
	}
	dir := filepath.Join(storeDir, "jetstream", server.DEFAULT_GLOBAL_ACCOUNT, "streams", st.Name)
	meta := filepath.Join(dir, server.JetStreamMetaFile)
	b, err := os.ReadFile(meta)
	if err != nil {
		return fmt.Errorf("restore: stream %s: its creation time: %w", st.Name, err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("restore: stream %s: its creation time: %s: %w", st.Name, meta, err)
	}
	if m["created"], err = json.Marshal(st.Created.UTC()); err != nil {
		return err
	}
	if b, err = json.Marshal(m); err != nil {
		return err
	}
	// The meta file's checksum, as nats-server checks it: HighwayHash-64 keyed by
	// the SHA-256 of the stream's name.
	key := sha256.Sum256([]byte(st.Name))
	hh, err := highwayhash.New64(key[:])
	if err != nil {
		return err
	}
	hh.Write(b)
	if err := os.WriteFile(meta, b, 0o640); err != nil {
		return fmt.Errorf("restore: stream %s: its creation time: %w", st.Name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, server.JetStreamMetaFileSum), []byte(hex.EncodeToString(hh.Sum(nil))), 0o640); err != nil {
		return fmt.Errorf("restore: stream %s: its creation time: %w", st.Name, err)
	}
	return nil
}

// encodeHeader is h as NATS carries it (NATS/1.0, then a line per value, keys
// sorted); nil for none.
func encodeHeader(h nats.Header) []byte {
	if len(h) == 0 {
		return nil
	}
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b := []byte("NATS/1.0\r\n")
	for _, k := range keys {
		for _, v := range h[k] {
			b = append(append(append(append(b, k...), ": "...), v...), "\r\n"...)
		}
	}
	return append(b, "\r\n"...)
}
