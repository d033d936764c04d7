package backup_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/goclub/scoreboard/backup"
	"github.com/goclub/scoreboard/bus"
	"github.com/goclub/scoreboard/history"
	"github.com/goclub/scoreboard/internal/bustest"
)

// stored is a message as a stream holds it.
type stored struct {
	Seq     uint64
	Time    time.Time
	Subject string
	Header  string
	Data    string
}

// streamMsgs reads every message of stream with direct gets.
func streamMsgs(t *testing.T, js jetstream.JetStream, name string) ([]stored, *jetstream.StreamInfo) {
	t.Helper()
	ctx := context.Background()
	s, err := js.Stream(ctx, name)
	if err != nil {
		t.Fatalf("stream %s: %v", name, err)
	}
	info := s.CachedInfo()
	var out []stored
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			t.Fatalf("stream %s, message %d: %v", name, seq, err)
		}
		out = append(out, stored{m.Sequence, m.Time, m.Subject, fmt.Sprint(m.Header), string(m.Data)})
	}
	return out, info
}

// filled is a bus with a history stream and its bucket, holding units, results,
// a gap in the middle (a deleted message) and after the last (deleted too).
// repair is the subject the history takes a message on (the recorder's copy) and
// stores under the one given.
var repair = bus.Subjects{Prefix: "scoreboard"}.Repair

func filled(t *testing.T) (*bustest.Bus, jetstream.JetStream) {
	t.Helper()
	b := bustest.Start(t, bustest.Options{Off: true, JetStream: true})
	js, err := jetstream.New(b.Daemon())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	kv, err := history.Setup(ctx, js, history.Config{Prefix: "scoreboard", MaxAge: time.Hour, MaxBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	nc := b.Daemon()
	for i := 1; i <= 20; i++ {
		// The history takes only the recorder's copies, on the repair subjects.
		m := nats.NewMsg(repair("scoreboard.dump.goscore.hall"))
		m.Header.Set("Scoreboard-Seq", fmt.Sprint(i))
		m.Header.Set("Nats-Msg-Id", fmt.Sprintf("d.x.%d", i))
		m.Data = []byte(fmt.Sprintf("unit %d\n\x00binary\xff", i))
		if err := nc.PublishMsg(m); err != nil {
			t.Fatal(err)
		}
		if err := nc.Publish(repair("scoreboard.result.goscore.hall"), []byte(fmt.Sprintf(`{"seq":%d}`, i))); err != nil {
			t.Fatal(err)
		}
		if _, err := kv.Put(ctx, "hall", []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	bustest.Wait(t, "40 messages stored", func() (bool, string) {
		s, err := js.Stream(ctx, "SCOREBOARD")
		if err != nil {
			return false, err.Error()
		}
		return s.CachedInfo().State.Msgs == 40, fmt.Sprint(s.CachedInfo().State.Msgs)
	})
	s, _ := js.Stream(ctx, "SCOREBOARD")
	for _, seq := range []uint64{7, 40} {
		if err := s.DeleteMsg(ctx, seq); err != nil {
			t.Fatal(err)
		}
	}
	return b, js
}

// write backs up b's prefix into a file.
func write(t *testing.T, js jetstream.JetStream) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "backup.gz")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := backup.Write(context.Background(), js, backup.Options{Prefix: "scoreboard", Scoreboard: "test", Idle: 10 * time.Second}, f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return file
}

// A backup restored into a new state dir holds every message of every stream of
// the prefix as it was: sequence number, time, subject, headers, data, and the
// gaps (a stream's first and last sequence numbers, so it goes on from there).
func TestRoundTrip(t *testing.T) {
	_, js := filled(t)
	file := write(t, js)
	h, counts, err := backup.Check(file)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range h.Streams {
		names = append(names, s.Name)
	}
	// Every stream of the prefix (a later version's buckets too), the boards' before
	// the history.
	if b, s := slices.Index(names, "KV_SCOREBOARD_BOARDS"), slices.Index(names, "SCOREBOARD"); b < 0 || s < b {
		t.Fatalf("streams %v: want the boards' bucket, then the history", names)
	}
	dir := t.TempDir()
	if _, _, err := backup.Restore(file, dir, counts); err != nil {
		t.Fatal(err)
	}
	r := bustest.Start(t, bustest.Options{Off: true, JetStream: true, StoreDir: dir})
	rjs, err := jetstream.New(r.Daemon())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		want, winfo := streamMsgs(t, js, name)
		got, ginfo := streamMsgs(t, rjs, name)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: restored messages differ:\n got %v\nwant %v", name, got, want)
		}
		// An empty stream's first number is 0 when made, 1 when restored: either way
		// the next message is its last plus one.
		if g, w := ginfo.State, winfo.State; (g.FirstSeq != w.FirstSeq && w.Msgs > 0) || g.LastSeq != w.LastSeq || g.Msgs != w.Msgs || g.NumDeleted != w.NumDeleted {
			t.Errorf("%s: restored state first %d last %d msgs %d deleted %d, want %d %d %d %d", name,
				g.FirstSeq, g.LastSeq, g.Msgs, g.NumDeleted, w.FirstSeq, w.LastSeq, w.Msgs, w.NumDeleted)
		}
		if !ginfo.Created.Equal(winfo.Created) {
			t.Errorf("%s: created %v, want %v", name, ginfo.Created, winfo.Created)
		}
	}
	// The stream goes on after its last number, the deleted one included.
	if err := r.Daemon().Publish(repair("scoreboard.result.goscore.hall"), []byte(`{"seq":21}`)); err != nil {
		t.Fatal(err)
	}
	bustest.Wait(t, "the next message at 41", func() (bool, string) {
		_, info := streamMsgs(t, rjs, "SCOREBOARD")
		return info.State.LastSeq == 41 && info.State.Msgs == 39, fmt.Sprintf("last %d, %d messages", info.State.LastSeq, info.State.Msgs)
	})
}

// content is the file's content (uncompressed).
func content(t testing.TB, file string) []byte {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// gunzip is what a gzip file holds, read to its end as backup.Check reads it.
func gunzip(b []byte) ([]byte, error) {
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(r)
}

func gz(b []byte) []byte {
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	zw.Write(b)
	zw.Close()
	return out.Bytes()
}

// A bad file is refused by Check with an error that names the file, says where
// and what to do; none passes: cut short anywhere, a byte flipped anywhere (in the
// compressed file, or in its content under a good gzip: the SHA-256 catches it),
// another format version, something else entirely.
func TestBadFiles(t *testing.T) {
	_, js := filled(t)
	file := write(t, js)
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	plain := content(t, file)
	dir := t.TempDir()
	check := func(name string, b []byte, want ...string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		_, _, err := backup.Check(p)
		var be *backup.Error
		if !errors.As(err, &be) {
			t.Errorf("%s: Check = %v, want a backup.Error", name, err)
			return
		}
		for _, w := range append(want, p, "nothing was restored") {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not say %q", name, err, w)
			}
		}
	}
	for _, n := range []int{0, 5, 20, len(raw) / 2, len(raw) - 9, len(raw) - 1} {
		check(fmt.Sprintf("cut-%d", n), raw[:n], "cut short")
	}
	for _, n := range []int{len(plain) / 3, len(plain) / 2, len(plain) - 3} {
		check(fmt.Sprintf("content-cut-%d", n), gz(plain[:n]), "cut short")
	}
	flipped, unread := 0, 0
	for off := 10; off < len(raw); off += max(1, len(raw)/40) {
		b := bytes.Clone(raw)
		b[off] ^= 0x10
		// A flip of a bit deflate never reads (the padding of a stored block's
		// header byte, as gzip's end writes one) leaves the backup what it was:
		// it reads back whole, its CRC right, and nothing in it is damaged
		// (CI, ade504a: flip-1650 of 1663 bytes). Every other flip is refused.
		if got, err := gunzip(b); err == nil && bytes.Equal(got, plain) {
			unread++
			continue
		}
		check(fmt.Sprintf("flip-%d", off), b)
		flipped++
	}
	if flipped < 30 {
		t.Errorf("only %d of %d flips changed the backup (%d in bits gzip does not read)", flipped, flipped+unread, unread)
	}
	for _, off := range []int{len(plain) / 2, len(plain) - 20} {
		b := bytes.Clone(plain)
		b[off] ^= 0x01
		check(fmt.Sprintf("content-flip-%d", off), gz(b), "damaged")
	}
	v2 := bytes.Replace(plain, []byte(`"version":1`), []byte(`"version":2`), 1)
	check("version-2", gz(v2), "format version 2", "written by scoreboard test", "restore it with scoreboard test")
	check("not-gzip", []byte("hello, this is not a backup\n"), "not gzip", "give a file written by scoreboard backup")
	check("not-ours", gz([]byte("{}\n")), "not a scoreboard backup")
	check("after-end", gz(append(bytes.Clone(plain), "{}\n"...)), "after the end line")
	t.Logf("%d flips of %d bytes, each refused (%d more in bits gzip does not read)", flipped, len(raw), unread)
}

// FuzzRead: whatever a file holds, reading it ends in an error or io.EOF, never a
// panic, and a file read to its end has every count and sequence right.
func FuzzRead(f *testing.F) {
	h := `{"format":"scoreboard-backup","version":1,"scoreboard":"x","created":"2026-11-28T00:00:00Z","prefix":"scoreboard","streams":[{"name":"S","config":{"name":"S"},"first_seq":1,"last_seq":3}]}` + "\n"
	m := `{"s":0,"seq":2,"ts":1,"subj":"a","hdr":{"K":["v"]},"data":"eA=="}` + "\n"
	f.Add([]byte(h+m+`{"end":[{"msgs":1,"last_seq":2}],"sha256":"0"}`+"\n"), false)
	f.Add([]byte(h+m+m), false)
	f.Add([]byte(h), true)
	f.Add([]byte(`{"end":null}`), false)
	f.Fuzz(func(t *testing.T, b []byte, compressed bool) {
		in := b
		if !compressed {
			in = gz(b)
		}
		r, err := backup.NewReader("fuzz", bytes.NewReader(in))
		if err != nil {
			return
		}
		for {
			m, err := r.Next()
			if errors.Is(err, io.EOF) {
				for i, c := range r.Counts() {
					if s := r.Header.Streams[i]; c.Msgs > 0 && (c.LastSeq < s.FirstSeq || c.LastSeq > s.LastSeq) {
						t.Fatalf("stream %s: last %d outside %d to %d", s.Name, c.LastSeq, s.FirstSeq, s.LastSeq)
					}
				}
				return
			}
			if err != nil {
				var be *backup.Error
				if !errors.As(err, &be) {
					t.Fatalf("not a backup.Error: %v", err)
				}
				return
			}
			if m.Stream >= len(r.Header.Streams) {
				t.Fatalf("message of stream %d of %d", m.Stream, len(r.Header.Streams))
			}
		}
	})
}

// A backup taken while units keep coming is a consistent copy: the history holds,
// restored, exactly the messages the original held up to its cut; the bucket,
// read whole before the history's cut, each key's value (a copy that stopped at
// the bucket's cut lost the key whose value was replaced meanwhile: "0 messages
// to 74"), and none names a history message after the history's cut
// (history.Recovered finds nothing missing: it would report the board's message
// as dropped after the last readable).
func TestBackupUnderLoad(t *testing.T) {
	b := bustest.Start(t, bustest.Options{Off: true, JetStream: true})
	js, err := jetstream.New(b.Daemon())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	kv, err := history.Setup(ctx, js, history.Config{Prefix: "scoreboard", MaxAge: time.Hour, MaxBytes: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	hist, err := js.Stream(ctx, "SCOREBOARD")
	if err != nil {
		t.Fatal(err)
	}
	stop, done := make(chan struct{}), make(chan int)
	nc := b.Daemon()
	go func() {
		n := 0
		defer func() { done <- n }()
		for {
			select {
			case <-stop:
				return
			default:
			}
			n++
			// The history takes only the recorder's copies, on the repair subjects.
			if err := nc.Publish(repair("scoreboard.dump.goscore.hall"), fmt.Appendf(nil, "unit %d", n)); err != nil {
				return
			}
			if n%5 == 0 {
				// A board names the history's latest message, as the updater's do.
				if err := nc.Flush(); err != nil {
					return
				}
				info, err := hist.Info(ctx)
				if err != nil {
					return
				}
				if _, err := kv.Put(ctx, "hall", fmt.Appendf(nil, `{"stream_seq":%d}`, info.State.LastSeq)); err != nil {
					return
				}
			}
		}
	}()
	bustest.Wait(t, "units coming", func() (bool, string) {
		info, err := hist.Info(ctx)
		return err == nil && info.State.Msgs > 200, fmt.Sprint(err)
	})
	file := write(t, js)
	close(stop)
	sent := <-done
	h, counts, err := backup.Check(file)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, _, err := backup.Restore(file, dir, counts); err != nil {
		t.Fatal(err)
	}
	r := bustest.Start(t, bustest.Options{Off: true, JetStream: true, StoreDir: dir})
	rjs, err := jetstream.New(r.Daemon())
	if err != nil {
		t.Fatal(err)
	}
	if kept, dropped, err := history.Recovered(ctx, rjs, "scoreboard", nil); err != nil || dropped != "" {
		t.Errorf("the restored history: %d kept, %q, %v", kept, dropped, err)
	}
	for i, st := range h.Streams {
		got, _ := streamMsgs(t, rjs, st.Name)
		all, _ := streamMsgs(t, js, st.Name)
		t.Logf("%s: %d messages to %d in the backup, %d in the stream at the end", st.Name, counts[i].Msgs, st.LastSeq, len(all))
		if strings.HasPrefix(st.Name, "KV_") {
			// A bucket is copied as it is when the backup reads it: each key's value
			// then (its board, which Recovered found in the history); one never
			// written (the pairings', no round loaded) is restored empty.
			if len(all) == 0 && len(got) == 0 {
				continue
			}
			if len(got) != 1 || got[0].Seq > st.LastSeq {
				t.Errorf("%s: restored %v, want the one key's value up to %d", st.Name, got, st.LastSeq)
			}
			continue
		}
		var want []stored
		for _, m := range all {
			if m.Seq <= st.LastSeq {
				want = append(want, m)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: restored %d messages, the original held %d up to the cut %d", st.Name, len(got), len(want), st.LastSeq)
		}
	}
	t.Logf("%d units published", sent)
}
